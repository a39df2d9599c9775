import type { ServiceModule } from "../core";

/** Options of the scheduler service module (placeholder until the service is written). */
export interface SchedulerServiceOptions {
  readonly [key: string]: unknown;
}

/** Creates the scheduler service module. Placeholder: no routes yet; the service owner replaces this file. */
export function createSchedulerService(_options: SchedulerServiceOptions = {}): ServiceModule {
  return { name: "scheduler", routes: () => undefined };
}
