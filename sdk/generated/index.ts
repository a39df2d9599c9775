// Generated from the registry (provider/resources/definitions/index.ts) by `npm run generate`: do not edit.
/** The resource classes and the types of their arguments. */
export { AuthMount, type AuthMountArgs, type AuthMountTuneArgs } from "./auth-mount";
export { AuthConfig, type AuthConfigArgs } from "./auth-config";
export { AuthRole, type AuthRoleArgs } from "./auth-role";
export { JobVersionTag, type JobVersionTagArgs } from "./job-version-tag";
export { Job, type JobArgs, type JobDefinition } from "./job";
