/**
 * A Job's `delete`. A `destroy` calls nothing else, so the provider host loads only this and what it uses
 * (the connection, the client's request layer, one result schema, the masking of errors), not the rest of
 * the Job code and the scheduler's other schemas: about 10 ms less of a fresh host's first call.
 */
import { SchedulerRequester } from "../../clients/scheduler/base";
import { stopJob } from "../../clients/scheduler/stop";
import { isApiError } from "../../errors";
import { schedulerCore } from "../scheduler-core";
import { masked } from "./masking";
import { refOf } from "./ref";
import { storedMaskOf } from "./secrets";
import type { JobOutputs } from "./state";

/**
 * Stops (deregisters) the job, purged when `purgeOnDestroy` says so; a job the scheduler no longer has is
 * already gone. What it throws is masked with the secrets of the state it was given (its `secretMask`).
 */
export function deleteJob(id: string, props: JobOutputs): Promise<void> {
  return masked(storedMaskOf(props), async () => {
    const core = schedulerCore(props.connection);
    const ref = refOf(id, props);
    try {
      await stopJob(new SchedulerRequester(core), ref.jobId, {
        namespace: ref.namespace,
        region: ref.region,
        purge: props.purgeOnDestroy === true,
      });
    } catch (e) {
      if (isApiError(e, "not_found")) return;
      throw e;
    }
  });
}
