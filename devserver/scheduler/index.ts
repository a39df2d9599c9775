// The scheduler service module: the job API of spec scheduler-jobs-api.md on an in-memory simulated
// cluster. Options shape the fake cluster and the simulation's timing; `control` steers it from tests.
//
// Steering a rollout:
// - job, group or task meta `devserver.fail_deployment = "true"`: that version's deployment fails as
//   "Failed due to unhealthy allocations" (auto_revert then applies like on the real server);
// - `control.failNextDeployment(jobId, namespace?)`: the job's next deployment fails the same way;
// - meta `devserver.never_healthy = "true"`: that version's allocations never turn healthy, so its
//   deployment fails "Failed due to progress deadline" when a group's RequireProgressBy passes (every
//   deployment is watched against its progress deadline, as on the real server);
// - the real server's `PUT /v1/deployment/fail/:id` and `PUT /v1/deployment/promote/:id` (plus
//   `GET /v1/deployment/:id`, `GET /v1/evaluation/:id`, `GET /v1/allocation/:id` to follow them);
// - batch work: meta `devserver.fail_batch = "true"` (job, group or task) makes those tasks exit 1, so
//   their allocations end `failed`;
// - garbage collection as the real server's (sim/gc.ts): finished jobs, evaluations with their allocations
//   (a purged job's too) and deployments go once older than the `gc` thresholds (the real defaults: job 4 h,
//   evaluation 1 h, batch evaluation 24 h, deployment 1 h, checked every 5 min); `PUT /v1/system/gc`
//   (management token) or `control.gc()` collects every finished one now, whatever its age;
// - `control.setTiming`, `control.setNodes` (capacity for FailedTGAllocs), `control.idle()` in tests.
//
// Action WebSockets that fail before they finish: meta `devserver.action_upgrade_status = "503"` answers the
// upgrade with that status, `devserver.action_silent = "true"` accepts and never sends a frame (api/action.ts);
// `control.openActions()` counts the action sockets still open on the server's side.
import type { Router, ServiceContext, ServiceModule } from "../core";
import { defaultActionRunner, handleActionUpgrade, type ActionRunner } from "./api/action";
import type { WsConnection } from "./api/ws";
import { allocAsk, makeNodes, type NodePoolOptions } from "./sim/cluster";
import type { Node } from "./sim/types";
import { GarbageCollector, gcSettings, type GcOptions } from "./sim/gc";
import { Engine } from "./sim/engine";
import type { RouteDeps } from "./api/http";
import { JobOps } from "./ops/jobs";
import { releaseFeatures } from "./api/release";
import { JOB_ROUTES } from "./api/routes-job";
import { JOBS_ROUTES } from "./api/routes-jobs";
import { ALLOCATION_ROUTES, DEPLOYMENT_ROUTES, EVALUATION_ROUTES, SYSTEM_ROUTES } from "./api/routes-records";
import { finishTaskStates } from "./sim/allocs";
import { nowNanos } from "./state/json";
import { Store, jobKey } from "./state/store";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESC } from "./state/types";

export { FAIL_DEPLOYMENT_META } from "./sim/deployments";
export type { ActionRunner } from "./api/action";
export type { NodePoolOptions } from "./sim/cluster";
export type { GcOptions } from "./sim/gc";
export type { Node } from "./sim/types";

/** Options of the scheduler service module. */
export interface SchedulerServiceOptions {
  /** Time from a deployment's start until its allocations report health (ms, default 300). */
  readonly deploymentMs?: number;
  /** Delay before a new evaluation is processed (ms, default 10). */
  readonly evalDelayMs?: number;
  /** Time a batch allocation runs before completing (ms, default: `deploymentMs`). */
  readonly batchMs?: number;
  /** The fake node pool (default 3 nodes of 4000 MHz / 8192 MB in dc1, pool "default"). */
  readonly nodes?: NodePoolOptions;
  /**
   * Versions kept per job; tagged ones are never dropped (default 6, as the real server: reference/scheduler.md
   * §3.2).
   */
  readonly trackedVersions?: number;
  /** Largest stored job submission in bytes (default 1,000,000, as the real `job_max_source_size`). */
  readonly maxSourceBytes?: number;
  /** Service providers registered in the scheduler's own catalog (default ["nomad"], as the real server). */
  readonly serviceProviders?: readonly string[];
  /** Region of this server; `global` in a job maps to it (default "global"). */
  readonly region?: string;
  /** Produces action output for the action WebSocket (default: `echo`-like simulation, nothing runs). */
  readonly actionRunner?: ActionRunner;
  /**
   * Act as an older release (e.g. "1.6.5"): routes it lacks answer as its router makes them answer (no job
   * actions before 1.7; no version tags or `diff_version` before 1.9; no `/dispatch/payload` before 1.10).
   * Default: the newest release.
   */
  readonly release?: string;
  /**
   * When finished records are garbage-collected (ms; defaults: the real server's `job_gc_threshold` 4 h,
   * `eval_gc_threshold` 1 h, `batch_eval_gc_threshold` 24 h, `deployment_gc_threshold` 1 h, every 5 min).
   */
  readonly gc?: GcOptions;
}

/** Test and demo controls of a running scheduler service. */
export interface SchedulerControl {
  /** Resolves when no evaluation, deployment step or batch run is pending (manual promotions excepted). */
  idle(): Promise<void>;
  /** Makes the next deployment of a job fail as unhealthy (like the `devserver.fail_deployment` meta key). */
  failNextDeployment(jobId: string, namespace?: string): void;
  /** Fails a running deployment now, like `PUT /v1/deployment/fail/:id`; returns the version rolled back to, if any. */
  failDeployment(deploymentId: string): number | undefined;
  /**
   * Makes a running allocation's tasks fail (client status `failed`), as a crash after it reported healthy
   * does: its deployment health stays as it was and the deployment goes on.
   */
  failAllocation(allocId: string): void;
  /** Changes the simulation's timing for what happens next. */
  setTiming(t: { readonly deploymentMs?: number; readonly evalDelayMs?: number; readonly batchMs?: number }): void;
  /** Replaces the node pool; blocked evaluations are retried. */
  setNodes(o: NodePoolOptions): void;
  /** Returns the current nodes. */
  nodes(): readonly Node[];
  /**
   * Garbage-collects every finished job, evaluation, allocation and deployment now, whatever its age, like
   * `PUT /v1/system/gc`; returns how many jobs went.
   */
  gc(): number;
  /** Returns how many action WebSockets are open on the server's side now. */
  openActions(): number;
}

/** The scheduler module plus its controls. */
export interface SchedulerService extends ServiceModule {
  readonly control: SchedulerControl;
}

/** Namespace policy shorthands and the capabilities they grant (the real server's read/write/scale sets). */
const POLICIES: Readonly<Record<string, readonly string[]>> = (() => {
  const read = [
    "list-jobs",
    "parse-job",
    "read-job",
    "read-job-scaling",
    "list-scaling-policies",
    "read-scaling-policy",
    "csi-list-volume",
    "csi-read-volume",
  ];
  const write = [
    ...read,
    "submit-job",
    "dispatch-job",
    "scale-job",
    "read-logs",
    "read-fs",
    "alloc-exec",
    "alloc-lifecycle",
    "csi-mount-volume",
    "csi-write-volume",
    "submit-recommendation",
  ];
  const scale = ["list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job"];
  const ns = (caps: string[]): string[] => caps.map((c) => `namespace:${c}`);
  return { read: ns(read), write: ns(write), scale: ns(scale), deny: [] };
})();

/** Creates the scheduler service module; pass it to `startDevServer({ services: [...] })` or let the devserver create it. */
export function createSchedulerService(options: SchedulerServiceOptions = {}): SchedulerService {
  const deploymentMs = options.deploymentMs ?? 300;
  const settings = {
    evalDelayMs: options.evalDelayMs ?? 10,
    deploymentMs,
    batchMs: options.batchMs ?? deploymentMs,
    nodes: makeNodes(options.nodes),
  };
  const gcOptions = gcSettings(options.gc);
  const runner = options.actionRunner ?? defaultActionRunner;
  const has = releaseFeatures(options.release);
  let deps: RouteDeps | undefined;
  const started = (): RouteDeps => {
    if (deps === undefined) throw new Error("the scheduler service has not been started");
    return deps;
  };
  const policyCapabilities = (policy: string): readonly string[] | undefined => POLICIES[policy];
  const openActions = new Set<WsConnection>();

  const control: SchedulerControl = {
    idle: () => started().engine.idle(),
    failNextDeployment: (jobId, namespace = "default") => {
      started().engine.failNextDeployment.add(jobKey(namespace, jobId));
    },
    failDeployment: (id) => {
      const d = started().store.deployments.get(id);
      if (d === undefined || !ACTIVE_DEPLOYMENT.has(d.Status)) throw new Error(`deployment ${id} is not active`);
      return started().engine.deployments.fail(d, DEPLOYMENT_DESC.markedFailed, false);
    },
    failAllocation: (id) => {
      const r = started().store.allocs.get(id);
      if (r === undefined || r.alloc.ClientStatus !== "running") throw new Error(`allocation ${id} is not running`);
      const index = started().store.write("allocs", "job_summary");
      Object.assign(r.alloc, {
        ClientStatus: "failed",
        ClientDescription: "Failed tasks",
        TaskStates: finishTaskStates(r.alloc.TaskStates, "failed"),
        ModifyIndex: index,
        ModifyTime: nowNanos(),
      });
    },
    setTiming: (t) => {
      if (t.deploymentMs !== undefined) settings.deploymentMs = t.deploymentMs;
      if (t.evalDelayMs !== undefined) settings.evalDelayMs = t.evalDelayMs;
      if (t.batchMs !== undefined) settings.batchMs = t.batchMs;
    },
    setNodes: (o) => {
      settings.nodes = makeNodes(o);
      started().engine.retryBlocked();
    },
    nodes: () => settings.nodes,
    gc: () => started().gc.force().jobs,
    openActions: () => openActions.size,
  };

  return {
    name: "scheduler",
    control,
    routes(router: Router, ctx: ServiceContext) {
      const store = new Store(() => ctx.nextIndex(), allocAsk);
      const engine = new Engine(store, settings);
      const ops = new JobOps(store, engine, {
        trackedVersions: options.trackedVersions ?? 6,
        maxSourceBytes: options.maxSourceBytes ?? 1_000_000,
      });
      const gc = new GarbageCollector(store, gcOptions);
      const periodic = (): void => {
        engine.scheduleQuiet(gc.settings.intervalMs, () => {
          gc.run();
          periodic();
        });
      };
      periodic();
      deps = {
        ctx,
        store,
        engine,
        ops,
        gc,
        region: options.region ?? "global",
        serviceProviders: options.serviceProviders ?? ["nomad"],
        actionRunner: runner,
        has,
      };
      // One table per resource, as the real agent registers each path with its handler.
      router.table(deps, [
        ...JOBS_ROUTES,
        ...JOB_ROUTES,
        ...EVALUATION_ROUTES,
        ...DEPLOYMENT_ROUTES,
        ...ALLOCATION_ROUTES,
        ...SYSTEM_ROUTES,
      ]);
    },
    snapshot: () => started().store.snapshot(),
    restore: (data, warn) => {
      const d = started();
      d.store.restore(data, warn);
      d.engine.resume();
    },
    policyCapabilities,
    upgrade: (req, socket, head, ctx) =>
      handleActionUpgrade(req, socket, head, ctx, started().store, runner, policyCapabilities, openActions),
    close: () => deps?.engine.close(),
  };
}
