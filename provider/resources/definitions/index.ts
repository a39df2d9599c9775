/** Every resource definition; `npm run generate` renders the SDK file and the reference page of each. */
import { authConfigDefinition } from "./auth-config";
import { authMountDefinition } from "./auth-mount";
import { authRoleDefinition } from "./auth-role";

export const definitions = [authMountDefinition, authConfigDefinition, authRoleDefinition] as const;
