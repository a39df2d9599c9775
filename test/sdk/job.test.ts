import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { Job } from "../../sdk/generated/job";
import { JobVersionTag } from "../../sdk/generated/job-version-tag";
import { installMocks, outputValue, type MockRecorder } from "../helpers/mocks";

let rec: MockRecorder;

beforeAll(async () => {
  rec = await installMocks((args) => ({ ...args.inputs, jobId: "web", version: 3 }));
});

describe("Job", () => {
  it("registers under its own type token with the inputs and a serialized provider", async () => {
    const j = new Job("web", { jobspec: 'job "web" {}', variables: { image: "nginx" }, waitForDeployment: false });
    expect(await outputValue(j.jobId)).toBe("web");
    expect(await outputValue(j.version)).toBe(3);
    const r = rec.registered.find((x) => x.name === "web");
    expect(r?.type).toBe("pulumi-nodejs:dynamic/pulumi-secrets-scheduler:Job");
    expect(r?.inputs.jobspec).toBe('job "web" {}');
    expect(r?.inputs.variables).toEqual({ image: "nginx" });
    expect(r?.inputs.waitForDeployment).toBe(false);
    // The provider is the thin shim: its text loads the implementation at call time and captures nothing else.
    const text = String(r?.inputs.__provider);
    expect(text).toContain("provider(kind)");
    expect(text).not.toContain("SchedulerClient");
    expect(text.length).toBeLessThan(20_000);
  });

  it("a secret jobspec reaches the engine as a secret, and the provider is told so to keep what it derives secret", async () => {
    const spec = 'job "s" { meta { password = "planted-pw-77" } }';
    const j = new Job("secret-spec", { jobspec: pulumi.secret(spec) }, { additionalSecretOutputs: ["status"] });
    await outputValue(j.jobId);
    // The caller's list as given: normalizedJob, inputsHash and secretMask are secret only when a source is,
    // and the provider returns them so (test/engine/suites/lifecycle.ts); __secretInputs tells it.
    expect(rec.secretOutputs.get("secret-spec")).toEqual(["status"]);
    const r = rec.registered.find((x) => x.name === "secret-spec");
    expect(r?.inputs.__secretInputs).toEqual(["jobspec"]);
    expect(r?.inputs.jobspec).toMatchObject({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: spec,
    });
    expect(String(r?.inputs.__provider)).not.toContain("planted-pw-77");
  });

  it("with a secret variable, the provider is told (__secretInputs): the outputs derived from it come back secret", async () => {
    const j = new Job("secret-var", {
      jobspec: 'variable "pw" {}\njob "v" {}',
      variables: pulumi.secret({ pw: "hunter2" }),
    });
    await outputValue(j.jobId);
    expect(rec.registered.find((x) => x.name === "secret-var")?.inputs.__secretInputs).toEqual(["variables"]);
    expect(rec.secretOutputs.get("secret-var") ?? []).toEqual([]);
  });

  it("tells the provider which sources are secret (__secretInputs, a name previews leave out), holding no value; nothing secret: no such input", async () => {
    const plain = new Job("plain-vars", { jobspec: 'job "p" {}', variables: { image: "nginx" } });
    await outputValue(plain.jobId);
    expect(rec.registered.find((x) => x.name === "plain-vars")?.inputs).not.toHaveProperty("__secretInputs");

    const oneVar = new Job("one-secret-var", {
      jobspec: 'job "o" {}',
      variables: { count: 2, db_password: pulumi.secret("pw-in-sdk-1"), image: pulumi.output("nginx") },
    });
    await outputValue(oneVar.jobId);
    const r1 = rec.registered.find((x) => x.name === "one-secret-var");
    expect(r1?.inputs.__secretInputs).toEqual(["variables.db_password"]);

    const wholeVars = new Job("whole-secret-vars", {
      jobspec: 'job "w" {}',
      variables: pulumi.secret({ db_password: "pw-in-sdk-2" }),
    });
    await outputValue(wholeVars.jobId);
    expect(rec.registered.find((x) => x.name === "whole-secret-vars")?.inputs.__secretInputs).toEqual(["variables"]);

    const spec = new Job("secret-spec-flag", { jobspec: pulumi.secret('job "s" {}') });
    await outputValue(spec.jobId);
    expect(rec.registered.find((x) => x.name === "secret-spec-flag")?.inputs.__secretInputs).toEqual(["jobspec"]);

    const obj = new Job("secret-job-flag", {
      job: { ID: "j", Meta: { token: pulumi.secret("pw-in-sdk-3") } } as never,
    });
    await outputValue(obj.jobId);
    const r4 = rec.registered.find((x) => x.name === "secret-job-flag");
    expect(r4?.inputs.__secretInputs).toEqual(["job"]);
    expect(JSON.stringify(r4?.inputs.__secretInputs)).not.toContain("pw-in-sdk");

    const trig = new Job("secret-trigger", {
      jobspec: 'job "t" {}',
      triggers: { plain: "a", token: pulumi.secret("pw-in-sdk-4") },
    });
    await outputValue(trig.jobId);
    expect(rec.registered.find((x) => x.name === "secret-trigger")?.inputs.__secretInputs).toEqual(["triggers.token"]);
  });

  it("does not change the caller's args object", () => {
    const args = { job: { ID: "api" } };
    new Job("api", args);
    expect(args).toEqual({ job: { ID: "api" } });
  });
});

describe("JobVersionTag", () => {
  it("registers under its own type token", async () => {
    const t = new JobVersionTag("release", { jobId: "web", name: "v1", description: "first" });
    expect(await outputValue(t.urn)).toContain("JobVersionTag");
    const r = rec.registered.find((x) => x.name === "release");
    expect(r?.type).toBe("pulumi-nodejs:dynamic/pulumi-secrets-scheduler:JobVersionTag");
    expect(r?.inputs).toMatchObject({ jobId: "web", name: "v1", description: "first" });
  });
});
