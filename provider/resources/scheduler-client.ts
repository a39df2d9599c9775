/** The scheduler client the Job and JobVersionTag providers share (see providerClient in ../config.ts). */
import { SchedulerClient } from "../clients/scheduler";
import { providerClient } from "../config";
import { settingsOf, type Connection } from "./connection";

/**
 * Returns the scheduler client of a resource's connection (one per distinct connection in this process);
 * without one, from stack config, then the environment.
 */
export function schedulerClient(connection?: Connection<"scheduler">): SchedulerClient {
  return providerClient(
    "scheduler",
    (o) => new SchedulerClient(o),
    connection === undefined ? undefined : settingsOf(connection),
  );
}
