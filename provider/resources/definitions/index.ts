/** Every resource definition; `npm run generate` renders the SDK file and the reference page of each. */
import { authMountDefinition } from "./auth-mount";
import { authRoleDefinition } from "./auth-role";

export const definitions = [authMountDefinition, authRoleDefinition] as const;
