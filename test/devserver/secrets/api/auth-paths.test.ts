import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { call, DENIED } from "../http";

// The paths below `auth/<mount>/` come from each mount type's path table: what answers 404 (a path the table
// does not have) and what answers 405 (an operation the path does not have), with or without a token.

let server: DevServer;
let base: string;
let root: string;

const PATH = "1 error occurred:\n\t* unsupported path\n\n";
const OPERATION = "1 error occurred:\n\t* unsupported operation\n\n";

beforeAll(async () => {
  server = await startDevServer();
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
  expect((await call(base, "POST", "/v1/sys/auth/team/cloud", { token: root, body: { type: "cloud" } })).status).toBe(
    204,
  );
  const role = { bound_group_ids: ["g"] };
  expect((await call(base, "POST", "/v1/auth/team/cloud/role/web", { token: root, body: role })).status).toBe(204);
  const policy = 'path "auth/team/cloud/role/*" { capabilities = ["create"] }';
  expect((await call(base, "POST", "/v1/sys/policies/acl/creator", { token: root, body: { policy } })).status).toBe(
    204,
  );
});

afterAll(async () => {
  await server.close();
});

describe("auth/ path tables", () => {
  const cases: readonly (readonly [string, string, boolean, number, unknown])[] = [
    // the cloud method's table, on a nested mount path
    ["LIST", "/v1/auth/team/cloud/config", true, 405, { errors: [OPERATION] }],
    ["GET", "/v1/auth/team/cloud/role", true, 405, { errors: [OPERATION] }],
    ["DELETE", "/v1/auth/team/cloud/role", true, 405, { errors: [OPERATION] }],
    ["LIST", "/v1/auth/team/cloud/role/web", true, 405, { errors: [OPERATION] }],
    ["LIST", "/v1/auth/team/cloud/role/-bad-", true, 404, { errors: [PATH] }],
    // a trailing slash is dropped before the table is read: the role list, not a role named ""
    ["GET", "/v1/auth/team/cloud/role/", true, 405, { errors: [OPERATION] }],
    ["GET", "/v1/auth/team/cloud/roles", true, 404, { errors: [PATH] }],
    ["GET", "/v1/auth/team/cloud/login", true, 405, { errors: [OPERATION] }],
    // login is reached without a token: its method is checked before any token
    ["GET", "/v1/auth/team/cloud/login", false, 405, { errors: [OPERATION] }],
    ["DELETE", "/v1/auth/team/cloud/login", false, 405, { errors: [OPERATION] }],
    ["GET", "/v1/auth/team/cloud/config", false, 403, { errors: ["permission denied"] }],
    ["GET", "/v1/auth/team/cloud/nothing", false, 403, { errors: ["permission denied"] }],
    // the token mount's table
    ["LIST", "/v1/auth/token/lookup-self", true, 405, { errors: [OPERATION] }],
    ["DELETE", "/v1/auth/token/lookup-self", true, 405, { errors: [OPERATION] }],
    ["GET", "/v1/auth/token/revoke-self", true, 405, { errors: [OPERATION] }],
    ["POST", "/v1/auth/token/login", true, 404, { errors: [PATH] }],
    ["GET", "/v1/auth/token/create", true, 404, { errors: [PATH] }],
    // no mount at all
    [
      "GET",
      "/v1/auth/elsewhere/config",
      true,
      404,
      { errors: ['no handler for route "auth/elsewhere/config". route entry not found.'] },
    ],
  ];
  for (const [method, path, withToken, status, body] of cases) {
    it(`${method} ${path}${withToken ? "" : " without a token"} answers ${status}`, async () => {
      const r = await call(base, method, path, withToken ? { token: root } : {});
      expect([r.status, r.body]).toEqual([status, body]);
    });
  }

  it("HEAD reads a config or role path, but is an unsupported operation on lookup-self", async () => {
    expect((await call(base, "HEAD", "/v1/auth/team/cloud/role/web", { token: root })).status).toBe(200);
    expect((await call(base, "HEAD", "/v1/auth/token/lookup-self", { token: root })).status).toBe(405);
  });

  it("a write to a role needs create while the name is not a stored role, update once it is", async () => {
    const creator = server.createToken("secrets", { policies: ["creator"] });
    const write = (name: string): ReturnType<typeof call> =>
      call(base, "POST", `/v1/auth/team/cloud/role/${name}`, { token: creator, body: { bound_group_ids: ["g"] } });
    expect((await write("fresh")).status).toBe(204);
    const again = await write("fresh");
    expect([again.status, again.body]).toEqual([403, { errors: [DENIED] }]);
    // a name the service does not serve is not a stored role either: create passes, the path is unsupported
    const bad = await write("-bad-");
    expect([bad.status, bad.body]).toEqual([404, { errors: [PATH] }]);
  });
});
