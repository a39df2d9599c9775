/**
 * The replace rules the reference pages (docs/reference/*.md) and the SDK's `connection` docs say come from
 * each resource definition's `replaceOrder` and its connection field's `newSettings`
 * (codegen/render.ts renders them). This holds those data to what each provider really does,
 * against a devserver over loopback HTTP:
 * - a change of every key the page says replaces: the diff replaces, deleting first exactly when
 *   `replaceOrder` is `delete-first` (the engine's `deleteBeforeReplace`);
 * - a connection to another address: a replacement created there first;
 * - a connection whose settings changed but not its place (here: a timeout): the diff is an update, and the
 *   update writes the object again (`writes`), only reads (`reads`), or sends nothing (`state`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../devserver";
import { setStackConfig } from "./helpers/stack-config";
import { authConfig } from "../provider/resources/auth-config";
import { authMount } from "../provider/resources/auth-mount";
import { authRole } from "../provider/resources/auth-role";
import type { ProviderImpl } from "../provider/resources/common";
import { connectionChange } from "../provider/resources/connection";
import { replaceKeys, type NewSettings, type ResourceDefinition } from "../provider/resources/definition";
import { definitions } from "../provider/resources/definitions";
import { authConfigDefinition } from "../provider/resources/definitions/auth-config";
import { job } from "../provider/resources/job";
import { jobVersionTag } from "../provider/resources/job-version-tag";
import { renderReference } from "../codegen/render";

let dev: DevServer;
const saved = { ...process.env };

beforeAll(async () => {
  for (const k of Object.keys(process.env)) if (/^(SECRETS|SCHEDULER)_/.test(k)) delete process.env[k];
  dev = await startDevServer();
});
afterAll(async () => {
  delete process.env["CLAIMS_SECRET_A"];
  delete process.env["CLAIMS_SECRET_B"];
  Object.assign(process.env, saved);
  setStackConfig({});
  await dev?.close();
});

type Connection = Record<string, unknown>;
const secrets = (extra: Connection = {}): Connection => ({
  service: "secrets",
  address: dev.urls.secrets,
  token: dev.rootTokens.secrets,
  ...extra,
});
const scheduler = (extra: Connection = {}): Connection => ({
  service: "scheduler",
  address: dev.urls.scheduler,
  token: dev.rootTokens.scheduler,
  ...extra,
});

/** What each resource is made from here, and a new value for every key its definition says replaces. */
interface Case {
  provider: ProviderImpl;
  connection: (extra?: Connection) => Connection;
  inputs: (connection: Connection) => Record<string, unknown>;
  /** Made first (a mount for the config and role, a job for the tag). */
  before?: () => Promise<void>;
  replaced: Record<string, unknown>;
}

const batch = (id: string) => ({
  job: {
    ID: id,
    Name: id,
    Type: "batch",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "true" } }] }],
  },
  waitForDeployment: false,
  purgeOnDestroy: true,
});

async function made(p: ProviderImpl, inputs: Record<string, unknown>): Promise<void> {
  const checked = await p.check({}, inputs);
  expect(checked.failures ?? []).toEqual([]);
  await p.create(checked.inputs as Record<string, unknown>);
}

const CASES: Record<string, Case> = {
  AuthMount: {
    provider: authMount as unknown as ProviderImpl,
    connection: secrets,
    inputs: (connection) => ({ path: "claims-mount", connection }),
    replaced: { type: "other", local: true, sealWrap: true },
  },
  AuthConfig: {
    provider: authConfig as unknown as ProviderImpl,
    connection: secrets,
    before: () => made(authMount as unknown as ProviderImpl, { path: "claims-config", connection: secrets() }),
    inputs: (connection) => ({
      mount: "claims-config",
      tenantId: "11111111-2222-4333-8444-555555555555",
      resource: "https://management.azure.com/",
      connection,
    }),
    replaced: { mount: "claims-elsewhere" },
  },
  AuthRole: {
    provider: authRole as unknown as ProviderImpl,
    connection: secrets,
    before: () => made(authMount as unknown as ProviderImpl, { path: "claims-role", connection: secrets() }),
    inputs: (connection) => ({
      mount: "claims-role",
      name: "web",
      tokenPolicies: ["web"],
      boundGroupIds: ["12121212-3434-4565-8787-909090909090"],
      connection,
    }),
    replaced: { mount: "claims-elsewhere", name: "other" },
  },
  JobVersionTag: {
    provider: jobVersionTag as unknown as ProviderImpl,
    connection: scheduler,
    before: () => made(job as unknown as ProviderImpl, { ...batch("claims-tagged"), connection: scheduler() }),
    inputs: (connection) => ({ jobId: "claims-tagged", name: "v0", description: "first", connection }),
    replaced: { jobId: "claims-other", namespace: "other", name: "v1", version: 7 },
  },
  Job: {
    provider: job as unknown as ProviderImpl,
    connection: scheduler,
    inputs: (connection) => ({ ...batch("claims-job"), connection }),
    replaced: { namespace: "other", region: "elsewhere" },
  },
};

/** The `newSettings` of a definition's connection field. */
function newSettingsOf(def: ResourceDefinition): NewSettings | undefined {
  return Object.values(def.fields).find((f) => f.type === "connection")?.newSettings;
}

describe("the reference pages' replace rules hold to what the providers do", () => {
  it("every resource has a case here, and its page says what its definition says", () => {
    expect(Object.keys(CASES).sort()).toEqual(definitions.map((d) => d.name).sort());
    for (const def of definitions) {
      const page = renderReference(def);
      const order =
        def.replaceOrder === "delete-first" ? "the old one is deleted first" : "the new one is created first";
      expect(page, def.name).toContain(`replaces the ${def.name}: ${order}`);
      expect(page, def.name).toContain("to another address replaces it too: created there first, then deleted here");
      expect(newSettingsOf(def), def.name).toBeDefined();
      expect(Object.keys(CASES[def.name]?.replaced ?? {}).sort(), def.name).toEqual(
        [...replaceKeys(def as ResourceDefinition)].sort(),
      );
    }
  });

  it("a new token is, like a timeout, a change of settings and not of place", () => {
    expect(connectionChange("scheduler", scheduler() as never, scheduler({ token: "another" }) as never)).toBe(
      "settings",
    );
    expect(connectionChange("secrets", secrets() as never, secrets({ token: "another" }) as never)).toBe("settings");
    expect(connectionChange("secrets", secrets() as never, secrets({ timeoutMs: 20_000 }) as never)).toBe("settings");
  });

  it.each(definitions.map((d) => [d.name, d] as const))(
    "%s: replacements in the order the page says, and what an update does with new connection settings",
    async (name, def) => {
      const c = CASES[name] as Case;
      await c.before?.();
      const p = c.provider;
      const first = await p.check({}, c.inputs(c.connection()));
      expect(first.failures ?? []).toEqual([]);
      const inputs = first.inputs as Record<string, unknown>;
      const created = await p.create(inputs);
      const outs = created.outs as Record<string, unknown>;

      // Every key the page says replaces: a replacement, deleting first exactly when the page says so.
      for (const [key, value] of Object.entries(c.replaced)) {
        const news = await p.check(inputs, { ...c.inputs(c.connection()), [key]: value });
        expect(news.failures ?? [], `${name}.${key}`).toEqual([]);
        const d = await p.diff(created.id, outs, news.inputs as Record<string, unknown>);
        expect(d.replaces, `${name}.${key}`).toContain(key);
        expect(d.deleteBeforeReplace ?? false, `${name}.${key}`).toBe(def.replaceOrder === "delete-first");
      }

      // Another address: created there first.
      const away = await p.check(inputs, c.inputs(c.connection({ address: "http://127.0.0.1:9" })));
      expect(await p.diff(created.id, outs, away.inputs as Record<string, unknown>)).toEqual({
        changes: true,
        replaces: ["connection"],
        deleteBeforeReplace: false,
      });

      // The same place, new settings: an update that writes, reads or sends nothing, as the page says.
      const slower = await p.check(inputs, c.inputs(c.connection({ timeoutMs: 20_000 })));
      const next = slower.inputs as Record<string, unknown>;
      const d = await p.diff(created.id, outs, next);
      expect(d.changes).toBe(true);
      expect(d.replaces ?? []).toEqual([]);
      const from = dev.requestLog.length;
      const updated = await p.update(created.id, outs, next);
      const sent = dev.requestLog.slice(from).map((e) => `${e.method} ${e.path}`);
      const writes = sent.filter((r) => !r.startsWith("GET "));
      const did: NewSettings = writes.length > 0 ? "writes" : sent.length > 0 ? "reads" : "state";
      expect(did, sent.join(", ")).toBe(newSettingsOf(def));
      expect((updated.outs as Record<string, unknown>)["connection"]).toMatchObject({ timeoutMs: 20_000 });

      await p.delete(created.id, updated.outs as Record<string, unknown>);
    },
    60_000,
  );

  it("AuthConfig: a new place to read the write-only secret from is an update that writes the config again, as its page says", async () => {
    const fields = authConfigDefinition.fields;
    expect(fields.clientSecretEnv.change).toBe("updates (writes the config again, without the secret)");
    expect(fields.clientSecretConfigKey.change).toBe(fields.clientSecretEnv.change);
    process.env["CLAIMS_SECRET_A"] = "claims-secret-a";
    process.env["CLAIMS_SECRET_B"] = "claims-secret-a";
    await made(authMount as unknown as ProviderImpl, { path: "claims-wo", connection: secrets() });
    const args = (env: string) => ({
      mount: "claims-wo",
      tenantId: "11111111-2222-4333-8444-555555555555",
      resource: "https://management.azure.com/",
      clientId: "11111111-2222-4333-8444-666666666666",
      clientSecretVersion: 1,
      clientSecretEnv: env,
      connection: secrets(),
    });
    const p = authConfig as unknown as ProviderImpl;
    const inputs = (await p.check({}, args("CLAIMS_SECRET_A"))).inputs as Record<string, unknown>;
    const created = await p.create(inputs);
    const next = (await p.check(inputs, args("CLAIMS_SECRET_B"))).inputs as Record<string, unknown>;
    const outs = created.outs as Record<string, unknown>;
    expect(await p.diff(created.id, outs, next)).toEqual({ changes: true });
    const from = dev.requestLog.length;
    await p.update(created.id, outs, next);
    const writes = dev.requestLog.slice(from).filter((e) => e.method !== "GET");
    expect(writes.map((e) => `${e.method} ${e.path}`)).toContain("POST /v1/auth/claims-wo/config");
  });
});
