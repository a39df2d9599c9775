/**
 * The fault suite: all five resources are created, updated and deleted through seeded fault
 * proxies on loopback (resets before and after forwarding, 5xx after forwarding, 5xx bursts, 429 with
 * Retry-After, delays). A failed step gets one re-run with the network healthy again, as a user re-runs a
 * failed `pulumi up`. After every step the server is read directly (around the proxies): nothing lost,
 * orphaned, duplicated or stale, and the state the step left has no diff left.
 *
 * `FAULT_SEEDS=n` runs n seeds (default 2, a few seconds); `FAULT_REPORT=1` prints, per fault
 * kind, how many steps that met it succeeded transparently, failed, and converged on the re-run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../devserver";
import { secretsControls } from "../../devserver/secrets";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { SecretsClient } from "../../provider/clients/secrets";
import { setConnectionOverrides } from "../../provider/config";
import { setStackConfig } from "../helpers/stack-config";
import { authConfig } from "../../provider/resources/auth-config";
import { authMount } from "../../provider/resources/auth-mount";
import { authRole } from "../../provider/resources/auth-role";
import type { ProviderImpl } from "../../provider/resources/common";
import { job } from "../../provider/resources/job";
import { jobVersionTag } from "../../provider/resources/job-version-tag";
import { destroyStep, upStep, type Stated } from "../helpers/engine-steps";
import { FAULT_KINDS, startFaultProxy, type FaultKind, type FaultProxy } from "../helpers/fault-proxy";
import { SPEC } from "../helpers/jobspecs";

const SEEDS = Math.max(1, Number(process.env.FAULT_SEEDS ?? 2));
const impls = {
  mount: authMount as unknown as ProviderImpl,
  config: authConfig as unknown as ProviderImpl,
  role: authRole as unknown as ProviderImpl,
  job: job as unknown as ProviderImpl,
  tag: jobVersionTag as unknown as ProviderImpl,
};
type Kind = keyof typeof impls;

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";

/** Per fault kind: steps that met it and succeeded anyway, failed, and converged on the re-run. */
type Tally = Record<FaultKind | "none", { steps: number; transparent: number; failed: number; converged: number }>;

let dev: DevServer;
let secretsProxy: FaultProxy;
let schedulerProxy: FaultProxy;
let secrets: SecretsClient;
let scheduler: SchedulerClient;
let methodType: string;
/** Failed steps by resource, operation and how they failed (an init error keeps the object in state). */
const failures = new Map<string, number>();
const tally = Object.fromEntries(
  [...FAULT_KINDS, "none"].map((k) => [k, { steps: 0, transparent: 0, failed: 0, converged: 0 }]),
) as Tally;

beforeAll(async () => {
  dev = await startDevServer({ schedulerService: { deploymentMs: 10, evalDelayMs: 1 } });
  methodType = (await secretsControls(dev)).methodType;
  secretsProxy = await startFaultProxy(dev.urls.secrets, "secrets");
  schedulerProxy = await startFaultProxy(dev.urls.scheduler, "scheduler");
  setStackConfig({
    secretsAddress: secretsProxy.url,
    secretsToken: dev.rootTokens.secrets,
    schedulerAddress: schedulerProxy.url,
    schedulerToken: dev.rootTokens.scheduler,
  });
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 10 }, timeoutMs: 5_000 });
  secrets = new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} });
  scheduler = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {} });
  // The devserver's first jobspec parse loads its HCL parser: do it before the seeds are timed.
  await scheduler.jobs.parse({ JobHCL: SPEC("warm-up", "nginx:1"), Canonicalize: true });
});

afterAll(async () => {
  setConnectionOverrides({});
  if (process.env.FAULT_REPORT) {
    console.log(`fault suite, ${SEEDS} seeds: per fault kind, the steps that met it`);
    for (const [k, t] of Object.entries(tally))
      console.log(
        `  ${k.padEnd(12)} steps ${t.steps}, transparent ${t.transparent}, failed ${t.failed}, converged on re-run ${t.converged}`,
      );
    console.log("failed steps by resource and operation:");
    for (const [k, n] of [...failures.entries()].sort()) console.log(`  ${k}: ${n}`);
  }
  await secretsProxy?.close();
  await schedulerProxy?.close();
  await dev?.close();
});

/** What the server must hold after each step, read around the proxies. */
const verify: Record<Kind, (s: Stated | undefined, want: Record<string, unknown> | undefined) => Promise<void>> = {
  async mount(s, want) {
    const found = await secrets.mounts.find(String(want?.path ?? s?.id));
    if (want === undefined) return expect(found).toBeUndefined();
    expect(found?.description ?? "").toBe(want.description ?? "");
    expect(s?.outs.accessor).toBe(found?.accessor);
  },
  async config(s, want) {
    const mount = String(want?.mount ?? s?.outs.mount);
    const rec = await secrets.config.read(mount);
    if (want === undefined) return expect(rec).toBeUndefined();
    expect(rec).toMatchObject({ tenantId: TENANT, maxRetries: want.maxRetries });
  },
  async role(s, want) {
    const r = await secrets.roles.read(String(want?.mount ?? s?.outs.mount), String(want?.name ?? s?.outs.name));
    if (want === undefined) return expect(r).toBeUndefined();
    expect(r?.token_ttl).toBe(want.tokenTtl);
  },
  async job(s, want) {
    const id = String(s?.outs.jobId ?? want?.id);
    const j = (await scheduler.jobs.find(id))?.value;
    if (want === undefined) return expect(j).toBeUndefined();
    // Exactly one registration per create or update: a repeated register would add a version.
    expect(j?.Version).toBe(want.version);
    expect(JSON.stringify(j?.TaskGroups)).toContain(String(want.image));
    expect(s?.outs.jobModifyIndex).toBe(j?.JobModifyIndex);
  },
  async tag(s, want) {
    const jobId = String(want?.jobId ?? s?.outs.jobId);
    const versions = (await scheduler.versions.versions(jobId).catch(() => undefined))?.value.Versions ?? [];
    const tagged = versions.filter((v) => v.VersionTag?.Name === String(want?.name ?? s?.outs.name));
    if (want === undefined) return expect(tagged).toEqual([]);
    expect(tagged.map((v) => [v.Version, v.VersionTag?.Description])).toEqual([[0, want.description]]);
  },
};

function count(
  faults: Partial<Record<FaultKind, number>>,
  outcome: "transparent" | "failed",
  converged: boolean,
): void {
  const kinds = Object.keys(faults) as FaultKind[];
  for (const k of kinds.length > 0 ? kinds : (["none"] as const)) {
    const t = tally[k];
    t.steps += 1;
    t[outcome] += 1;
    if (converged) t.converged += 1;
  }
}

/** Runs one step under random faults; a failure gets one re-run without faults. */
async function step(
  seed: number,
  kind: Kind,
  state: Stated | undefined,
  news: Record<string, unknown> | "delete",
): Promise<Stated | undefined> {
  const impl = impls[kind];
  const marks = [secretsProxy.log.length, schedulerProxy.log.length];
  const random = { seed, rate: 0.35, kinds: FAULT_KINDS, maxFaults: 3, maxBurst: 3, maxDelayMs: 30 };
  secretsProxy.random(random);
  schedulerProxy.random({ ...random, seed: seed + 7919 });
  const run = () => (news === "delete" ? destroyStep(impl, state as Stated) : upStep(impl, state, news));
  const t0 = Date.now();
  let r = await silenced(run);
  if (process.env.FAULT_DEBUG)
    console.log(
      seed,
      kind,
      news === "delete" ? "delete" : state ? "update" : "create",
      Date.now() - t0,
      "ms",
      r.error?.message ?? "",
      JSON.stringify(secretsProxy.faultsSince(marks[0] ?? 0)),
      JSON.stringify(schedulerProxy.faultsSince(marks[1] ?? 0)),
    );
  secretsProxy.random(undefined);
  schedulerProxy.random(undefined);
  const faults: Partial<Record<FaultKind, number>> = { ...secretsProxy.faultsSince(marks[0] ?? 0) };
  for (const [k, n] of Object.entries(schedulerProxy.faultsSince(marks[1] ?? 0)))
    faults[k as FaultKind] = (faults[k as FaultKind] ?? 0) + n;
  if (r.error !== undefined) {
    const failed = r;
    const op = news === "delete" ? "delete" : state === undefined ? "create" : "update";
    const how = r.state?.initError === true && news !== "delete" ? "init error (kept in state)" : "plain error";
    failures.set(`${kind} ${op}, ${how}`, (failures.get(`${kind} ${op}, ${how}`) ?? 0) + 1);
    state = r.state;
    r = await silenced(() => (news === "delete" ? destroyStep(impl, state as Stated) : upStep(impl, state, news)));
    if (r.error !== undefined)
      throw new Error(
        `seed ${seed}, ${kind}: the re-run failed too: ${r.error.message}\nfirst failure: ${failed.error?.message}`,
      );
    count(faults, "failed", true);
  } else {
    count(faults, "transparent", false);
  }
  if (news !== "delete" && r.state !== undefined) {
    // Nothing stale: the state the step left needs no further change.
    const again = await silenced(() => upStep(impl, r.state, news));
    expect(again.error).toBeUndefined();
    expect(again.ran, `seed ${seed}, ${kind}: a step after convergence still had work to do`).toBe("same");
  }
  return r.state;
}

async function silenced<T>(fn: () => Promise<T>): Promise<T> {
  const orig = console.error;
  console.error = () => undefined;
  try {
    return await fn();
  } finally {
    console.error = orig;
  }
}

describe("fault suite: every resource's create, update and delete through a faulty network", () => {
  for (let i = 0; i < SEEDS; i++) {
    const seed = 1000 + i * 7;
    it(`seed ${seed}: nothing lost, orphaned, duplicated or stale after at most one re-run`, async () => {
      const p = `fs${seed}`;
      const inputs = {
        mount: (description: string) => ({ path: p, type: methodType, description }),
        config: (maxRetries: number) => ({
          mount: p,
          tenantId: TENANT,
          resource: "https://management.azure.com/",
          clientSecret: `secret-${seed}`,
          maxRetries,
        }),
        role: (tokenTtl: number) => ({ mount: p, name: "web", boundServicePrincipalIds: ["sp-1"], tokenTtl }),
        job: (image: string) => ({ jobspec: SPEC(`job-${seed}`, image), purgeOnDestroy: true }),
        tag: (description: string) => ({ jobId: `job-${seed}`, name: "release", version: 0, description }),
      };
      let s = seed * 100;
      const st: Partial<Record<Kind, Stated | undefined>> = {};
      // Create, in dependency order.
      st.mount = await step(++s, "mount", undefined, inputs.mount("one"));
      await verify.mount(st.mount, inputs.mount("one"));
      st.config = await step(++s, "config", undefined, inputs.config(3));
      await verify.config(st.config, inputs.config(3));
      st.role = await step(++s, "role", undefined, inputs.role(3600));
      await verify.role(st.role, inputs.role(3600));
      st.job = await step(++s, "job", undefined, inputs.job("nginx:1"));
      await verify.job(st.job, { version: 0, image: "nginx:1" });
      st.tag = await step(++s, "tag", undefined, inputs.tag("first"));
      await verify.tag(st.tag, inputs.tag("first"));
      // Update each in place.
      st.mount = await step(++s, "mount", st.mount, inputs.mount("two"));
      await verify.mount(st.mount, inputs.mount("two"));
      st.config = await step(++s, "config", st.config, inputs.config(4));
      await verify.config(st.config, inputs.config(4));
      st.role = await step(++s, "role", st.role, inputs.role(7200));
      await verify.role(st.role, inputs.role(7200));
      st.job = await step(++s, "job", st.job, inputs.job("nginx:2"));
      await verify.job(st.job, { version: 1, image: "nginx:2" });
      st.tag = await step(++s, "tag", st.tag, inputs.tag("second"));
      await verify.tag(st.tag, inputs.tag("second"));
      // Delete, in reverse order: nothing may stay behind.
      for (const kind of ["tag", "job", "role", "config", "mount"] as const) {
        const before = st[kind] as Stated;
        st[kind] = await step(++s, kind, before, "delete");
        expect(st[kind]).toBeUndefined();
        await verify[kind](before, undefined);
      }
      expect((await secrets.mounts.list())[`${p}/`]).toBeUndefined();
      expect(await scheduler.jobs.find(`job-${seed}`)).toBeUndefined();
    });
  }
});
