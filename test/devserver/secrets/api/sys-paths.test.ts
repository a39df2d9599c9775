import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { call, DENIED } from "../http";

// The `sys/` routes, one table per resource (the mount table, ACL policies, capabilities-self, remount): each
// method of a path reaches its own handler, a method the path lacks answers 405, and each handler checks the
// token's ACL on the path (with `sudo` where the service asks for it) before anything else.

let server: DevServer;
let base: string;
let root: string;

beforeAll(async () => {
  server = await startDevServer();
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
});

afterAll(async () => {
  await server.close();
});

/** Status, body and `allow` header of a request. */
async function answer(method: string, path: string, options: { token?: string; body?: unknown } = {}) {
  const r = await call(base, method, path, { token: root, ...options });
  return { status: r.status, body: r.body, ...(r.headers.allow !== undefined ? { allow: r.headers.allow } : {}) };
}

describe("sys/ route tables", () => {
  it("the mount table: enable (POST or PUT), read (GET or HEAD), disable, and 405 for another method", async () => {
    expect(await answer("PUT", "/v1/sys/auth/team/cloud", { body: { type: "cloud" } })).toEqual({
      status: 204,
      body: undefined,
    });
    expect((await answer("GET", "/v1/sys/auth/team/cloud")).status).toBe(200);
    expect((await answer("HEAD", "/v1/sys/auth/team/cloud")).status).toBe(200);
    expect(await answer("POST", "/v1/sys/auth/team/cloud", { body: { type: "cloud" } })).toEqual({
      status: 400,
      body: { errors: ["path is already in use at team/cloud/"] },
    });
    expect(await answer("GET", "/v1/sys/auth/nothing")).toEqual({
      status: 400,
      body: { errors: ["No auth engine at nothing/"] },
    });
    expect(await answer("DELETE", "/v1/sys/auth/token")).toEqual({
      status: 400,
      body: { errors: ["token credential backend cannot be disabled"] },
    });
    expect(await answer("DELETE", "/v1/sys/auth/nothing")).toEqual({ status: 204, body: undefined });
    const patch = await answer("PATCH", "/v1/sys/auth/team/cloud");
    expect([patch.status, patch.allow]).toEqual([405, "GET, POST, DELETE"]);
    const listed = await answer("GET", "/v1/sys/auth");
    expect(Object.keys((listed.body as { data: object }).data)).toEqual(["team/cloud/", "token/"]);
  });

  it("a mount's tune: sys/auth/<path>/tune needs sudo, sys/mounts/auth/<path>/tune does not", async () => {
    const policy = 'path "sys/*" { capabilities = ["read", "update"] }';
    expect((await answer("POST", "/v1/sys/policies/acl/tuner", { body: { policy } })).status).toBe(204);
    const tuner = server.createToken("secrets", { policies: ["tuner"] });
    const tune = { default_lease_ttl: "1h" };
    expect(await answer("POST", "/v1/sys/auth/team/cloud/tune", { token: tuner, body: tune })).toEqual({
      status: 403,
      body: { errors: [DENIED] },
    });
    expect(await answer("POST", "/v1/sys/mounts/auth/team/cloud/tune", { token: tuner, body: tune })).toEqual({
      status: 204,
      body: undefined,
    });
    const read = await answer("GET", "/v1/sys/mounts/auth/team/cloud/tune", { token: tuner });
    expect([read.status, (read.body as { data: { default_lease_ttl: unknown } }).data.default_lease_ttl]).toEqual([
      200, 3600,
    ]);
    expect(await answer("GET", "/v1/sys/auth/nothing/tune")).toEqual({
      status: 400,
      body: { errors: ['cannot fetch sysview for path "auth/nothing/"'] },
    });
  });

  it("a DELETE of a mount's tune answers 405 once the token may send it there, as OpenBao 2.6.2 does", async () => {
    // The root token's answers are the recorded transcript's (test/fixtures/recorded/openbao-2.6.2/tune-delete.json,
    // test/recorded/transcripts.test.ts); this is the order of the checks, seen by hand on OpenBao 2.6.2: the
    // token's capabilities (sudo for sys/auth/...) first, then the operation the path lacks.
    const policy = 'path "sys/*" { capabilities = ["delete"] }';
    expect((await answer("POST", "/v1/sys/policies/acl/untuner", { body: { policy } })).status).toBe(204);
    const untuner = server.createToken("secrets", { policies: ["untuner"] });
    expect(await answer("DELETE", "/v1/sys/auth/team/cloud/tune", { token: untuner })).toEqual({
      status: 403,
      body: { errors: [DENIED] },
    });
    expect(await answer("DELETE", "/v1/sys/mounts/auth/team/cloud/tune", { token: untuner })).toEqual({
      status: 405,
      body: { errors: ["1 error occurred:\n\t* unsupported operation\n\n"] },
    });
    expect((await answer("DELETE", "/v1/sys/policies/acl/untuner")).status).toBe(204);
  });

  it("ACL policies on the current path and the legacy one, whose text is called rules", async () => {
    expect(
      await answer("POST", "/v1/sys/policy/Legacy", { body: { rules: 'path "a" { capabilities = ["read"] }' } }),
    ).toEqual({
      status: 204,
      body: undefined,
    });
    expect((await answer("GET", "/v1/sys/policy/legacy")).body).toMatchObject({
      data: { name: "legacy", rules: 'path "a" { capabilities = ["read"] }' },
    });
    expect((await answer("GET", "/v1/sys/policies/acl/LEGACY")).body).toMatchObject({
      data: { name: "legacy", policy: 'path "a" { capabilities = ["read"] }' },
    });
    expect(await answer("POST", "/v1/sys/policies/acl/other", { body: { rules: 'path "a" {}' } })).toEqual({
      status: 400,
      body: { errors: ["'policy' parameter not supplied or empty"] },
    });
    expect((await answer("GET", "/v1/sys/policies/acl/root")).body).toMatchObject({
      data: { name: "root", policy: "" },
    });
    expect((await answer("GET", "/v1/sys/policy/root")).body).toMatchObject({ data: { name: "root", rules: "" } });
    expect((await answer("LIST", "/v1/sys/policies/acl")).body).toMatchObject({
      data: { keys: ["default", "legacy", "root", "tuner"] },
    });
    expect((await answer("GET", "/v1/sys/policy")).body).toMatchObject({
      keys: ["default", "legacy", "root", "tuner"],
      policies: ["default", "legacy", "root", "tuner"],
    });
    expect(await answer("DELETE", "/v1/sys/policy/legacy")).toEqual({ status: 204, body: undefined });
    expect(await answer("GET", "/v1/sys/policies/acl/legacy")).toEqual({ status: 404, body: { errors: [] } });
    expect(await answer("DELETE", "/v1/sys/policies/acl/root")).toEqual({
      status: 400,
      body: { errors: ['cannot delete "root" policy'] },
    });
  });

  it("capabilities-self, and remount's status of an unknown migration", async () => {
    const one = await answer("POST", "/v1/sys/capabilities-self", { body: { path: "/sys/auth" } });
    expect(one.body).toMatchObject({ capabilities: ["root"], "/sys/auth": ["root"] });
    expect(await answer("POST", "/v1/sys/capabilities-self", { body: {} })).toEqual({
      status: 400,
      body: { errors: ["paths must be supplied"] },
    });
    expect(await answer("GET", "/v1/sys/remount/status/nope")).toEqual({ status: 404, body: { errors: [] } });
  });
});
