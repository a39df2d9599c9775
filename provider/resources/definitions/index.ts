/** Every resource definition; `npm run generate` renders the SDK file and the reference page of each. */
import { authRoleDefinition } from "./auth-role";

export const definitions = [authRoleDefinition] as const;
