/**
 * Canary promotion (input `promotion`): what to do with a running deployment whose canaries wait for
 * promotion. "manual" leaves that to a person (the `up` ends and says so); "auto" promotes once every
 * canary is healthy; `{ soak, groups? }` promotes once the canaries (of the named groups) have stayed
 * healthy and running for the soak. A canary that fails during the soak fails the deployment, so the
 * update fails and goes through `onDeploymentFailure` like any failed deployment.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import type { Deployment, DeploymentGroupState } from "../../schemas/scheduler";
import type { PromotionPolicy } from "./inputs";
import { placeOf, type JobAt, type JobRef } from "./state";

/** Longest wait of one read during a soak: how often the soak's time left is shown. */
const SOAK_TICK_MS = 30_000;

/** What the watch of a deployment does next. */
export type CanaryStep =
  /** Read the deployment again (after at most `waitMs`, when given). */
  | { kind: "wait"; waitMs?: number }
  /** Stop watching: the rest is a person's decision. */
  | { kind: "done"; note: string }
  /** A canary failed: the deployment was marked failed (the deployment as read after that). */
  | { kind: "fail"; reason: string; deployment?: Deployment };

/** Whether all the canaries a group wants are placed and healthy, and none of its allocations is unhealthy. */
export function canariesHealthy(g: DeploymentGroupState): boolean {
  const want = g.DesiredCanaries ?? 0;
  return (g.UnhealthyAllocs ?? 0) === 0 && (g.HealthyAllocs ?? 0) >= want && (g.PlacedCanaries?.length ?? 0) >= want;
}

/** The groups of a deployment whose canaries are not promoted yet. */
export function unpromotedCanaryGroups(d: Deployment): [string, DeploymentGroupState][] {
  return Object.entries(d.TaskGroups ?? {})
    .filter(([, g]) => (g.DesiredCanaries ?? 0) > 0 && g.Promoted !== true)
    .sort(([a], [b]) => a.localeCompare(b));
}

/** The note of an `up` that ends with canaries waiting for manual promotion. */
export function manualPromotionNote(d: Deployment, groups: readonly string[], why: string): string {
  const id = d.ID ?? "";
  return (
    `version ${d.JobVersion ?? "?"} is deployed as canaries only: deployment ${id} is running and waits for manual promotion of ` +
    `${groups.map((g) => `"${g}"`).join(", ")} (${why}). \`pulumi up\` does not wait for that: promote with ` +
    `\`nomad deployment promote ${id}\` (or PUT /v1/deployment/promote/${id}), or fail it with \`nomad deployment fail ${id}\``
  );
}

/** Promotes the canaries of one deployment by the policy; one per watched rollout. */
export class CanaryPromoter {
  private healthySince: number | undefined;
  private readonly promoted: string[] = [];

  private readonly client: SchedulerClient;
  private readonly ref: JobRef;

  constructor(
    at: JobAt,
    private readonly policy: Extract<PromotionPolicy, { mode: "auto" }>,
    private readonly now: () => number = Date.now,
  ) {
    this.client = at.client;
    this.ref = at.ref;
  }

  /** Milliseconds left of a running soak (undefined when no soak is running). */
  soakLeftMs(): number | undefined {
    if (this.policy.soakMs === 0 || this.healthySince === undefined) return undefined;
    return Math.max(0, this.healthySince + this.policy.soakMs - this.now());
  }

  /** What the soak had reached, for a timeout message ("" when no soak was running). */
  progress(): string {
    if (this.policy.soakMs === 0 || this.healthySince === undefined) return "";
    const seconds = Math.floor((this.now() - this.healthySince) / 1000);
    return `the canaries had been healthy for ${seconds}s of the ${Math.round(this.policy.soakMs / 1000)}s soak`;
  }

  /** Decides on a read of a running deployment that has canaries waiting for promotion. */
  async step(d: Deployment): Promise<CanaryStep> {
    const waiting = unpromotedCanaryGroups(d);
    const wanted = this.policy.groups;
    const targets = waiting.filter(([name]) => wanted === undefined || wanted.includes(name));
    if (targets.length === 0) {
      // The groups left to a person: the `up` ends once their canaries are healthy, as with "manual".
      if (waiting.length === 0 || !waiting.every(([, g]) => canariesHealthy(g))) return { kind: "wait" };
      const done = this.promoted.length > 0 ? `promoted ${this.promoted.map((g) => `"${g}"`).join(", ")}; ` : "";
      return {
        kind: "done",
        note: `${done}${manualPromotionNote(
          d,
          waiting.map(([n]) => n),
          "not named in promotion.groups",
        )}`,
      };
    }
    if (!targets.every(([, g]) => canariesHealthy(g))) {
      // Not healthy yet, or unhealthy: the server fails the deployment by its own deadlines.
      this.healthySince = undefined;
      return { kind: "wait" };
    }
    if (this.policy.soakMs > 0) {
      this.healthySince ??= this.now();
      const left = this.healthySince + this.policy.soakMs - this.now();
      // Read again by the soak's end at the latest, and every SOAK_TICK_MS so its progress line moves on.
      if (left > 0) return { kind: "wait", waitMs: Math.min(left, SOAK_TICK_MS) };
      const broken = await this.failedCanaries(
        d,
        targets.map(([n]) => n),
      );
      if (broken !== "") {
        const reason = `canaries failed during the ${Math.round(this.policy.soakMs / 1000)}s soak: ${broken}`;
        return { kind: "fail", reason, deployment: await this.markFailed(d) };
      }
    }
    const names = targets.map(([n]) => n);
    const all = wanted === undefined;
    await this.client.deployments.promote(d.ID ?? "", all ? { All: true } : { Groups: names }, placeOf(this.ref));
    this.promoted.push(...names);
    return { kind: "wait" };
  }

  /** Lists the canaries of the groups that are no longer running ("" when all run). */
  private async failedCanaries(d: Deployment, groups: readonly string[]): Promise<string> {
    const { value } = await this.client.records.allocations(this.ref.jobId, placeOf(this.ref));
    const bad = value.filter(
      (a) =>
        a.DeploymentID === d.ID &&
        groups.includes(a.TaskGroup ?? "") &&
        (a.DeploymentStatus?.Healthy === false || ["failed", "lost"].includes(a.ClientStatus ?? "")),
    );
    return bad
      .map(
        (a) => `group "${a.TaskGroup ?? ""}" allocation ${(a.ID ?? "").slice(0, 8)} is ${a.ClientStatus ?? "unknown"}`,
      )
      .sort()
      .join(", ");
  }

  /** Marks the deployment failed (the server's auto_revert then applies) and reads it back. */
  private async markFailed(d: Deployment): Promise<Deployment | undefined> {
    const opts = placeOf(this.ref);
    await this.client.deployments.fail(d.ID ?? "", opts);
    const { value } = await this.client.records.deployments(this.ref.jobId, opts);
    return value.find((x) => x.ID === d.ID);
  }
}
