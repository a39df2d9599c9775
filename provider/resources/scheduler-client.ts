/** The scheduler client the Job and JobVersionTag providers share (see providerClient in ../config.ts). */
import { SchedulerClient } from "../clients/scheduler";
import { providerClient } from "../config";

/** Returns the scheduler client from stack config, then the environment; never from inputs. */
export function schedulerClient(): SchedulerClient {
  return providerClient("scheduler", (o) => new SchedulerClient(o));
}
