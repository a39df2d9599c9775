/**
 * Deployment writes: promote the canaries of a deployment (every group, or the named ones) and mark a
 * deployment failed. Reads of deployments live in records.ts.
 */
import { z } from "zod";
import { UsageError } from "../../errors";
import { encodePath } from "../../http/core";
import { bodyMetaShape } from "../../schemas/scheduler/fields";
import { requireId, type Result, type SchedulerRequester, type WriteOptions } from "./base";

/** Answer of a promote or fail: the evaluation it created and the deployment's new index. */
export const DeploymentUpdateResultSchema = z.looseObject({
  EvalID: z.string().nullish(),
  EvalCreateIndex: z.number().nullish(),
  DeploymentModifyIndex: z.number().nullish(),
  /** Fail only: the job version the server's auto_revert registered again. */
  RevertedJobVersion: z.number().nullish(),
  ...bodyMetaShape,
});
/** Answer of a promote or fail. */
export type DeploymentUpdateResult = z.infer<typeof DeploymentUpdateResultSchema>;

/** What to promote: every group with canaries, or the named groups only. */
export type PromoteRequest = { All: true } | { Groups: string[] };

/** Deployment writes, reached as `client.deployments`. */
export class Deployments {
  constructor(private readonly http: SchedulerRequester) {}

  /**
   * Promotes the canaries of a running deployment. The server refuses (500) while a promoted group has
   * fewer healthy canaries than it wants, and for a deployment that has ended.
   */
  async promote(
    deploymentId: string,
    req: PromoteRequest,
    opts: WriteOptions = {},
  ): Promise<Result<DeploymentUpdateResult>> {
    const op = "promote deployment";
    const id = requireId(op, "deploymentId", deploymentId);
    const groups = "Groups" in req ? req.Groups : undefined;
    if (groups !== undefined && (groups.length === 0 || groups.some((g) => typeof g !== "string" || g === ""))) {
      throw new UsageError(`${op}: Groups must name at least one task group (or send All: true).`);
    }
    const body = { DeploymentID: id, ...(groups !== undefined ? { Groups: groups } : { All: true }) };
    return this.http.write(
      {
        operation: op,
        method: "PUT",
        path: encodePath("/v1/deployment/promote", id),
        body,
        schema: DeploymentUpdateResultSchema,
        idempotent: false,
      },
      opts,
    );
  }

  /** Marks a running deployment failed; with auto_revert the server then registers the last stable version again. */
  async fail(deploymentId: string, opts: WriteOptions = {}): Promise<Result<DeploymentUpdateResult>> {
    const op = "fail deployment";
    const id = requireId(op, "deploymentId", deploymentId);
    return this.http.write(
      {
        operation: op,
        method: "PUT",
        path: encodePath("/v1/deployment/fail", id),
        body: { DeploymentID: id },
        schema: DeploymentUpdateResultSchema,
        idempotent: false,
      },
      opts,
    );
  }
}
