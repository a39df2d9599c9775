/**
 * The HTTP core of a resource's scheduler connection: one per distinct connection in this process, shared by
 * every request to it (one pool, and one count of writes, which the job listing's snapshot relies on). A
 * module of its own so that a Job's `delete` reaches it without loading the client's every area.
 */
import { providerClient } from "../config";
import { HttpCore } from "../http/core";
import { settingsOf, type Connection } from "./connection";

/** Returns the HTTP core of a connection; without one, from stack config, then the environment. */
export function schedulerCore(connection?: Connection<"scheduler">): HttpCore {
  return providerClient(
    "scheduler",
    (o) => new HttpCore("scheduler", o),
    connection === undefined ? undefined : settingsOf(connection),
  );
}
