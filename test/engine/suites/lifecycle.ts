/**
 * Each resource through the calls the engine makes for preview, up, refresh, an edited preview and up,
 * and destroy, over gRPC to Pulumi's own host, against the devserver. The requests carry what the engine
 * sends: checked inputs with `__provider`, state outputs as `olds`, the unknown sentinel at preview.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { jobDefinition } from "../../../provider/resources/definitions/job";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { record, type EngineContext, type Kind } from "../harness/context";
import { UNKNOWN, isSecretWrapped, urnOf, type HostCallError, type Props } from "../harness/host";
import { SCENARIOS, scenarioClients, webJobspec, type Scenario, type ScenarioEnv } from "./scenarios";

/** What one resource looks like in the simulated stack after `up`. */
export interface LiveResource {
  id: string;
  /** Checked inputs as the engine stores them. */
  inputs: Props;
  /** State outputs. */
  outs: Props;
}

/** Asserts state outputs are storable and carry nothing secret in plaintext. */
export function expectCleanState(
  ctx: EngineContext,
  kind: Kind,
  outs: Props,
  extraSecrets: readonly string[] = [],
): void {
  expect(outs.__provider).toBe(ctx.provider(kind));
  expect(outs.schemaVersion).toBe(SCHEMA_VERSION);
  const text = JSON.stringify(outs);
  for (const s of [...ctx.secrets, ...extraSecrets]) expect(text).not.toContain(s);
}

/** Registers the lifecycle tests. */
export function lifecycleSuite(get: () => EngineContext): void {
  const live = new Map<Kind, LiveResource>();
  let env: ScenarioEnv | undefined;
  const scenarioEnv = (): ScenarioEnv => {
    if (env === undefined) {
      const ctx = get();
      const run = randomBytes(3).toString("hex");
      const clientSecret = `engine-client-secret-${run}`;
      ctx.secrets.push(clientSecret, `${clientSecret}-rotated`);
      env = {
        mount: `engine-${run}`,
        jobId: `engine-web-${run}`,
        clientSecret,
        ...scenarioClients(ctx.devserver.urls, ctx.devserver.rootTokens),
      };
    }
    return env;
  };
  const withProvider = (kind: Kind, inputs: Props): Props => ({ ...inputs, __provider: get().provider(kind) });
  const liveOf = (kind: Kind): LiveResource => {
    const r = live.get(kind);
    if (r === undefined) throw new Error(`${kind} was not created by an earlier step`);
    return r;
  };

  describe.each(SCENARIOS.map((s) => [s.type, s] as const))("%s over gRPC", (_type, s: Scenario) => {
    const urn = (): string => urnOf(s.type, `${s.kind}-1`);

    it("preview of the create: Check passes the unknown input through and reports no failure", async () => {
      const ctx = get();
      const news = withProvider(s.kind, { ...s.inputs(scenarioEnv()), [s.unknownKey]: UNKNOWN });
      const { inputs, failures } = await ctx.host.check(urn(), {}, news);
      expect(failures).toEqual([]);
      expect(inputs[s.unknownKey]).toBe(UNKNOWN);
      expect(inputs.__provider).toBe(ctx.provider(s.kind));
    });

    it("up: Check then Create; the object exists and the state is clean", async () => {
      const ctx = get();
      const e = scenarioEnv();
      const checked = await ctx.host.check(urn(), {}, withProvider(s.kind, s.inputs(e)));
      expect(checked.failures).toEqual([]);
      const t0 = Date.now();
      const created = await ctx.host.create(urn(), checked.inputs);
      record(ctx, "createMs", s.kind, Date.now() - t0);
      expect(created.id).not.toBe("");
      expectCleanState(ctx, s.kind, created.properties);
      expect(await s.exists(e)).toBe(true);
      live.set(s.kind, { id: created.id, inputs: checked.inputs, outs: created.properties });
    });

    it("refresh: Read keeps the id, and the next Diff against the program shows no change", async () => {
      const ctx = get();
      const r = liveOf(s.kind);
      const read = await ctx.host.read(urn(), r.id, r.outs, r.inputs);
      expect(read.id).toBe(r.id);
      expectCleanState(ctx, s.kind, read.properties);
      const checked = await ctx.host.check(
        urn(),
        read.inputs ?? r.inputs,
        withProvider(s.kind, s.inputs(scenarioEnv())),
      );
      const diff = await ctx.host.diff(urn(), r.id, read.properties, checked.inputs);
      expect(diff.changes).toBe("none");
      live.set(s.kind, { id: read.id, inputs: read.inputs ?? r.inputs, outs: read.properties });
    });

    it("preview of an edit: Check and Diff with an unknown input report a change", async () => {
      const ctx = get();
      const r = liveOf(s.kind);
      const news = withProvider(s.kind, { ...s.edited(scenarioEnv()), [s.unknownKey]: UNKNOWN });
      const checked = await ctx.host.check(urn(), r.inputs, news);
      expect(checked.failures).toEqual([]);
      const diff = await ctx.host.diff(urn(), r.id, r.outs, checked.inputs);
      expect(diff.changes).toBe("some");
    });

    it("up of an edit: Diff says update in place, and Update returns the whole new state", async () => {
      const ctx = get();
      const r = liveOf(s.kind);
      ctx.devserver.resetLog();
      const checked = await ctx.host.check(urn(), r.inputs, withProvider(s.kind, s.edited(scenarioEnv())));
      expect(checked.failures).toEqual([]);
      const diff = await ctx.host.diff(urn(), r.id, r.outs, checked.inputs);
      expect(diff).toMatchObject({ changes: "some", replaces: [] });
      // In Pulumi's own host, diff takes the parse check just made (one parse for the two calls).
      const parses = ctx.devserver.requestLog.filter((e) => e.method === "POST" && e.path === "/v1/jobs/parse");
      if (s.kind === "job") expect(parses).toHaveLength(1);
      const outs = await ctx.host.update(urn(), r.id, r.outs, checked.inputs);
      expectCleanState(ctx, s.kind, outs);
      const again = await ctx.host.diff(urn(), r.id, outs, checked.inputs);
      expect(again.changes).toBe("none");
      live.set(s.kind, { id: r.id, inputs: checked.inputs, outs });
    });
  });

  describe("init errors over gRPC", () => {
    it("a create whose deployment fails keeps __provider in the state the engine stores, so destroy still works", async () => {
      // The engine stores an init error's properties as the resource's outputs (step.go: s.new.Outputs =
      // resp.Properties), and the host loads the provider for Delete and Read from those outputs.
      const ctx = get();
      const e = scenarioEnv();
      const jobId = `${e.jobId}-failing`;
      const jobspec = webJobspec(jobId).replace(
        'type        = "service"',
        'type        = "service"\n  meta = { "devserver.fail_deployment" = "true" }',
      );
      const urn = urnOf("Job", "failing");
      const checked = await ctx.host.check(urn, {}, withProvider("job", { jobspec, purgeOnDestroy: true }));
      expect(checked.failures).toEqual([]);
      const err = await ctx.host.create(urn, checked.inputs).then(
        () => undefined,
        (x: unknown) => x as HostCallError,
      );
      expect(err?.initFailed, "the job exists, so the failure is an init error").toBeDefined();
      const init = err?.initFailed ?? { id: "", properties: {}, reasons: [] };
      expect(init.properties.__provider).toBe(ctx.provider("job"));
      await ctx.host.delete(urn, init.id, init.properties);
      expect(await e.scheduler.jobs.find(jobId)).toBeUndefined();
    });
  });

  describe("Job outputs kept secret only when a source is, over gRPC", () => {
    // The outputs the Job's definition marks `secret: "sourced"`.
    const SOURCED = Object.entries(jobDefinition.fields)
      .filter(([, f]) => f.sourcedSecret)
      .map(([k]) => k)
      .sort();
    const wrappedKeys = (outs: Props): string[] =>
      Object.keys(outs)
        .filter((k) => isSecretWrapped(outs[k]))
        .sort();
    /** The outputs without the secret-wrapped ones: what plaintext state would hold of them. */
    const unwrappedPart = (outs: Props): string =>
      JSON.stringify(Object.fromEntries(Object.entries(outs).filter(([, v]) => !isSecretWrapped(v))));
    const secretJobspec = (id: string, failing = false): string =>
      webJobspec(id)
        .replace(`job "${id}" {`, `variable "pw" {\n  type = string\n}\n\njob "${id}" {`)
        .replace('image = "nginx:1.27"', 'image = "nginx:1.27"\n        args  = [var.pw]')
        .replace(
          'type        = "service"',
          failing
            ? 'type        = "service"\n  meta = { "devserver.fail_deployment" = "true" }'
            : 'type        = "service"',
        );

    it("a Job with no secret gets them plain: the engine stores no ciphertext for them", async () => {
      const ctx = get();
      const jobId = `${scenarioEnv().jobId}-plainouts`;
      const urn = urnOf("Job", "plain-outs");
      const checked = await ctx.host.check(
        urn,
        {},
        withProvider("job", { jobspec: webJobspec(jobId), purgeOnDestroy: true }),
      );
      const created = await ctx.host.create(urn, checked.inputs);
      expect(wrappedKeys(created.properties)).toEqual([]);
      for (const k of ["normalizedJob", "inputsHash"]) expect(typeof created.properties[k], k).toBe("string");
      expect(created.properties.secretMask).toBeUndefined();
      const read = await ctx.host.read(urn, created.id, created.properties, checked.inputs);
      expect(read.properties).toEqual(created.properties);
      await ctx.host.delete(urn, created.id, read.properties);
    });

    it("a Job with a secret variable gets them wrapped as secrets from create, read, update and an init error", async () => {
      const ctx = get();
      const e = scenarioEnv();
      const pw = `engine-pw-${randomBytes(4).toString("hex")}`;
      const jobId = `${e.jobId}-secretouts`;
      const urn = urnOf("Job", "secret-outs");
      const inputs = (p: string) =>
        withProvider("job", {
          jobspec: secretJobspec(jobId),
          variables: { pw: p },
          __secretInputs: ["variables.pw"],
          purgeOnDestroy: true,
        });
      const checked = await ctx.host.check(urn, {}, inputs(pw));
      expect(checked.failures).toEqual([]);
      const created = await ctx.host.create(urn, checked.inputs);
      expect(SOURCED).toEqual(["inputsHash", "normalizedJob", "secretMask"]);
      expect(wrappedKeys(created.properties)).toEqual(SOURCED);
      expect(JSON.stringify(created.properties)).toContain(pw);
      expect(unwrappedPart(created.properties)).not.toContain(pw);

      const read = await ctx.host.read(urn, created.id, created.properties, checked.inputs);
      expect(wrappedKeys(read.properties)).toEqual(SOURCED);

      const edited = await ctx.host.check(urn, checked.inputs, inputs(`${pw}-2`));
      // As the engine does: the Diff (which shows the plan), then the Update.
      expect((await ctx.host.diff(urn, created.id, read.properties, edited.inputs)).changes).toBe("some");
      const updated = await ctx.host.update(urn, created.id, read.properties, edited.inputs);
      expect(wrappedKeys(updated)).toEqual(SOURCED);
      expect(unwrappedPart(updated)).not.toContain(pw);
      await ctx.host.delete(urn, created.id, updated);

      const failingId = `${jobId}-failing`;
      const failingUrn = urnOf("Job", "secret-outs-failing");
      const failing = await ctx.host.check(
        failingUrn,
        {},
        withProvider("job", {
          jobspec: secretJobspec(failingId, true),
          variables: { pw },
          __secretInputs: ["variables.pw"],
          purgeOnDestroy: true,
        }),
      );
      const err = await ctx.host.create(failingUrn, failing.inputs).then(
        () => undefined,
        (x: unknown) => x as HostCallError,
      );
      const init = err?.initFailed ?? { id: "", properties: {}, reasons: [] };
      expect(init.id).not.toBe("");
      expect(wrappedKeys(init.properties)).toEqual(SOURCED);
      expect(unwrappedPart(init.properties)).not.toContain(pw);
      await ctx.host.delete(failingUrn, init.id, init.properties);
      expect(ctx.host.output).not.toContain(pw);
    });
  });

  describe("destroy over gRPC", () => {
    it.each([...SCENARIOS].reverse().map((s) => [s.type, s] as const))(
      "%s: Delete removes it, and a refresh then drops it",
      async (_t, s) => {
        const ctx = get();
        const r = liveOf(s.kind);
        await ctx.host.delete(urnOf(s.type, `${s.kind}-1`), r.id, r.outs);
        expect(await s.exists(scenarioEnv())).toBe(false);
        const read = await ctx.host.read(urnOf(s.type, `${s.kind}-1`), r.id, r.outs, r.inputs);
        expect(read.id).toBe("");
      },
    );

    it("the host printed no token or secret", () => {
      const ctx = get();
      for (const secret of ctx.secrets) expect(ctx.host.output).not.toContain(secret);
    });
  });
}
