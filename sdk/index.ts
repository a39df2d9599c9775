/**
 * The program side: the resource classes and their argument types (generated from the registry into
 * ./generated), and the connections they take.
 */
export * from "./generated";
export {
  schedulerConnection,
  secretsConnection,
  type ConnectionArgs,
  type SchedulerConnection,
  type SecretsConnection,
} from "./connection";
