import { startServiceHost, type DevServer, type ServiceHostOptions } from "./core";
import { createSchedulerService, type SchedulerServiceOptions } from "./scheduler";
import { createSecretsService, type SecretsServiceOptions } from "./secrets";

export * from "./core";
export { createSchedulerService, type SchedulerServiceOptions } from "./scheduler";
export {
  createSecretsService,
  secretsControls,
  type CloudControls,
  type FakeInstance,
  type FakeInstanceInput,
  type MetadataFaultSpec,
  type SecretsControls,
  type SecretsServiceOptions,
} from "./secrets";

/** Options of `startDevServer`: the core options plus per-module options used when `services` is omitted. */
export interface DevServerOptions extends ServiceHostOptions {
  readonly secretsService?: SecretsServiceOptions;
  readonly schedulerService?: SchedulerServiceOptions;
}

/**
 * Starts the devserver with both service modules (or the given `services`); resolves to the base URLs,
 * root tokens, test controls and `close()`. Ports default to 0 (any free port).
 */
export function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const services = options.services ?? [
    createSecretsService(options.secretsService),
    createSchedulerService(options.schedulerService),
  ];
  return startServiceHost({ ...options, services });
}
