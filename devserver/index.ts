import { startServiceHost, type DevServer, type ServiceHostOptions } from "./core";
import { createSchedulerService, type SchedulerControl, type SchedulerServiceOptions } from "./scheduler";
import { createSecretsService, type SecretsServiceOptions } from "./secrets";

export * from "./core";
export {
  createSchedulerService,
  FAIL_DEPLOYMENT_META,
  type ActionRunner,
  type GcOptions,
  type Node,
  type NodePoolOptions,
  type SchedulerControl,
  type SchedulerService,
  type SchedulerServiceOptions,
} from "./scheduler";
export {
  createSecretsService,
  secretsControls,
  type CloudControls,
  type FakeInstance,
  type FakeInstanceInput,
  type MetadataFaultHandle,
  type MetadataFaultSpec,
  type MetadataLogEntry,
  type MintOptions,
  type SecretsControls,
  type SecretsServiceOptions,
  type SignOptions,
} from "./secrets";

/** Options of `startDevServer`: the core options plus per-module options used when `services` is omitted. */
export interface DevServerOptions extends ServiceHostOptions {
  readonly secretsService?: SecretsServiceOptions;
  readonly schedulerService?: SchedulerServiceOptions;
}

/** A devserver started with the default modules: the core's controls plus the scheduler's simulation controls. */
export interface StartedDevServer extends DevServer {
  /** Steers the scheduler simulation (deployment timing and failures, node pool); undefined with custom `services`. */
  readonly schedulerControl: SchedulerControl | undefined;
}

/**
 * Starts the devserver with both service modules (or the given `services`); resolves to the base URLs,
 * root tokens, test controls and `close()`. Ports default to 0 (any free port). The secrets service's cloud
 * controls are reached with `secretsControls(server)`.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<StartedDevServer> {
  let services = options.services;
  let schedulerControl: SchedulerControl | undefined;
  if (services === undefined) {
    const scheduler = createSchedulerService(options.schedulerService);
    schedulerControl = scheduler.control;
    services = [createSecretsService(options.secretsService), scheduler];
  }
  const server = await startServiceHost({ ...options, services });
  return Object.assign(server, { schedulerControl });
}
