/** The scheduler client the Job and JobVersionTag providers share (see providerClient in ../config.ts). */
import { SchedulerClient } from "../clients/scheduler";
import type { HttpCore } from "../http/core";
import type { Connection } from "./connection";
import { schedulerCore } from "./scheduler-core";

const clients = new WeakMap<HttpCore, SchedulerClient>();

/**
 * Returns the scheduler client of a resource's connection (one per distinct connection in this process, over
 * its one HTTP core, ./scheduler-core.ts); without one, from stack config, then the environment.
 */
export function schedulerClient(connection?: Connection<"scheduler">): SchedulerClient {
  const core = schedulerCore(connection);
  let client = clients.get(core);
  if (client === undefined) {
    client = new SchedulerClient(core);
    clients.set(core, client);
  }
  return client;
}
