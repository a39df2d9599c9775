/**
 * Drives the validation corpus through the five providers against one devserver on loopback: every bad
 * case fails at `check` naming its property with zero requests on the wire and no input value repeated in
 * the failure text; every good case passes `check`, and a good path input is created and its first request
 * line found exactly among the requests sent, with every request on the resource's own endpoints.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { SecretsClient } from "../../../provider/clients/secrets";
import { SchedulerClient } from "../../../provider/clients/scheduler";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import type { ProviderImpl } from "../../../provider/resources/common";
import { job } from "../../../provider/resources/job";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { CORPUS, jobObject, type CorpusCase, type ResourceName } from "./corpus";
import { pointProvidersAt } from "../../helpers/devserver-config";

let dev: DevServer;

const providers: Record<ResourceName, ProviderImpl<never, never>> = {
  AuthMount: authMount as unknown as ProviderImpl<never, never>,
  AuthConfig: authConfig as unknown as ProviderImpl<never, never>,
  AuthRole: authRole as unknown as ProviderImpl<never, never>,
  Job: job as unknown as ProviderImpl<never, never>,
  JobVersionTag: jobVersionTag as unknown as ProviderImpl<never, never>,
};

/** The paths a resource's own calls use. */
const OWN: Record<ResourceName, RegExp> = {
  AuthMount: /^\/v1\/sys\/auth(\/|$)/,
  AuthConfig: /^\/v1\/auth\/[^?]+\/config$/,
  AuthRole: /^\/v1\/auth\/[^?]+\/role\/[^/]+$/,
  Job: /^\/v1\/(jobs|job\/[^/]+(\/(summary|deployment|allocations|evaluations|deployments|plan|versions))?)$/,
  JobVersionTag: /^\/v1\/job\/tagged(\/versions(\/[^/]+\/tag)?)?$/,
};

function lines(): string[] {
  return dev.requestLog.map((e) => `${e.method} ${e.path}${e.query ? `?${e.query}` : ""}`);
}

/** String leaves of a value, own keys only. */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === "object")
    for (const k of Object.keys(v)) strings((v as Record<string, unknown>)[k], out);
  return out;
}

beforeAll(async () => {
  dev = await startDevServer({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  pointProvidersAt(dev);
  const secrets = new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} });
  for (const p of ["cloud", "team/cloud", "c..d"]) await secrets.mounts.enable(p, { type: "cloud" });
  const scheduler = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler });
  await scheduler.jobs.register({ Job: jobObject({ ID: "tagged" }) as never });
});

afterAll(async () => {
  await dev?.close();
});

describe("the corpus", () => {
  it("has at least 200 cases over the five resources, bad and good, each with a property and a source", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(200);
    for (const r of Object.keys(providers)) {
      expect(
        CORPUS.some((c) => c.resource === r && c.bad),
        r,
      ).toBe(true);
      expect(
        CORPUS.some((c) => c.resource === r && !c.bad),
        r,
      ).toBe(true);
    }
    for (const c of CORPUS) {
      expect(c.property, c.name).not.toBe("");
      expect(c.source.length, c.name).toBeGreaterThan(10);
    }
  });
});

const label = (c: CorpusCase) => `${c.resource}: ${c.name} → ${c.property}`;

describe("bad inputs fail at check, naming the property, with nothing sent", () => {
  it.each(CORPUS.filter((c) => c.bad).map((c) => [label(c), c] as const))("%s", async (_l, c) => {
    dev.resetLog();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await providers[c.resource].check({}, c.inputs);
    vi.restoreAllMocks();
    expect(res.inputs, JSON.stringify(res)).toBeUndefined();
    const failures = res.failures ?? [];
    expect(
      failures.map((f) => f.property),
      JSON.stringify(failures),
    ).toContain(c.property);
    // Failure texts name the property and the expected form; they never repeat a long input value.
    for (const s of strings(c.inputs).filter((x) => x.length >= 16)) {
      for (const f of failures) expect(f.reason).not.toContain(s);
    }
    expect(dev.requestLog).toHaveLength(0);
  });
});

describe("good inputs pass check; path inputs reach exactly their own endpoint", () => {
  it.each(CORPUS.filter((c) => !c.bad).map((c) => [label(c), c] as const))("%s", async (_l, c) => {
    dev.resetLog();
    const p = providers[c.resource];
    const res = await p.check({}, c.inputs);
    expect(res.failures ?? [], JSON.stringify(res.failures)).toEqual([]);
    // A good Job's check may ask the scheduler to parse its jobspec (to learn the job's identity); nothing else.
    for (const e of dev.requestLog) expect(`${e.method} ${e.path}`).toBe("POST /v1/jobs/parse");
    if (c.resource !== "Job") expect(dev.requestLog).toHaveLength(0);
    if (c.line === undefined) return;
    const created = await p.create(res.inputs as never);
    // A Job's create registers it by its body alone; its delete is the request with the ID in the path.
    if (c.resource === "Job") await p.delete(created.id, created.outs as never);
    const sent = lines();
    // The path input's own request, exactly (a tag create reads the job's versions first).
    expect(sent, JSON.stringify(sent)).toContain(c.line);
    for (const e of dev.requestLog) expect(e.path, `${c.name}: ${e.method} ${e.path}`).toMatch(OWN[c.resource]);
    // A version carries one tag at a time: remove this case's tag so the next case can tag the same version.
    if (c.resource === "JobVersionTag") await p.delete(created.id, created.outs as never);
  });
});
