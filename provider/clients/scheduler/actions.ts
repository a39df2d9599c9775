/** Job actions: list the predefined actions of a job and run one over the action WebSocket. */
import { z } from "zod";
import { encodePath } from "../../http/core";
import { JobActionSchema, type JobAction } from "../../schemas/scheduler";
import { openActionSession, type ActionOutput, type ActionSession, type RunActionOptions } from "./action-ws";
import { requireId, type ReadOptions, type Result, type SchedulerRequester } from "./base";

const ActionListSchema = z
  .array(JobActionSchema)
  .nullable()
  .transform((v) => v ?? []);

/** Action operations, reached as `client.actions`. */
export class JobActions {
  constructor(private readonly http: SchedulerRequester) {}

  /** Lists the predefined actions of a job's tasks. */
  async list(jobId: string, opts: ReadOptions = {}): Promise<Result<JobAction[]>> {
    const id = requireId("list job actions", "jobId", jobId);
    return this.http.read(
      { operation: "list job actions", path: encodePath("/v1/job", id, "actions"), schema: ActionListSchema },
      opts,
    );
  }

  /** Starts an action; resolves to a session whose events are its output frames. */
  async open(jobId: string, opts: RunActionOptions): Promise<ActionSession> {
    return openActionSession(this.http.core, jobId, opts);
  }

  /** Runs an action to the end; resolves to its output and exit result. */
  async run(jobId: string, opts: RunActionOptions): Promise<ActionOutput> {
    const session = await this.open(jobId, opts);
    return session.collect();
  }
}
