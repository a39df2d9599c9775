/**
 * A resource's `connection`: the providers reach the cluster a resource's inputs (create, update) or state
 * (refresh, destroy) name, with stack config and the environment only for resources without one; another
 * address replaces the resource create-first, a new token updates state; one client per connection. Two
 * devservers on loopback stand for two clusters.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { SchedulerClient } from "../../../provider/clients/scheduler";
import { SecretsClient } from "../../../provider/clients/secrets";
import { setConnectionOverrides } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { closeConnections } from "../../../provider/http/pools";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import type { AuthMountInputs, AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { authRole } from "../../../provider/resources/auth-role";
import { connectionChange } from "../../../provider/resources/connection";
import { job } from "../../../provider/resources/job";
import type { JobInputs } from "../../../provider/resources/job/inputs";
import type { JobOutputs } from "../../../provider/resources/job/state";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { schedulerClient } from "../../../provider/resources/scheduler-client";
import { secretsClient } from "../../../provider/resources/auth-common";
import { batchJob } from "./job/harness";
import type { AuthConfigOutputs, JobVersionTagInputs } from "../../helpers/resource-types";

let a: DevServer;
let b: DevServer;
const saved = { ...process.env };

beforeAll(async () => {
  for (const k of Object.keys(process.env)) if (/^(SECRETS|SCHEDULER)_/.test(k)) delete process.env[k];
  [a, b] = await Promise.all([startDevServer(), startDevServer()]);
});
afterAll(async () => {
  Object.assign(process.env, saved);
  setStackConfig({});
  await Promise.all([a?.close(), b?.close()]);
});
afterEach(() => {
  setStackConfig({});
  setConnectionOverrides({});
});

const sched = (s: DevServer, token = s.rootTokens.scheduler) => ({
  service: "scheduler" as const,
  address: s.urls.scheduler,
  token,
});
const secrets = (s: DevServer, token = s.rootTokens.secrets) => ({
  service: "secrets" as const,
  address: s.urls.secrets,
  token,
});

async function checkedJob(news: Record<string, unknown>, olds: Record<string, unknown> = {}): Promise<JobInputs> {
  const r = await job.check(olds, news);
  expect(r.failures ?? []).toEqual([]);
  return r.inputs as JobInputs;
}

async function onServer(s: DevServer, id: string): Promise<boolean> {
  const c = new SchedulerClient({ address: s.urls.scheduler, token: s.rootTokens.scheduler, env: {} });
  return (await c.jobs.find(id)) !== undefined;
}

describe("state without a connection (stacks from before connections)", () => {
  it("diffs clean for every resource kind, and reads through stack config as before", async () => {
    setStackConfig({
      schedulerAddress: a.urls.scheduler,
      schedulerToken: a.rootTokens.scheduler,
      secretsAddress: a.urls.secrets,
      secretsToken: a.rootTokens.secrets,
    });
    const inputs = await checkedJob(batchJob("old-state"));
    const created = await job.create(inputs);
    const outs = created.outs as JobOutputs;
    expect(outs).not.toHaveProperty("connection");
    expect(await job.diff(created.id, outs, await checkedJob(batchJob("old-state"), inputs))).toEqual({
      changes: false,
    });
    expect((await job.read(created.id, outs)).id).toBe(created.id);

    const mountIn = (await authMount.check({}, { path: "oldmount" })).inputs as AuthMountInputs;
    const mount = await authMount.create(mountIn);
    expect(mount.outs).not.toHaveProperty("connection");
    const again = (await authMount.check(mountIn, { path: "oldmount" })).inputs as AuthMountInputs;
    expect(await authMount.diff(mount.id, mount.outs as AuthMountOutputs, again)).toEqual({ changes: false });

    const cfgIn = (await authConfig.check({}, cfgArgs("oldmount"))).inputs!;
    const cfg = await authConfig.create(cfgIn);
    expect(await authConfig.diff(cfg.id, cfg.outs as never, cfgIn)).toEqual({ changes: false });
    const roleIn = (await authRole.check({}, roleArgs("oldmount"))).inputs!;
    const role = await authRole.create(roleIn);
    expect(await authRole.diff(role.id, role.outs as never, roleIn)).toEqual({ changes: false });
    const tagIn = (await jobVersionTag.check({}, { jobId: "old-state", name: "v0" })).inputs as JobVersionTagInputs;
    const tag = await jobVersionTag.create(tagIn);
    expect(await jobVersionTag.diff(tag.id, tag.outs as never, tagIn)).toEqual({ changes: false });

    await jobVersionTag.delete(tag.id, tag.outs as never);
    await authRole.delete(role.id, role.outs as never);
    await authConfig.delete(cfg.id, cfg.outs as never);
    await authMount.delete(mount.id, mount.outs as AuthMountOutputs);
    await job.delete(created.id, outs);
  });

  it("adding a connection to the cluster stack config names is an update, not a replacement", () => {
    setStackConfig({ schedulerAddress: a.urls.scheduler + "/", schedulerToken: "t" });
    expect(connectionChange("scheduler", undefined, sched(a))).toBe("settings");
    expect(connectionChange("scheduler", undefined, sched(b))).toBe("moved");
    expect(connectionChange("scheduler", sched(a), undefined)).toBe("settings");
    expect(connectionChange("scheduler", undefined, undefined)).toBe("none");
  });
});

function cfgArgs(mount: string, connection?: unknown): Record<string, unknown> {
  return {
    mount,
    tenantId: "11111111-2222-4333-8444-555555555555",
    resource: "https://management.azure.com/",
    ...(connection !== undefined ? { connection } : {}),
  };
}

function roleArgs(mount: string, connection?: unknown): Record<string, unknown> {
  return {
    mount,
    name: "web",
    tokenPolicies: ["web"],
    boundGroupIds: ["12121212-3434-4565-8787-909090909090"],
    ...(connection !== undefined ? { connection } : {}),
  };
}

describe("a Job with a connection", () => {
  it("lives where its connection says; refresh and destroy use the state's connection without stack config", async () => {
    // Stack config names the other cluster: a resource with a connection must never use it.
    setStackConfig({ schedulerAddress: b.urls.scheduler, schedulerToken: b.rootTokens.scheduler });
    const inputs = await checkedJob({ ...batchJob("conn-a"), connection: sched(a) });
    const created = await job.create(inputs);
    const outs = created.outs as JobOutputs;
    expect(outs.connection).toEqual(sched(a));
    expect(await onServer(a, "conn-a")).toBe(true);
    expect(await onServer(b, "conn-a")).toBe(false);

    setStackConfig({});
    const read = await job.read(created.id, outs);
    expect(read.id).toBe(created.id);
    expect((read.props as JobOutputs).connection).toEqual(sched(a));
    await job.delete(created.id, outs);
    expect(await onServer(a, "conn-a")).toBe(false);
  });

  it("another address is a replacement, created there first; a rotated token is an update that keeps it in state", async () => {
    const t1 = a.createToken("scheduler", { capabilities: ["*"] });
    const inputs = await checkedJob({ ...batchJob("mover"), connection: sched(a, t1) });
    const created = await job.create(inputs);
    const outs = created.outs as JobOutputs;

    const moved = await checkedJob({ ...batchJob("mover"), connection: sched(b) }, inputs);
    expect(await job.diff(created.id, outs, moved)).toEqual({
      changes: true,
      replaces: ["connection"],
      deleteBeforeReplace: false,
    });
    // The same address spelled with a trailing slash is not a move.
    const slash = { ...sched(a, t1), address: a.urls.scheduler + "/" };
    const same = await checkedJob({ ...batchJob("mover"), connection: slash }, inputs);
    expect((await job.diff(created.id, outs, same)).replaces).toBeUndefined();

    // Rotation: a new token in the program, the old one revoked. The diff is an update (no replacement),
    // which works with the new token and keeps it in state; state from before the update still holds the old.
    const t2 = a.createToken("scheduler", { capabilities: ["*"] });
    a.revokeToken("scheduler", t1);
    const rotated = await checkedJob({ ...batchJob("mover"), connection: sched(a, t2) }, inputs);
    expect(await job.diff(created.id, outs, rotated)).toEqual({ changes: true });
    await expect(job.read(created.id, outs)).rejects.toThrow();
    const updated = (await job.update(created.id, outs, rotated)).outs as JobOutputs;
    expect(updated.connection).toEqual(sched(a, t2));
    expect((await job.read(created.id, updated)).id).toBe(created.id);

    // The engine's replacement: create on b, then delete on a with the state as it is.
    const there = await job.create(moved);
    expect(await onServer(b, "mover")).toBe(true);
    await job.delete(created.id, updated);
    expect(await onServer(a, "mover")).toBe(false);
    expect(await onServer(b, "mover")).toBe(true);
    await job.delete(there.id, there.outs as JobOutputs);
  });

  it("check refuses a secrets connection, and a setting the table does not have, by name", async () => {
    const wrong = await job.check({}, { ...batchJob("x"), connection: secrets(a) });
    expect(wrong.failures).toEqual([
      {
        property: "connection.service",
        reason: "must be a scheduler connection: make it with schedulerConnection(...)",
      },
    ]);
    const extra = await job.check({}, { ...batchJob("x"), connection: { ...sched(a), password: "p" } });
    expect(extra.failures).toEqual([{ property: "connection.password", reason: 'unknown field "password"' }]);
    const mountWrong = await authMount.check({}, { path: "x", connection: { ...sched(a), region: "r" } });
    expect((mountWrong.failures ?? []).map((f) => f.property).sort()).toEqual([
      "connection.region",
      "connection.service",
    ]);
  });

  it("never puts the connection's token in an error", async () => {
    const token = "tok-never-shown-0123456789";
    const inputs = await checkedJob({ ...batchJob("bad-token"), connection: sched(a, token) });
    const e = await job.create(inputs).then(
      () => undefined,
      (x: unknown) => x as Error,
    );
    expect(e).toBeInstanceOf(Error);
    expect(`${e?.message} ${e?.stack}`).not.toContain(token);
    // A token with a line break is refused at check, naming the input, not the value.
    const broken = await job.check({}, { ...batchJob("bad-token"), connection: sched(a, `${token}\n`) });
    expect(broken.failures?.map((f) => f.property)).toEqual(["connection.token"]);
    expect(JSON.stringify(broken.failures)).not.toContain(token);
  });
});

describe("an address with a user name or password", () => {
  it("is refused at check, naming connection.address and never the password, for every resource kind", async () => {
    const pw = "pw-never-shown-4711";
    const withUser = (address: string, user: string) => {
      const u = new URL(address);
      u.username = user;
      u.password = pw;
      return u.toString();
    };
    const addrA = withUser(a.urls.scheduler, "alice");
    const sAddr = withUser(a.urls.secrets, "bob");
    const refused = [
      await job.check({}, { ...batchJob("creds"), connection: { ...sched(a), address: addrA } }),
      await authMount.check({}, { path: "creds", connection: { ...secrets(a), address: sAddr } }),
      await authConfig.check({}, cfgArgs("creds", { ...secrets(a), address: sAddr })),
      await authRole.check(
        {},
        roleArgs("creds", { ...secrets(a), address: `${a.urls.secrets.replace("//", "//bob@")}` }),
      ),
    ];
    for (const r of refused) {
      expect(r.inputs).toBeUndefined();
      expect(r.failures?.map((f) => f.property)).toEqual(["connection.address"]);
      expect(r.failures?.[0]?.reason).toMatch(/must not hold a user name or password.*token/);
      expect(JSON.stringify(r.failures)).not.toContain(pw);
      expect(JSON.stringify(r.failures)).not.toContain("alice");
    }
    // Stack config and the environment: refused before any request, the value never repeated.
    setStackConfig({ secretsAddress: sAddr, secretsToken: a.rootTokens.secrets });
    const e = await authMount.create({ path: "creds", type: "cloud" } as AuthMountInputs).then(
      () => undefined,
      (x: unknown) => x as Error,
    );
    expect(e?.message).toMatch(/secrets service address \(from .*\) must not hold a user name or password/);
    expect(`${e?.message} ${e?.stack}`).not.toContain(pw);
    expect(await secretsClient(secrets(a)).mounts.find("creds")).toBeUndefined();
  });
});

describe("the auth resources with a connection", () => {
  it("create on their connection, move create-first, and refresh and delete through the state's connection", async () => {
    const on = (s: DevServer) => secrets(s);
    const mountIn = (await authMount.check({}, { path: "multi", connection: on(a) })).inputs as AuthMountInputs;
    const mount = await authMount.create(mountIn);
    const cfgIn = (await authConfig.check({}, cfgArgs("multi", on(a)))).inputs!;
    const cfg = await authConfig.create(cfgIn);
    const roleIn = (await authRole.check({}, roleArgs("multi", on(a)))).inputs!;
    const role = await authRole.create(roleIn);
    const onA = new SecretsClient({ address: a.urls.secrets, token: a.rootTokens.secrets, env: {} });
    const onB = new SecretsClient({ address: b.urls.secrets, token: b.rootTokens.secrets, env: {} });
    expect(await onA.roles.read("multi", "web")).toBeDefined();
    expect(await onB.mounts.find("multi")).toBeUndefined();

    for (const [p, id, outs, args] of [
      [authMount, mount.id, mount.outs, { path: "multi" }],
      [authConfig, cfg.id, cfg.outs, cfgArgs("multi")],
      [authRole, role.id, role.outs, roleArgs("multi")],
    ] as const) {
      const moved = (await p.check(outs as never, { ...args, connection: on(b) })).inputs!;
      expect(await p.diff(id, outs as never, moved as never)).toEqual({
        changes: true,
        replaces: ["connection"],
        deleteBeforeReplace: false,
      });
      const how = (await p.check(outs as never, { ...args, connection: { ...on(a), timeoutMs: 9000 } })).inputs!;
      const d = await p.diff(id, outs as never, how as never);
      expect(d.changes).toBe(true);
      expect(d.replaces ?? []).toEqual([]);
    }

    const refreshed = await authRole.read(role.id, role.outs as never);
    expect((refreshed.props as unknown as Record<string, unknown>).connection).toEqual(on(a));
    await authRole.delete(role.id, role.outs as never);
    await authConfig.delete(cfg.id, cfg.outs as never);
    await authMount.delete(mount.id, mount.outs as AuthMountOutputs);
    expect(await onA.mounts.find("multi")).toBeUndefined();
  });
});

describe("AuthConfig's workload-identity read-back", () => {
  const onExit: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(onExit.map((f) => f()));
  });

  it("reads the config through the resource's own connection, not the stack's default one", async () => {
    // The resource's cluster keeps workload identity (the enterprise edition); the stack's default one is an
    // OpenBao whose plugin has none, with a mount of the same path, configured.
    const [w, o] = await Promise.all([
      startDevServer({ secretsService: { workloadIdentity: true } }),
      startDevServer({ secretsService: { release: "openbao-2.6.2" } }),
    ]);
    onExit.push(
      () => w.close(),
      () => o.close(),
    );
    const onO = new SecretsClient({ address: o.urls.secrets, token: o.rootTokens.secrets, env: {} });
    await onO.mounts.enable("wif", { type: "cloud" });
    await onO.config.write("wif", {
      tenant_id: "11111111-2222-4333-8444-555555555555",
      resource: "https://x.example/",
    });
    setStackConfig({ secretsAddress: o.urls.secrets, secretsToken: o.rootTokens.secrets });
    const mountIn = (await authMount.check({}, { path: "wif", connection: secrets(w) })).inputs as AuthMountInputs;
    const mount = await authMount.create(mountIn);
    const wif = { identityTokenAudience: "api://AzureADTokenExchange", identityTokenTtl: 600 };
    const cfgIn = (await authConfig.check({}, { ...cfgArgs("wif", secrets(w)), ...wif })).inputs!;
    const cfg = await authConfig.create(cfgIn);
    expect(cfg.outs).toMatchObject(wif);
    expect(cfg.outs).not.toHaveProperty("incomplete");
    const outs = cfg.outs as AuthConfigOutputs;
    const updated = await authConfig.update(cfg.id, outs, { ...cfgIn, identityTokenTtl: 900 });
    expect(updated.outs).toMatchObject({ identityTokenTtl: 900 });
    expect(await onO.config.read("wif")).toBeDefined();
    await authConfig.delete(cfg.id, outs);
    await authMount.delete(mount.id, mount.outs as AuthMountOutputs);
  });
});

describe("one client per connection", () => {
  it("returns the same client for equal connections and another for another cluster or token", () => {
    const one = schedulerClient(sched(a));
    expect(schedulerClient({ ...sched(a) })).toBe(one);
    expect(schedulerClient(sched(b))).not.toBe(one);
    expect(schedulerClient(sched(a, "other"))).not.toBe(one);
    expect(secretsClient(secrets(a))).toBe(secretsClient(secrets(a)));
  });

  it("200 Jobs over two connections cost the requests and connections they cost over one, but one list per cluster", async () => {
    const N = 200;
    const run = async (conns: Array<ReturnType<typeof sched>>, prefix: string) => {
      await closeConnections();
      let requests = 0;
      let lists = 0;
      let connects = 0;
      setConnectionOverrides({
        hooks: {
          onRequest: ({ method, path }) => {
            if (method === "GET" && path === "/v1/jobs") lists++;
            else requests++;
          },
          onConnect: () => void connects++,
        },
      });
      const states: Array<{ id: string; outs: JobOutputs }> = [];
      for (let i = 0; i < N; i += 20) {
        const batch = Array.from({ length: Math.min(20, N - i) }, (_, k) => i + k);
        states.push(
          ...(await Promise.all(
            batch.map(async (n) => {
              const inputs = await checkedJob({ ...batchJob(`${prefix}-${n}`), connection: conns[n % conns.length] });
              const r = await job.create(inputs);
              return { id: r.id, outs: r.outs as JobOutputs };
            }),
          )),
        );
      }
      // A refresh: the engine reads every resource at once.
      await Promise.all(states.map((s) => job.read(s.id, s.outs)));
      await Promise.all(states.map((s) => job.delete(s.id, s.outs)));
      return { requests, lists, connects };
    };
    const single = await run([sched(a)], "one");
    const split = await run([sched(a), sched(b)], "two");
    expect(split.requests).toBe(single.requests);
    expect(single.requests).toBeGreaterThanOrEqual(N * 2);
    // The refresh lists each cluster's jobs once: one list per cluster, whatever the number of Jobs.
    expect(single.lists).toBe(1);
    expect(split.lists).toBe(2);
    // Connections are pooled per cluster (32 sockets at once at most; a socket the server closed while
    // idle is opened again), never opened per Job: far fewer than the Jobs on each cluster.
    expect(single.connects).toBeLessThan(N / 4);
    expect(split.connects).toBeLessThan(N / 2);
  }, 120_000);
});
