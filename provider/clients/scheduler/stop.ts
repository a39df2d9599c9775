/**
 * Stopping (deregistering) a job, on its own: a `destroy` of Jobs sends nothing else, so it loads this, the
 * request layer and the one result schema, not the job API's other schemas.
 */
import { encodePath } from "../../http/core";
import { WriteResultSchema, type WriteResult } from "../../schemas/scheduler/common";
import { requireId, type Result, type SchedulerRequester } from "./base";
import type { StopJobOptions } from "./job-requests";

/** Stops (deregisters) a job; with `purge` it is deleted at once. Stopping a missing job is not an error on the real scheduler. */
export function stopJob(
  http: SchedulerRequester,
  jobId: string,
  opts: StopJobOptions = {},
): Promise<Result<WriteResult>> {
  const id = requireId("stop job", "jobId", jobId);
  const query = {
    purge: opts.purge ? true : undefined,
    global: opts.global ? true : undefined,
    eval_priority: opts.evalPriority || undefined,
    no_shutdown_delay: opts.noShutdownDelay ? true : undefined,
  };
  return http.write(
    {
      operation: "stop job",
      method: "DELETE",
      path: encodePath("/v1/job", id),
      query,
      schema: WriteResultSchema,
      idempotent: true,
    },
    opts,
  );
}
