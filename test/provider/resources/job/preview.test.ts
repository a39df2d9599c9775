import { describe, expect, it } from "vitest";
import {
  autoRevertTarget,
  changedOutsideMessage,
  formatRolloutFailure,
} from "../../../../provider/resources/job/messages";
import { formatPlan, summarizeFailedPlacements } from "../../../../provider/resources/job/text";
import type { PlanResponse } from "../../../../provider/schemas/scheduler";

const ctx = { jobId: "web", namespace: "default" };

describe("formatPlan", () => {
  it("shows per group placements, updates, stops and canaries with the field changes", () => {
    const plan: PlanResponse = {
      JobModifyIndex: 12,
      Diff: {
        Type: "Edited",
        ID: "web",
        Fields: [{ Type: "Edited", Name: "Priority", Old: "50", New: "60", Annotations: null }],
        Objects: null,
        TaskGroups: [
          {
            Type: "Edited",
            Name: "api",
            Fields: [{ Type: "Edited", Name: "Count", Old: "2", New: "3", Annotations: null }],
            Objects: null,
            Tasks: [
              {
                Type: "Edited",
                Name: "server",
                Annotations: ["forces create/destroy update"],
                Fields: null,
                Objects: [
                  {
                    Type: "Edited",
                    Name: "Config",
                    Fields: [{ Type: "Edited", Name: "image", Old: "nginx:1.25", New: "nginx:1.26" }],
                  },
                ],
              },
              { Type: "None", Name: "sidecar" },
            ],
          },
          { Type: "Deleted", Name: "old", Fields: [{ Type: "Deleted", Name: "Count", Old: "1", New: "" }] },
        ],
      },
      Annotations: {
        DesiredTGUpdates: {
          api: { Place: 1, DestructiveUpdate: 2, Canary: 1, Ignore: 0 },
          old: { Stop: 1 },
          cache: { InPlaceUpdate: 3, Ignore: 1 },
        },
      },
      Warnings: 'Group "api" has warnings\nsecond warning\n',
    };
    expect(formatPlan(plan, { ...ctx, stateJobModifyIndex: 12 })).toBe(
      [
        'Scheduler plan for job "web" in namespace "default": job changed',
        '  ~ Priority: "50" => "60"',
        '  ~ Group "api" (Edited): 1 to place, 2 destructive updates, 1 canary',
        '      ~ Count: "2" => "3"',
        '      ~ Task "server" (Edited) [forces create/destroy update]',
        '          ~ Config.image: "nginx:1.25" => "nginx:1.26"',
        '  - Group "old" (Deleted): 1 to stop',
        '      - Count: "1"',
        '    Group "cache": 3 in-place updates, 1 unchanged',
        "  Warnings:",
        '    ! Group "api" has warnings',
        "    ! second warning",
        "",
      ].join("\n"),
    );
  });

  it("shows failed placements with the exhausted dimension, and a changed modify index", () => {
    const plan: PlanResponse = {
      JobModifyIndex: 20,
      Diff: {
        Type: "Added",
        ID: "web",
        TaskGroups: [{ Type: "Added", Name: "api", Fields: [{ Type: "Added", Name: "Count", Old: "", New: "9" }] }],
      },
      Annotations: { DesiredTGUpdates: { api: { Place: 9 } } },
      FailedTGAllocs: {
        api: {
          CoalescedFailures: 6,
          NodesEvaluated: 3,
          NodesFiltered: 0,
          NodesInPool: 3,
          NodesExhausted: 3,
          DimensionExhausted: { memory: 3 },
          ConstraintFiltered: null,
        },
      },
      CreatedEvals: [{ ID: "e2", Status: "blocked" }],
    };
    expect(formatPlan(plan, { ...ctx, stateJobModifyIndex: 14 })).toBe(
      [
        'Scheduler plan for job "web" in namespace "default": new job',
        '  + Group "api" (Added): 9 to place',
        '      + Count: "9"',
        "      ! Failed placement: 7 allocations could not be placed",
        "        - memory exhausted on 3 nodes",
        "        - nodes: 3 in pool, 3 evaluated, 0 filtered, 3 exhausted",
        "  The scheduler would create 1 blocked evaluation waiting for resources.",
        "  ! The job was changed outside Pulumi: its JobModifyIndex is 20, state has 14. The update will be refused until you run `pulumi refresh`.",
        "",
      ].join("\n"),
    );
  });

  it("lists every blocking constraint, exhausted dimension, node class, empty datacenter and quota of a group", () => {
    const plan: PlanResponse = {
      Diff: { Type: "Added", ID: "web", TaskGroups: [{ Type: "Added", Name: "api" }] },
      Annotations: { DesiredTGUpdates: { api: { Place: 2 } } },
      FailedTGAllocs: {
        api: {
          CoalescedFailures: 1,
          NodesEvaluated: 5,
          NodesFiltered: 3,
          NodesInPool: 6,
          NodesExhausted: 2,
          NodesAvailable: { dc1: 5, dc2: 0 },
          ConstraintFiltered: { "${attr.kernel.name} = windows": 2, "${meta.rack} = r1": 1 },
          ClassFiltered: { gpu: 1 },
          DimensionExhausted: { cpu: 1, memory: 1 },
          ClassExhausted: { large: 2 },
          QuotaExhausted: ["cpu exhausted (2000 needed > 1500 limit)"],
        },
      },
    };
    expect(formatPlan(plan, ctx)).toBe(
      [
        'Scheduler plan for job "web" in namespace "default": new job',
        '  + Group "api" (Added): 2 to place',
        "      ! Failed placement: 2 allocations could not be placed",
        '        - no nodes are available in datacenter "dc2"',
        "        - cpu exhausted on 1 node",
        "        - memory exhausted on 1 node",
        '        - node class "large" exhausted on 2 nodes',
        "        - constraint ${attr.kernel.name} = windows filtered 2 nodes",
        "        - constraint ${meta.rack} = r1 filtered 1 node",
        '        - node class "gpu" filtered 1 node',
        "        - quota exhausted: cpu exhausted (2000 needed > 1500 limit)",
        "        - nodes: 6 in pool, 5 evaluated, 3 filtered, 2 exhausted",
        "",
      ].join("\n"),
    );
    expect(formatPlan({ FailedTGAllocs: { api: { NodesEvaluated: 0, NodesInPool: 0 } } }, ctx)).toContain(
      "        - no nodes were eligible for evaluation\n",
    );
    const classed = {
      api: {
        NodesEvaluated: 3,
        ConstraintFiltered: { "${attr.kernel.name} = windows": 1, "computed class ineligible": 2 },
      },
    };
    expect(summarizeFailedPlacements(classed)).toBe(
      'group "api": 1 allocation could not be placed (constraint ${attr.kernel.name} = windows filtered 1 node; 2 more nodes of the same node class skipped (computed class ineligible))',
    );
    // Alone, as Nomad 1.6.5 reports a job whose only blocker is a constraint: no constraint is named, and
    // the text says what the server said rather than "more nodes ... skipped".
    const classOnly = {
      api: { NodesEvaluated: 1, NodesFiltered: 1, ConstraintFiltered: { "computed class ineligible": 1 } },
    };
    expect(summarizeFailedPlacements(classOnly)).toBe(
      'group "api": 1 allocation could not be placed (1 node filtered as "computed class ineligible", the server names no constraint)',
    );
    expect(summarizeFailedPlacements(plan.FailedTGAllocs)).toBe(
      'group "api": 2 allocations could not be placed (no nodes are available in datacenter "dc2"; cpu exhausted on 1 node; memory exhausted on 1 node; ' +
        'node class "large" exhausted on 2 nodes; constraint ${attr.kernel.name} = windows filtered 2 nodes; constraint ${meta.rack} = r1 filtered 1 node; ' +
        'node class "gpu" filtered 1 node; quota exhausted: cpu exhausted (2000 needed > 1500 limit))',
    );
  });

  it("says no changes for a None diff and shows the next periodic launch", () => {
    const text = formatPlan({ Diff: { Type: "None", ID: "web" }, NextPeriodicLaunch: "2030-01-01T00:00:00Z" }, ctx);
    expect(text).toBe(
      'Scheduler plan for job "web" in namespace "default": no changes\n  Next periodic launch: 2030-01-01T00:00:00Z\n',
    );
    // Go's zero time means "no launch".
    expect(formatPlan({ NextPeriodicLaunch: "0001-01-01T00:00:00Z" }, ctx)).not.toContain("periodic");
  });

  it("describes updates in words", () => {
    // The words of one group's counts, as its line in the plan text shows them.
    const describeUpdates = (counts: Record<string, number> | undefined): string | undefined => {
      const plan: PlanResponse = {
        Diff: { Type: "Edited", ID: "web", TaskGroups: [{ Type: "None", Name: "g" }] },
        ...(counts !== undefined ? { Annotations: { DesiredTGUpdates: { g: counts } } } : {}),
      };
      const line = formatPlan(plan, ctx)
        .split("\n")
        .find((l) => l.startsWith('    Group "g": '));
      return line?.slice('    Group "g": '.length);
    };
    expect(describeUpdates(undefined)).toBe("no allocation changes reported");
    expect(describeUpdates({ Ignore: 0 })).toBe("no allocation changes");
    expect(describeUpdates({ Place: 1, Stop: 2, Migrate: 1, InPlaceUpdate: 1 })).toBe(
      "1 to place, 1 in-place update, 2 to stop, 1 to migrate",
    );
  });

  it("summarizes failed placements on one line", () => {
    expect(summarizeFailedPlacements({ web: { CoalescedFailures: 1, DimensionExhausted: { cpu: 2 } }, api: {} })).toBe(
      'group "api": 1 allocation could not be placed; group "web": 2 allocations could not be placed (cpu exhausted on 2 nodes)',
    );
  });
});

describe("formatRolloutFailure", () => {
  const groups = {
    api: { DesiredTotal: 3, HealthyAllocs: 1, UnhealthyAllocs: 2, PlacedAllocs: 3 },
    ok: { DesiredTotal: 1, HealthyAllocs: 1 },
  };

  it("names the deployment, its description, the failed groups, the Pulumi revert and the running version", () => {
    const text = formatRolloutFailure({
      jobId: "web",
      namespace: "default",
      failedVersion: 4,
      deploymentId: "d-1",
      deploymentStatus: "failed",
      statusDescription: "Failed due to unhealthy allocations",
      groups,
      rollback: { kind: "pulumi", toVersion: 3, newVersion: 5, deploymentId: "d-2", deploymentStatus: "successful" },
      runningVersion: 5,
    });
    expect(text).toBe(
      'Deployment d-1 of job "web" in namespace "default" version 4 failed: Failed due to unhealthy allocations. ' +
        'Failed groups: "api" (2 unhealthy, 1 healthy of 3 desired, 3 placed allocations). ' +
        "Pulumi reverted the job to version 3 (now registered as version 5); revert deployment d-2 is successful. " +
        "Version now running: 5. State records what the scheduler runs now, so the next preview shows the change again.",
    );
  });

  it("names the server's auto_revert", () => {
    const text = formatRolloutFailure({
      jobId: "web",
      namespace: "default",
      deploymentId: "d-1",
      deploymentStatus: "failed",
      statusDescription: "Failed due to unhealthy allocations - rolling back to job version 2",
      rollback: { kind: "auto", toVersion: 2, newVersion: 4 },
      runningVersion: 4,
    });
    expect(text).toContain(
      "The scheduler's auto_revert rolled the job back to version 2 (now registered as version 4).",
    );
    expect(text).toContain("rolling back to job version 2.");
  });

  it("explains a refused revert, a placement failure and a timeout", () => {
    expect(
      formatRolloutFailure({
        jobId: "j",
        namespace: "n",
        rollback: { kind: "refused", toVersion: 1, reason: "Current job has version 3; enforcing version 2" },
      }),
    ).toContain("Pulumi did not revert to version 1: Current job has version 3; enforcing version 2.");
    expect(
      formatRolloutFailure({
        jobId: "j",
        namespace: "n",
        evalId: "e1",
        placementFailure: 'group "g": 1 allocation could not be placed',
        rollback: { kind: "none", reason: "fail-mode" },
      }),
    ).toBe(
      'The scheduler could not place job "j" in namespace "n" (evaluation e1): group "g": 1 allocation could not be placed. ' +
        'The job was left on the failed version (onDeploymentFailure is "fail"). State records what the scheduler runs now, so the next preview shows the change again.',
    );
    expect(
      formatRolloutFailure({
        jobId: "j",
        namespace: "n",
        deploymentId: "d",
        deploymentStatus: "running",
        timedOutAfterMs: 90_000,
        rollback: { kind: "none", reason: "timeout" },
      }),
    ).toContain('Timed out after 90s waiting for deployment d of job "j" in namespace "n" (status running).');
  });

  it("reports what was still in progress at a timeout, not failed groups", () => {
    const running = {
      web: { DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1, UnhealthyAllocs: 0 },
      done: { DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0 },
      canary: {
        DesiredTotal: 2,
        DesiredCanaries: 1,
        PlacedCanaries: ["a1"],
        PlacedAllocs: 1,
        HealthyAllocs: 2,
        Promoted: false,
      },
    };
    const text = formatRolloutFailure({
      jobId: "j",
      namespace: "n",
      deploymentId: "d",
      deploymentStatus: "running",
      groups: running,
      timedOutAfterMs: 60_000,
      rollback: { kind: "none", reason: "timeout" },
    });
    expect(text).not.toContain("Failed groups");
    expect(text).toContain(
      'Still in progress: "canary" (2 of 2 healthy, 1 placed allocation, 1 of 1 canaries placed, not promoted), "web" (1 of 3 healthy, 2 placed allocations).',
    );
    const healthy = formatRolloutFailure({
      jobId: "j",
      namespace: "n",
      deploymentId: "d",
      deploymentStatus: "running",
      groups: { g: { DesiredTotal: 1, HealthyAllocs: 1 } },
      timedOutAfterMs: 1000,
      rollback: { kind: "none", reason: "timeout" },
    });
    expect(healthy).toContain(
      "Every group had all its allocations healthy; the deployment had not been marked successful yet.",
    );
    const noDeployment = formatRolloutFailure({
      jobId: "j",
      namespace: "n",
      evalId: "e1",
      evaluationStatus: "pending",
      timedOutAfterMs: 1000,
      rollback: { kind: "none", reason: "timeout" },
    });
    expect(noDeployment).toContain("waiting for evaluation e1");
    expect(noDeployment).toContain("No deployment had started yet (the evaluation was pending).");
  });

  it("says when the scheduler declined to roll back", () => {
    expect(
      formatRolloutFailure({
        jobId: "j",
        namespace: "n",
        deploymentId: "d",
        deploymentStatus: "failed",
        statusDescription: "Failed due to unhealthy allocations - no stable job version to auto revert to",
        rollback: { kind: "none", reason: "server-declined", detail: "no stable job version to auto revert to" },
        runningVersion: 0,
      }),
    ).toContain("The scheduler did not roll back (no stable job version to auto revert to). Version now running: 0.");
  });

  it("lists only groups that did not become healthy", () => {
    const failure = (g: typeof groups | null): string =>
      formatRolloutFailure({
        jobId: "j",
        namespace: "n",
        deploymentId: "d",
        deploymentStatus: "failed",
        groups: g,
        rollback: { kind: "none", reason: "fail-mode" },
      });
    expect(failure(groups)).toContain(
      ' Failed groups: "api" (2 unhealthy, 1 healthy of 3 desired, 3 placed allocations). The job was left',
    );
    expect(failure(null)).not.toContain("Failed groups");
    expect(failure(null)).toContain(": no description. The job was left");
  });
});

describe("autoRevertTarget", () => {
  it.each([
    { d: "Failed due to unhealthy allocations - rolling back to job version 7", v: 7 },
    {
      d: "Failed due to progress deadline - not rolling back to stable job version 3 as current job has same specification",
      v: undefined,
    },
    { d: "Failed due to unhealthy allocations - no stable job version to auto revert to", v: undefined },
    { d: "", v: undefined },
  ])("reads $d", ({ d, v }) => {
    expect(autoRevertTarget(d)).toBe(v);
  });
});

describe("changedOutsideMessage", () => {
  it("tells the user to refresh", () => {
    expect(changedOutsideMessage("web", "default", 12, "job exists with conflicting job modify index: 14")).toBe(
      'Job "web" in namespace "default" was changed outside Pulumi: its JobModifyIndex is no longer 12 ' +
        "(job exists with conflicting job modify index: 14). Run `pulumi refresh` to see the change, then `pulumi up` again.",
    );
  });
});
