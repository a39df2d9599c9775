import { describe, expect, it } from "vitest";
import {
  REGISTER_REFUSED_JOB_FIELDS,
  SERVER_MANAGED_JOB_FIELDS,
  stripServerManagedFields,
} from "../../../../provider/clients/scheduler";
import { canonicalJson } from "../../../../provider/resources/common";
import { UNKNOWN } from "../../../helpers/unknown";
import { job } from "../../../../provider/resources/job";
import {
  checkJobInputs,
  deploymentTimeoutMs,
  submissionOf,
  variablesText,
} from "../../../../provider/resources/job/inputs";
import { renderVarFile } from "../../../../provider/resources/job/varfile";
import { hasNoDeployment, identityOf, replaceReasons } from "../../../../provider/resources/job/identity";
import { normalizeJob } from "../../../../provider/resources/job/normal-form";

/** The canonical text of a job's normal form: equal texts mean equal specs. */
const canonicalText = (job: Record<string, unknown>): string => canonicalJson(normalizeJob(job));

describe("checkJobInputs", () => {
  it("accepts a jobspec alone", () => {
    const r = checkJobInputs({ jobspec: 'job "a" {}' });
    expect(r.failures).toEqual([]);
    expect(r.inputs?.jobspec).toBe('job "a" {}');
  });

  it("accepts a job object alone and keeps unknown fields", () => {
    const job = { ID: "a", Extra: { x: 1 }, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker" }] }] };
    const r = checkJobInputs({ job });
    expect(r.failures).toEqual([]);
    expect(r.inputs?.job).toEqual(job);
  });

  it.each([
    { news: {}, property: "jobspec", fragment: "exactly one" },
    { news: { jobspec: "x", job: { ID: "a" } }, property: "job", fragment: "not both" },
    { news: { job: { Name: "a" } }, property: "job.ID", fragment: "non-empty string ID" },
    { news: { job: { Job: { ID: "a" } } }, property: "job.ID", fragment: "register body" },
    { news: { job: { ID: "a" }, variables: "x = 1" }, property: "variables", fragment: "only to a jobspec" },
    { news: { jobspec: "x", variables: { "bad name": "v" } }, property: "variables.bad name", fragment: "not a valid" },
    { news: { jobspec: "x", deploymentTimeout: "soon" }, property: "deploymentTimeout", fragment: "not a duration" },
    { news: { jobspec: "x", deploymentTimeout: -5 }, property: "deploymentTimeout", fragment: "not a duration" },
    { news: { jobspec: "x", evalPriority: 101 }, property: "evalPriority", fragment: "" },
    { news: { jobspec: "x", onDeploymentFailure: "rollback" }, property: "onDeploymentFailure", fragment: "" },
    { news: { jobspec: "x", jobSpec: "typo" }, property: "jobSpec", fragment: 'no input "jobSpec"' },
  ])("names $property for a bad input", ({ news, property, fragment }) => {
    const r = checkJobInputs(news as Record<string, unknown>);
    expect(r.inputs).toBeUndefined();
    const f = r.failures?.find((x) => x.property === property);
    expect(f, JSON.stringify(r.failures)).toBeDefined();
    expect(f?.reason).toContain(fragment);
  });

  it("tolerates unknown values at preview", () => {
    expect(checkJobInputs({ jobspec: UNKNOWN }).failures).toEqual([]);
    expect(checkJobInputs({ job: { ID: UNKNOWN } }).failures).toEqual([]);
    expect(checkJobInputs({ jobspec: "x", deploymentTimeout: UNKNOWN }).failures).toEqual([]);
    // The other source being unknown means exactly-one cannot be decided yet.
    expect(checkJobInputs({ jobspec: "x", job: UNKNOWN }).failures).toEqual([]);
  });

  it("takes the engine's own unknown value as unknown in the provider's check (a near miss is a value)", async () => {
    const check = async (deploymentTimeout: string) =>
      (await job.check({}, { jobspec: UNKNOWN, deploymentTimeout })).failures ?? [];
    expect(await check(UNKNOWN)).toEqual([]);
    for (const known of ["soon", `${UNKNOWN.slice(0, -1)}0`, ` ${UNKNOWN}`])
      expect((await check(known)).map((f) => f.property)).toContain("deploymentTimeout");
  });

  it("ignores the engine's __provider input", () => {
    expect(checkJobInputs({ jobspec: "x", __provider: "text" }).failures).toEqual([]);
  });
});

describe("deployment timeout durations", () => {
  it.each([
    { v: 300, ms: 300_000 },
    { v: "300", ms: 300_000 },
    { v: "5m", ms: 300_000 },
    { v: "1h30m", ms: 5_400_000 },
    { v: "1.5s", ms: 1500 },
    { v: "250ms", ms: 250 },
    { v: "2m3s", ms: 123_000 },
  ])("reads $v", ({ v, ms }) => {
    // `check` takes it (a duration it cannot read is refused), and the wait is that long, not the default.
    expect(checkJobInputs({ jobspec: "x", deploymentTimeout: v }).failures).toEqual([]);
    expect(deploymentTimeoutMs({ deploymentTimeout: v })).toBe(ms);
  });

  // Zero ("0s", 0) is no duration either: it means no time limit (below), never a wait of 0 ms.
  it.each(["", "m5", "5 m", "5x", "-1m", "1h junk", Number.NaN])("rejects %j", (v) => {
    const r = checkJobInputs({ jobspec: "x", deploymentTimeout: v });
    expect(r.inputs).toBeUndefined();
    expect(r.failures?.map((f) => f.property)).toContain("deploymentTimeout");
    expect(deploymentTimeoutMs({ deploymentTimeout: v })).toBe(300_000);
  });

  it("defaults the deployment timeout to five minutes", () => {
    expect(deploymentTimeoutMs({})).toBe(300_000);
    expect(deploymentTimeoutMs({ deploymentTimeout: "10s" })).toBe(10_000);
  });

  it.each([0, "0", "0s", "0h0m"])("reads a zero deployment timeout (%j) as no time limit of our own", (v) => {
    expect(checkJobInputs({ jobspec: "x", deploymentTimeout: v }).failures).toEqual([]);
    expect(deploymentTimeoutMs({ deploymentTimeout: v })).toBe(Infinity);
  });
});

describe("variables", () => {
  it("renders a map as sorted var-file text with HCL escapes", () => {
    expect(renderVarFile({ b: 'x"y', a: 3, c: true, d: "${x} %{y}\n" })).toBe(
      'a = 3\nb = "x\\"y"\nc = true\nd = "$${x} %%{y}\\n"\n',
    );
  });

  it("passes var-file text through", () => {
    expect(variablesText("a = 1\n")).toBe("a = 1\n");
    expect(variablesText(undefined)).toBe("");
  });
});

describe("submissionOf", () => {
  it("sends the jobspec text as hcl2 with var-file variables", () => {
    expect(submissionOf({ jobspec: "src", variables: "a = 1\n" })).toEqual({
      Source: "src",
      Format: "hcl2",
      Variables: "a = 1\n",
    });
  });

  it("sends a variables map as variable flags", () => {
    expect(submissionOf({ jobspec: "src", variables: { b: 2, a: "x" } })).toEqual({
      Source: "src",
      Format: "hcl2",
      VariableFlags: { a: "x", b: "2" },
    });
  });

  it("sends a job object as json", () => {
    const s = submissionOf({ job: { ID: "a" } });
    expect(s?.Format).toBe("json");
    expect(JSON.parse(s?.Source ?? "")).toEqual({ ID: "a" });
  });

  it("leaves secret variables out; a secret jobspec, job or unknown secrecy sends none", () => {
    const vars = { a: "x", pw: "hunter22" };
    expect(
      submissionOf(
        { jobspec: "src", variables: vars },
        { everything: false, variables: { all: false, keys: new Set(["pw"]) } },
      ),
    ).toEqual({ Source: "src", Format: "hcl2", VariableFlags: { a: "x" } });
    expect(submissionOf({ jobspec: "src", variables: vars }, { everything: false, variables: { all: true } })).toEqual({
      Source: "src",
      Format: "hcl2",
      VariableFlags: {},
    });
    expect(
      submissionOf({ jobspec: "src", variables: 'pw = "hunter22"\n' }, { everything: false, variables: { all: true } }),
    ).toEqual({ Source: "src", Format: "hcl2" });
    expect(submissionOf({ jobspec: "src" }, { everything: true, variables: undefined })).toBeUndefined();
    expect(submissionOf({ job: { ID: "a" } }, { everything: true, variables: undefined })).toBeUndefined();
  });
});

describe("normalizeJob", () => {
  it("strips server-managed fields", () => {
    const n = normalizeJob({
      ID: "a",
      Version: 3,
      VersionTag: { Name: "t" },
      Stable: true,
      Status: "running",
      StatusDescription: "",
      CreateIndex: 1,
      ModifyIndex: 2,
      JobModifyIndex: 2,
      SubmitTime: 5,
      Dispatched: false,
    });
    expect(n).toEqual({ ID: "a" });
  });

  it("leaves out every field of the client's one server-managed list; the client's strip keeps the refused ones (#23.3)", () => {
    const job = Object.fromEntries([["ID", "a"], ...SERVER_MANAGED_JOB_FIELDS.map((k) => [k, 1])]);
    expect(normalizeJob(job)).toEqual({ ID: "a" });
    // A register refuses `Dispatched` rather than overwriting it: strip leaves it for the server to refuse.
    expect(REGISTER_REFUSED_JOB_FIELDS).toEqual(["Dispatched"]);
    expect(stripServerManagedFields(job as never)).toEqual({ ID: "a", Dispatched: 1 });
  });

  it("treats empty lists, null and absence alike, but keeps empty blocks", () => {
    const a = { ID: "a", Constraints: [], Affinities: null, TaskGroups: [{ Name: "g", Spreads: [], Update: {} }] };
    const b = { TaskGroups: [{ Update: {}, Name: "g" }], ID: "a" };
    expect(canonicalText(a)).toBe(canonicalText(b));
    expect(canonicalText({ ID: "a", Update: {} })).not.toBe(canonicalText({ ID: "a" }));
  });

  it("keeps list order: reordered groups are a different job", () => {
    const g1 = { Name: "one" };
    const g2 = { Name: "two" };
    expect(canonicalText({ ID: "a", TaskGroups: [g1, g2] })).not.toBe(canonicalText({ ID: "a", TaskGroups: [g2, g1] }));
  });

  it("is idempotent", () => {
    const j = { ID: "a", Meta: { k: "v" }, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Env: null }] }] };
    expect(normalizeJob(normalizeJob(j))).toEqual(normalizeJob(j));
  });
});

describe("replaceReasons", () => {
  const base = identityOf({ ID: "a", Namespace: "default", Type: "service" });

  it("finds nothing for the same job, defaults included", () => {
    expect(replaceReasons(base, identityOf({ ID: "a" }))).toEqual([]);
  });

  it.each([
    { job: { ID: "b" }, field: "id" },
    { job: { ID: "a", Namespace: "prod" }, field: "namespace" },
    { job: { ID: "a", Region: "eu" }, field: "region" },
    { job: { ID: "a", Type: "batch" }, field: "type" },
    { job: { ID: "a", Periodic: { Spec: "* * * * *" } }, field: "periodic" },
    { job: { ID: "a", ParameterizedJob: {} }, field: "parameterized" },
  ])("replaces on $field", ({ job, field }) => {
    expect(replaceReasons(base, identityOf(job)).map((r) => r.field)).toEqual([field]);
  });

  it("skips waiting only for kinds without deployments", () => {
    expect(hasNoDeployment(identityOf({ ID: "a" }))).toBe(false);
    expect(hasNoDeployment(identityOf({ ID: "a", Type: "batch" }))).toBe(true);
    expect(hasNoDeployment(identityOf({ ID: "a", Type: "batch", Periodic: { Spec: "x" } }))).toBe(true);
    expect(hasNoDeployment(identityOf({ ID: "a", ParameterizedJob: {} }))).toBe(true);
  });
});
