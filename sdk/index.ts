/**
 * The program side: the five resource classes and their argument types, and the connections they take.
 */
export { AuthMount, type AuthMountArgs, type AuthMountTuneArgs } from "./auth-mount";
export { AuthConfig, type AuthConfigArgs } from "./auth-config";
export { AuthRole, type AuthRoleArgs } from "./auth-role";
export { Job, type JobArgs, type JobDefinition } from "./job";
export { JobVersionTag, type JobVersionTagArgs } from "./job-version-tag";
export {
  schedulerConnection,
  secretsConnection,
  type ConnectionArgs,
  type SchedulerConnection,
  type SecretsConnection,
} from "./connection";
