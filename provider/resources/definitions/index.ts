/** Every resource definition; `npm run generate` renders the SDK file and the reference page of each. */
import { authRoleDefinition } from "./auth-role";
import { jobDefinition } from "./job";
import { jobVersionTagDefinition } from "./job-version-tag";

export const definitions = [authRoleDefinition, jobVersionTagDefinition, jobDefinition] as const;
