/**
 * The auth resources against a secrets cluster whose active node changes, or whose standbys answer reads
 * before they caught up (OpenBao's standby reads), as the devserver reproduces them (faults `stale`,
 * `location`, LEADER_CHANGE): every object the provider wrote ends in state, finished or unfinished.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE } from "../../../devserver/core";
import { setConnectionOverrides } from "../../../provider/config";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import type { ProviderImpl } from "../../../provider/resources/common";
import { destroyStep, upStep, type Stated } from "../../helpers/engine-steps";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

const mount = authMount as unknown as ProviderImpl;
const role = authRole as unknown as ProviderImpl;
const config = authConfig as unknown as ProviderImpl;

let env: SecretsEnv;
let type: string;

beforeAll(async () => {
  env = await startSecretsEnv();
  type = env.controls.methodType;
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
});
afterAll(async () => {
  setConnectionOverrides({});
  await env?.close();
});
afterEach(() => {
  env.dev.faults.clear();
  env.dev.resetLog();
});

async function up(impl: ProviderImpl, state: Stated | undefined, news: Record<string, unknown>) {
  return (await capturingStderr(() => upStep(impl, state, news))).value;
}

const listReads = () => env.requests().filter((r) => r === "GET /v1/sys/auth").length;

describe("AuthMount read-back through a standby that lags the active node", () => {
  it("reads the mount list again until it shows the enabled mount, then creates", async () => {
    env.dev.faults.add({ service: "secrets", method: "GET", path: "/v1/sys/auth", stale: true, times: 3 });
    const r = await up(mount, undefined, { path: "lag1", type });
    expect(r.error).toBeUndefined();
    const found = await env.client.mounts.find("lag1");
    expect(r.state?.outs.accessor).toBe(found?.accessor);
    expect(listReads()).toBeGreaterThanOrEqual(4);
  });

  it("a mount that never shows within the bound is kept in state as unfinished, never left out", async () => {
    setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 300 } });
    try {
      env.dev.faults.add({ service: "secrets", method: "GET", path: "/v1/sys/auth", stale: true, times: Infinity });
      const r = await up(mount, undefined, { path: "lag2", type });
      expect(r.error?.message).toMatch(
        /enabled, but the mount list still did not show it after .* kept in the stack as unfinished/,
      );
      expect(r.state).toMatchObject({ id: "lag2", initError: true, outs: { incomplete: true } });
      // The standby catches up: the mount is there, the next `up` finishes it, and the one after has nothing to do.
      env.dev.faults.clear();
      expect(await env.client.mounts.find("lag2")).toBeDefined();
      const again = await up(mount, r.state, { path: "lag2", type });
      expect(again.error).toBeUndefined();
      expect(again.state?.outs.accessor).toBe((await env.client.mounts.find("lag2"))?.accessor);
      expect((await up(mount, again.state, { path: "lag2", type })).ran).toBe("same");
    } finally {
      setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
    }
  });
});

describe("AuthMount enable answered by a standby's redirect", () => {
  it("a 307 to another node is not followed (no token leaves); the list shows the path free, so the enable goes again", async () => {
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/sys/auth/redir1",
      status: 307,
      location: "http://127.0.0.1:9",
      times: 1,
    });
    const r = await up(mount, undefined, { path: "redir1", type });
    expect(r.error).toBeUndefined();
    expect(r.state?.outs.accessor).toBe((await env.client.mounts.find("redir1"))?.accessor);
    expect(env.requests().filter((x) => x === "POST /v1/sys/auth/redir1")).toHaveLength(2);
  });
});

describe("AuthMount enable while no node is active", () => {
  it("the enable (not safe to repeat blindly) reads the list between tries and goes again until a node is active, beyond maxAttempts", async () => {
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/sys/auth/elect0",
      times: 4,
      ...LEADER_CHANGE.noActiveNode,
    });
    const r = await up(mount, undefined, { path: "elect0", type });
    expect(r.error).toBeUndefined();
    expect(r.state?.outs.accessor).toBe((await env.client.mounts.find("elect0"))?.accessor);
    const sent = env.requests();
    expect(sent.filter((x) => x === "POST /v1/sys/auth/elect0")).toHaveLength(5);
    // Never two enables without a read of the list between them.
    const order = sent.filter((x) => x === "POST /v1/sys/auth/elect0" || x === "GET /v1/sys/auth");
    for (let i = 1; i < order.length; i++)
      expect(order[i] === "POST /v1/sys/auth/elect0" && order[i - 1] === order[i]).toBe(false);
  });
});

describe("AuthRole write while no node is active", () => {
  it("the role write (idempotent) waits out the 503s beyond maxAttempts and is written once it lands", async () => {
    const m = await up(mount, undefined, { path: "elect1", type });
    expect(m.error).toBeUndefined();
    env.dev.resetLog();
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/auth/elect1/role/r1",
      times: 4,
      ...LEADER_CHANGE.noActiveNode,
    });
    const news = { mount: "elect1", name: "r1", boundServicePrincipalIds: ["sp-1"], tokenTtl: "1h" };
    const r = await up(role, undefined, news);
    expect(r.error).toBeUndefined();
    expect(env.requests().filter((x) => x === "POST /v1/auth/elect1/role/r1")).toHaveLength(5);
    expect(await env.client.roles.read("elect1", "r1")).toBeDefined();
  });
});

describe("AuthRole write through a standby whose mount table lags", () => {
  it("a 404 `no handler for route` under a mount just enabled is sent again until the node routes it", async () => {
    const m = await up(mount, undefined, { path: "route1", type });
    expect(m.error).toBeUndefined();
    env.dev.resetLog();
    // As a three-node OpenBao 2.6.2 answered a config write right after an active-node change.
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/auth/route1/role/r1",
      times: 3,
      status: 404,
      body: { errors: ['no handler for route "auth/route1/role/r1". route entry not found.'] },
    });
    const news = { mount: "route1", name: "r1", boundServicePrincipalIds: ["sp-1"], tokenTtl: "1h" };
    const r = await up(role, undefined, news);
    expect(r.error).toBeUndefined();
    expect(env.requests().filter((x) => x === "POST /v1/auth/route1/role/r1")).toHaveLength(4);
    expect(await env.client.roles.read("route1", "r1")).toBeDefined();
  });

  it("a mount that is really missing still fails, with the hint, once the bound is spent", async () => {
    setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 300 } });
    try {
      const news = { mount: "route-none", name: "r1", boundServicePrincipalIds: ["sp-1"], tokenTtl: "1h" };
      const r = await up(role, undefined, news);
      expect(r.error?.message).toMatch(/no auth method is enabled at "route-none\/"; create the AuthMount first/);
      expect(env.requests().filter((x) => x === "POST /v1/auth/route-none/role/r1").length).toBeGreaterThan(1);
    } finally {
      setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
    }
  });
});

describe("AuthRole write redirected by a standby to the active node the cluster names", () => {
  it("is followed there at once (the cluster names the node at GET /v1/sys/leader) and written once", async () => {
    const m = await up(mount, undefined, { path: "follow1", type });
    expect(m.error).toBeUndefined();
    env.dev.resetLog();
    // The same devserver under another origin stands for the active node.
    const active = env.dev.urls.secrets.replace("127.0.0.1", "localhost");
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/auth/follow1/role/r1",
      status: 307,
      location: active,
      times: 1,
    });
    env.dev.faults.add({
      service: "secrets",
      method: "GET",
      path: "/v1/sys/leader",
      status: 200,
      body: { ha_enabled: true, is_self: false, leader_address: active },
      times: 1,
    });
    const news = { mount: "follow1", name: "r1", boundServicePrincipalIds: ["sp-1"], tokenTtl: "1h" };
    const r = await up(role, undefined, news);
    expect(r.error).toBeUndefined();
    expect(env.requests().filter((x) => x === "POST /v1/auth/follow1/role/r1")).toHaveLength(2);
    expect(env.requests().filter((x) => x === "GET /v1/sys/leader")).toHaveLength(1);
    expect(await env.client.roles.read("follow1", "r1")).toBeDefined();
  });
});

describe("AuthRole and AuthConfig read and delete through a standby whose mount table lags", () => {
  const unrouted = (method: string, path: string, times: number) =>
    env.dev.faults.add({
      service: "secrets",
      method,
      path,
      times,
      status: 404,
      body: { errors: [`no handler for route "${path.replace(/^\/v1\//, "")}". route entry not found.`] },
    });
  const sent = (line: string) => env.requests().filter((x) => x === line).length;

  async function roleOn(path: string): Promise<Stated> {
    expect((await up(mount, undefined, { path, type })).error).toBeUndefined();
    const r = await up(role, undefined, {
      mount: path,
      name: "r1",
      boundServicePrincipalIds: ["sp-1"],
      tokenTtl: "1h",
    });
    expect(r.error).toBeUndefined();
    env.dev.resetLog();
    return r.state as Stated;
  }

  it("a refresh of a role whose mount the list shows reads again until the node routes it, and keeps the role", async () => {
    const state = await roleOn("lagread1");
    unrouted("GET", "/v1/auth/lagread1/role/r1", 3);
    const read = await role.read(state.id, state.outs);
    expect(read.id).toBe(state.id);
    expect(read.props).toMatchObject({
      mount: "lagread1",
      name: "r1",
      boundServicePrincipalIds: ["sp-1"],
      tokenTtl: "1h",
    });
    expect(sent("GET /v1/auth/lagread1/role/r1")).toBe(4);
  });

  it("a delete of a role whose mount the list shows is sent again until the node routes it: the role is gone", async () => {
    const state = await roleOn("lagdel1");
    unrouted("DELETE", "/v1/auth/lagdel1/role/r1", 2);
    const d = await destroyStep(role, state);
    expect(d.error).toBeUndefined();
    expect(sent("DELETE /v1/auth/lagdel1/role/r1")).toBe(3);
    expect(await env.client.roles.read("lagdel1", "r1")).toBeUndefined();
    expect(await env.client.mounts.find("lagdel1")).toBeDefined();
  });

  it("when the bound is spent, the refresh fails saying the mount is listed, never reporting the role gone", async () => {
    setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 300 } });
    try {
      const state = await roleOn("lagread2");
      unrouted("GET", "/v1/auth/lagread2/role/r1", Infinity);
      await expect(role.read(state.id, state.outs)).rejects.toThrow(/the mount list shows "lagread2\/"/);
      expect(sent("GET /v1/auth/lagread2/role/r1")).toBeGreaterThan(1);
    } finally {
      setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
    }
  });

  /** The next `times` answers of `GET /v1/sys/leader` say the service is a cluster (the devserver is one node). */
  const clustered = (times: number) =>
    env.dev.faults.add({
      service: "secrets",
      method: "GET",
      path: "/v1/sys/leader",
      times,
      status: 200,
      body: { ha_enabled: true, is_self: false, leader_address: "https://10.0.0.1:8200" },
    });
  /** The next `times` mount lists come from a node whose mount table lags: they show no auth mount at all. */
  const laggingList = (times: number) =>
    env.dev.faults.add({
      service: "secrets",
      method: "GET",
      path: "/v1/sys/auth",
      times,
      status: 200,
      body: { data: {} },
    });

  it("in a cluster, a list from a node whose mount table lags too is asked again: the refresh keeps the role", async () => {
    const state = await roleOn("lagread5");
    unrouted("GET", "/v1/auth/lagread5/role/r1", 1);
    laggingList(2);
    clustered(1);
    const read = await role.read(state.id, state.outs);
    expect(read.id).toBe(state.id);
    expect(read.props).toMatchObject({ mount: "lagread5", name: "r1", boundServicePrincipalIds: ["sp-1"] });
    expect(sent("GET /v1/sys/auth")).toBe(3);
    expect(sent("GET /v1/sys/leader")).toBe(1);
  });

  it("in a cluster, an AuthMount the first list does not show is listed again: the refresh keeps the mount", async () => {
    const created = await up(mount, undefined, { path: "lagmnt1", type });
    expect(created.error).toBeUndefined();
    env.dev.resetLog();
    laggingList(1);
    clustered(1);
    const state = created.state as Stated;
    const read = await mount.read(state.id, state.outs);
    expect(read.id).toBe(state.id);
    expect(read.props).toMatchObject({ path: "lagmnt1", accessor: state.outs.accessor });
    expect(sent("GET /v1/sys/auth")).toBe(2);
    expect(sent("GET /v1/sys/leader")).toBe(1);
  });

  it("in a cluster, such a delete is sent again once the list shows the mount: the role is not left on the server", async () => {
    const state = await roleOn("lagdel2");
    unrouted("DELETE", "/v1/auth/lagdel2/role/r1", 1);
    laggingList(1);
    clustered(1);
    expect((await destroyStep(role, state)).error).toBeUndefined();
    expect(sent("DELETE /v1/auth/lagdel2/role/r1")).toBe(2);
    expect(await env.client.roles.read("lagdel2", "r1")).toBeUndefined();
  });

  it("in a cluster, a role whose mount was really disabled reads as gone once the lists asked again within the bound never show it", async () => {
    setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 300 } });
    try {
      const state = await roleOn("lagread6");
      expect(await env.client.mounts.disable("lagread6")).toBe(true);
      env.dev.resetLog();
      clustered(1);
      expect(await role.read(state.id, state.outs)).toEqual({});
      expect(sent("GET /v1/sys/auth")).toBeGreaterThan(1);
    } finally {
      setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
    }
  });

  it("in a cluster, the roles under one disabled mount read at once share one leader ask and its bounded relist", async () => {
    setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 300 } });
    try {
      const first = await roleOn("lagread7");
      const states = [first];
      for (const name of ["r2", "r3", "r4"]) {
        const r = await up(role, undefined, { mount: "lagread7", name, boundServicePrincipalIds: ["sp-1"] });
        expect(r.error).toBeUndefined();
        states.push(r.state as Stated);
      }
      expect(await env.client.mounts.disable("lagread7")).toBe(true);
      env.dev.resetLog();
      // Every leader answer says cluster: a read that asked on its own would also relist on its own.
      clustered(Infinity);
      const reads = await Promise.all(states.map((s) => role.read(s.id, s.outs)));
      expect(reads).toEqual([{}, {}, {}, {}]);
      expect(sent("GET /v1/sys/leader")).toBe(1);
      // A second miss after the first settled asks again: nothing is kept.
      expect(await role.read(first.id, first.outs)).toEqual({});
      expect(sent("GET /v1/sys/leader")).toBe(2);
    } finally {
      setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 }, timeoutMs: 5_000 });
    }
  });

  it("a role whose mount was really disabled reads as gone after one read of the list, and deletes as done", async () => {
    const state = await roleOn("lagread3");
    expect(await env.client.mounts.disable("lagread3")).toBe(true);
    env.dev.resetLog();
    expect(await role.read(state.id, state.outs)).toEqual({});
    expect(sent("GET /v1/auth/lagread3/role/r1")).toBe(1);
    expect(sent("GET /v1/sys/auth")).toBe(1);
    // One node (the leader status says so, no token sent): its list settles it.
    expect(sent("GET /v1/sys/leader")).toBe(1);
    expect((await destroyStep(role, state)).error).toBeUndefined();
    expect(sent("DELETE /v1/auth/lagread3/role/r1")).toBe(1);
  });

  it("a create that meets someone else's mount through such answers refuses it, never taking it as its own", async () => {
    // Same settings as the resource and something configured on it: someone else's mount. A lagging node
    // that does not route it answers the config read or the role list with 404 `no handler for route`, which
    // must not read as "nothing configured on it" (the rule for continuing an earlier unconfirmed enable).
    await env.client.mounts.enable("lagown1", { type, description: "mine" });
    await env.client.roles.write("lagown1", "r1", { bound_service_principal_ids: ["sp-1"] });
    unrouted("GET", "/v1/auth/lagown1/role", 1);
    expect((await up(mount, undefined, { path: "lagown1", type, description: "mine" })).error?.message).toMatch(
      /already enabled/,
    );
    await env.client.mounts.enable("lagown2", { type, description: "mine" });
    await env.client.config.write("lagown2", {
      tenant_id: "72f988bf-86f1-41af-91ab-2d7cd011db47",
      resource: "https://management.azure.com/",
    });
    unrouted("GET", "/v1/auth/lagown2/config", 1);
    expect((await up(mount, undefined, { path: "lagown2", type, description: "mine" })).error?.message).toMatch(
      /already enabled/,
    );
    expect(await env.client.roles.read("lagown1", "r1")).toBeDefined();
    expect(await env.client.config.read("lagown2")).toBeDefined();
  });

  it("a token that may not read the mount list keeps the 404 meaning gone", async () => {
    const state = await roleOn("lagread4");
    unrouted("GET", "/v1/auth/lagread4/role/r1", 1);
    env.dev.faults.add({
      service: "secrets",
      method: "GET",
      path: "/v1/sys/auth",
      times: 1,
      status: 403,
      body: { errors: ["permission denied"] },
    });
    expect(await role.read(state.id, state.outs)).toEqual({});
    expect(sent("GET /v1/auth/lagread4/role/r1")).toBe(1);
    expect(sent("GET /v1/sys/auth")).toBe(1);
  });

  it("an AuthConfig refresh and delete through such answers keep, then really delete, the config", async () => {
    expect((await up(mount, undefined, { path: "lagcfg1", type })).error).toBeUndefined();
    const c = await up(config, undefined, {
      mount: "lagcfg1",
      tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47",
      resource: "https://management.azure.com/",
      clientId: "00000002-0000-0000-c000-000000000000",
      clientSecret: "lag-client-secret",
    });
    expect(c.error).toBeUndefined();
    const state = c.state as Stated;
    env.dev.resetLog();
    unrouted("GET", "/v1/auth/lagcfg1/config", 2);
    const read = await config.read(state.id, state.outs);
    expect(read.id).toBe(state.id);
    expect(read.props).toMatchObject({ mount: "lagcfg1", clientId: "00000002-0000-0000-c000-000000000000" });
    expect(sent("GET /v1/auth/lagcfg1/config")).toBe(3);
    unrouted("DELETE", "/v1/auth/lagcfg1/config", 2);
    expect((await destroyStep(config, state)).error).toBeUndefined();
    expect(sent("DELETE /v1/auth/lagcfg1/config")).toBe(3);
    expect(await env.client.config.read("lagcfg1")).toBeUndefined();
    expect(await env.client.mounts.find("lagcfg1")).toBeDefined();
  });
});
