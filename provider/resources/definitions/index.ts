/** Every resource definition; `npm run generate` renders the SDK file and the reference page of each. */
import { authConfigDefinition } from "./auth-config";
import { authMountDefinition } from "./auth-mount";
import { authRoleDefinition } from "./auth-role";
import { jobDefinition } from "./job";
import { jobVersionTagDefinition } from "./job-version-tag";

export const definitions = [
  authMountDefinition,
  authConfigDefinition,
  authRoleDefinition,
  jobVersionTagDefinition,
  jobDefinition,
] as const;
