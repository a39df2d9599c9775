/** The AuthMount provider's methods called directly against the devserver over real HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { authMount } from "../../../provider/resources/auth-mount";
import type { AuthMountInputs, AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

let env: SecretsEnv;
let type: string;
beforeAll(async () => {
  env = await startSecretsEnv();
  type = env.controls.methodType;
});
afterAll(async () => {
  await env.close();
});
beforeEach(() => {
  env.dev.resetLog();
});

async function checked(news: Record<string, unknown>, olds: Record<string, unknown> = {}): Promise<AuthMountInputs> {
  const res = await authMount.check(olds, { type, ...news });
  expect(res.failures ?? []).toEqual([]);
  return res.inputs as AuthMountInputs;
}

async function created(
  news: Record<string, unknown>,
): Promise<{ id: string; outs: AuthMountOutputs; inputs: AuthMountInputs }> {
  const inputs = await checked(news);
  const res = await authMount.create(inputs);
  return { id: res.id, outs: res.outs as AuthMountOutputs, inputs };
}

async function refreshed(id: string, outs: AuthMountOutputs) {
  return authMount.read(id, outs);
}

describe("AuthMount", () => {
  it("creates a mount with description and tune, outputs every input plus accessor and schema version", async () => {
    const { id, outs } = await created({
      path: "/a1/",
      description: "d",
      tune: { defaultLeaseTtl: "1h", maxLeaseTtl: 7200, tokenType: "default-service", auditNonHmacRequestKeys: ["x"] },
    });
    expect(id).toBe("a1");
    expect(outs).toMatchObject({
      path: "a1",
      type,
      description: "d",
      tune: { defaultLeaseTtl: "1h", maxLeaseTtl: 7200 },
      schemaVersion: SCHEMA_VERSION,
    });
    expect(outs.accessor).toMatch(/^auth_/);
    const tune = await env.client.mounts.readTune("a1");
    expect(tune).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 7200, audit_non_hmac_request_keys: ["x"] });
  });

  it("has no diff after create → refresh → preview", async () => {
    const news = {
      path: "a2",
      description: "d",
      tune: { defaultLeaseTtl: "30m", listingVisibility: "unauth", passthroughRequestHeaders: ["X-A", "X-B"] },
    };
    const { id, outs } = await created(news);
    const read = await refreshed(id, outs);
    expect(read.id).toBe("a2");
    expect(read.props).toEqual(outs);
    // The engine's next check starts from the inputs the refresh stored, and comes to the same ones.
    const again = await checked(news, { ...read.inputs });
    expect(read.inputs).toEqual(again);
    expect(await authMount.diff(id, read.props as AuthMountOutputs, again)).toEqual({ changes: false });
  });

  it("keeps the accessor among an existing mount's checked inputs (a preview knows it), a moved mount's too, not a replaced one's", async () => {
    const { id, outs, inputs } = await created({ path: "acc1", description: "old" });
    const from = env.dev.requestLog.length;
    // Old inputs from before the accessor joined them: looked up once.
    expect(await checked({ path: "acc1", description: "new" }, inputs)).toMatchObject({
      path: "acc1",
      accessor: outs.accessor,
    });
    expect(env.dev.requestLog.length).toBe(from + 1);
    // Old inputs that carry it: no request.
    const withIt = { ...inputs, accessor: outs.accessor };
    expect(await checked({ path: "acc1", description: "newer" }, withIt)).toMatchObject({ accessor: outs.accessor });
    expect(env.dev.requestLog.length).toBe(from + 1);
    // A new path moves the mount (remount), which keeps its accessor; replaced (disableRemount) it gets a new one.
    expect(await checked({ path: "acc2" }, withIt)).toMatchObject({ accessor: outs.accessor });
    expect(await checked({ path: "acc2", disableRemount: true }, withIt)).not.toHaveProperty("accessor");
    expect(await checked({ path: "acc2", local: true }, withIt)).not.toHaveProperty("accessor");
    // One more request: whether the server can remount, asked once per client.
    expect(env.dev.requestLog.length).toBe(from + 2);
    expect(env.dev.requestLog.at(-1)?.path).toMatch(/^\/v1\/sys\/remount\/status\//);
    expect(id).toBe("acc1");
  });

  it("updates description and tune in place", async () => {
    const { id, outs } = await created({ path: "a3", description: "old", tune: { defaultLeaseTtl: 60 } });
    const news = await checked({ path: "a3", description: "new", tune: { defaultLeaseTtl: 120, maxLeaseTtl: "1h" } });
    expect(await authMount.diff(id, outs, news)).toEqual({ changes: true });
    const up = await authMount.update(id, outs, news);
    expect(up.outs).toMatchObject({ description: "new", accessor: outs.accessor });
    expect(await env.client.mounts.readTune("a3")).toMatchObject({
      description: "new",
      default_lease_ttl: 120,
      max_lease_ttl: 3600,
    });
    const read = await refreshed(id, up.outs as AuthMountOutputs);
    expect(await authMount.diff(id, read.props as AuthMountOutputs, news)).toEqual({ changes: false });
  });

  it("replaces on a type or local change, deleting first and warning that config and roles go with it", async () => {
    const { id, outs } = await created({ path: "a4" });
    const news = await checked({ path: "a4", local: true });
    const { value: diff, lines } = await capturingStderr(() => authMount.diff(id, outs, news));
    expect(diff).toEqual({ changes: true, replaces: ["local"], deleteBeforeReplace: true });
    expect(lines.join("\n")).toMatch(/config and roles are deleted/);
    // The engine then deletes the old mount and creates the new one.
    await authMount.delete(id, outs);
    const fresh = await authMount.create(news);
    expect((await env.client.mounts.find("a4"))?.local).toBe(true);
    expect(fresh.outs?.accessor).not.toBe(outs.accessor);
  });

  it("deletes, and deleting again succeeds", async () => {
    const { id, outs } = await created({ path: "a5" });
    await authMount.delete(id, outs);
    expect(await env.client.mounts.find("a5")).toBeUndefined();
    await expect(authMount.delete(id, outs)).resolves.toBeUndefined();
  });

  it("refuses to create over an existing mount unless adopt is set, then takes it over", async () => {
    await env.client.mounts.enable("a6", { type, description: "theirs" });
    const inputs = await checked({ path: "a6", description: "ours" });
    await expect(authMount.create(inputs)).rejects.toThrow(/already enabled at "a6\/".*adopt: true/);
    await expect(authMount.create(inputs)).rejects.toMatchObject({ name: "ResourceError", code: "already_exists" });
    const adopted = await authMount.create({ ...inputs, adopt: true });
    expect(adopted.id).toBe("a6");
    expect((await env.client.mounts.find("a6"))?.description).toBe("ours");
  });

  it("refuses to adopt a mount of another type or locality", async () => {
    await env.client.mounts.enable("a7", { type, local: true });
    const inputs = await checked({ path: "a7", adopt: true });
    await expect(authMount.create(inputs)).rejects.toThrow(/cannot adopt.*local is true/);
  });

  it("refresh picks up an out-of-band change, and the next diff shows it", async () => {
    const news = { path: "a8", description: "mine", tune: { maxLeaseTtl: "2h" } };
    const { id, outs } = await created(news);
    await env.client.mounts.tune("a8", { description: "changed", max_lease_ttl: "3h", default_lease_ttl: "1m" });
    const read = await refreshed(id, outs);
    expect(read.props).toMatchObject({ description: "changed", tune: { maxLeaseTtl: 10800 } });
    // Only the tune fields the user set are refreshed and compared.
    expect((read.props as AuthMountOutputs).tune).toEqual({ maxLeaseTtl: 10800 });
    expect(await authMount.diff(id, read.props as AuthMountOutputs, await checked(news))).toEqual({ changes: true });
  });

  it("refresh after deletion reports the mount as gone", async () => {
    const { id, outs } = await created({ path: "a9" });
    await env.client.mounts.disable("a9");
    const read = await refreshed(id, outs);
    expect(read.id).toBeUndefined();
  });
});

describe("AuthMount refresh requests", () => {
  const listsOf = () => env.dev.requestLog.filter((e) => e.method === "GET" && e.path === "/v1/sys/auth").length;

  it("reads every mount of a refresh through one sys/auth list, at once or one after another", async () => {
    const mounts = [];
    for (const p of ["r1", "r2", "r3", "r4"]) mounts.push(await created({ path: p }));
    env.dev.resetLog();
    const together = await Promise.all(mounts.map((m) => refreshed(m.id, m.outs)));
    expect(listsOf()).toBe(1);
    expect(together.map((r) => r.id)).toEqual(["r1", "r2", "r3", "r4"]);
    env.dev.resetLog();
    for (const m of mounts) expect((await refreshed(m.id, m.outs)).props).toEqual(m.outs);
    expect(listsOf()).toBe(1);
  });

  it("takes tune settings from the list, and reads the tune only for a TTL the mount inherits", async () => {
    const tune = {
      defaultLeaseTtl: "1h",
      maxLeaseTtl: "2h",
      listingVisibility: "unauth",
      auditNonHmacRequestKeys: ["a"],
    };
    const set = await created({ path: "t1", tune });
    const inherits = await created({ path: "t2", tune: { defaultLeaseTtl: 0 } });
    const tunes = () => env.dev.requestLog.filter((e) => e.path.endsWith("/tune")).map((e) => e.path);
    env.dev.resetLog();
    const [a, b] = await Promise.all([refreshed(set.id, set.outs), refreshed(inherits.id, inherits.outs)]);
    expect(listsOf()).toBe(1);
    // 0 in the list means inherited: only the tune read says the value inherited (what refresh stored before).
    expect(tunes()).toEqual(["/v1/sys/auth/t2/tune"]);
    expect(a.props).toEqual(set.outs);
    expect((b.props as AuthMountOutputs).tune).toEqual({ defaultLeaseTtl: 2764800 });
    // A change made elsewhere is seen from the list alone.
    await env.client.mounts.tune("t1", { max_lease_ttl: "3h", audit_non_hmac_request_keys: ["a", "b"] });
    env.dev.resetLog();
    const changed = await refreshed(set.id, set.outs);
    expect(tunes()).toEqual([]);
    expect((changed.props as AuthMountOutputs).tune).toEqual({
      ...tune,
      maxLeaseTtl: 10800,
      auditNonHmacRequestKeys: ["a", "b"],
    });
  });

  it("lists again after a write of this connection: a mount disabled since is seen as gone", async () => {
    const a = await created({ path: "w1" });
    const b = await created({ path: "w2" });
    await refreshed(a.id, a.outs); // the list now holds w2 too
    await authMount.delete(b.id, b.outs);
    env.dev.resetLog();
    expect((await refreshed(b.id, b.outs)).id).toBeUndefined();
    expect(listsOf()).toBe(1);
  });
});
