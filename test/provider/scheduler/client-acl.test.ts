/**
 * ACL denials through the client: a token without the capability, a token limited to another namespace,
 * an unknown token and no token at all each fail with a clear permission_denied error that never carries
 * the token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchedulerClient } from "../../../provider/clients/scheduler";
import { ConfigError, isApiError, type ApiError } from "../../../provider/errors";
import { serviceJob, startScheduler, type SchedulerFixture } from "./client-fixture";

let f: SchedulerFixture;
beforeAll(async () => {
  f = await startScheduler({ acl: true });
  await f.client.jobs.register({ Job: serviceJob("acl-web") });
});
afterAll(async () => {
  await f.server.close();
});

async function denied(p: Promise<unknown>, token: string): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isApiError(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  expect(e.code).toBe("permission_denied");
  expect(e.status).toBe(403);
  expect(e.message).toMatch(/check that the scheduler token .* is valid and grants this operation/);
  expect(e.message).not.toContain(token);
  expect(JSON.stringify(e)).not.toContain(token);
  return e;
}

describe("ACL denials", () => {
  it("lets a read-only token read and denies it register, plan, stop and revert", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:read-job", "namespace:list-jobs"] });
    const reader = f.clientWith({ token });
    expect((await reader.jobs.info("acl-web")).value.ID).toBe("acl-web");
    expect((await reader.jobs.listAll({ prefix: "acl-" })).map((s) => s.ID)).toEqual(["acl-web"]);
    const e = await denied(reader.jobs.register({ Job: serviceJob("acl-new") }), token);
    expect(e.message).toMatch(/^register job: POST \/v1\/jobs returned 403: Permission denied/);
    await denied(reader.jobs.plan("acl-web", { Job: serviceJob("acl-web") }), token);
    await denied(reader.jobs.stop("acl-web"), token);
    await denied(reader.versions.revert("acl-web", { JobVersion: 0 }), token);
    expect(await f.client.jobs.find("acl-new")).toBeUndefined();
  });

  it("denies a submit-only token the reads", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:submit-job"] });
    const writer = f.clientWith({ token });
    await denied(writer.jobs.info("acl-web"), token);
    await denied(writer.versions.versions("acl-web"), token);
    await denied(writer.jobs.listAll(), token);
  });

  it("denies PolicyOverride without namespace:policy-override, and allows the same register without it", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:submit-job", "namespace:read-job"] });
    const writer = f.clientWith({ token });
    await denied(writer.jobs.register({ Job: serviceJob("acl-po"), PolicyOverride: true }), token);
    await denied(writer.jobs.plan("acl-po", { Job: serviceJob("acl-po"), PolicyOverride: true }), token);
    await writer.jobs.register({ Job: serviceJob("acl-po") });
    expect((await writer.jobs.info("acl-po")).value.ID).toBe("acl-po");
  });

  it("denies dispatch without namespace:dispatch-job", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:submit-job", "namespace:read-job"] });
    await denied(f.clientWith({ token }).jobs.dispatch("acl-web", {}), token);
  });

  it("denies a token limited to another namespace", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:read-job"], namespaces: ["team-b"] });
    await denied(f.clientWith({ token }).jobs.info("acl-web"), token);
    await denied(f.clientWith({ token, namespace: "default" }).records.allocations("acl-web"), token);
  });

  it("says 'ACL token not found' for an unknown token", async () => {
    const token = "00000000-1111-2222-3333-444444444444";
    const e = await denied(f.clientWith({ token }).jobs.info("acl-web"), token);
    expect(e.message).toMatch(/ACL token not found/);
  });

  it("asks for a token before sending anything when none is configured", async () => {
    const client = new SchedulerClient({ address: f.server.urls.scheduler, env: {} });
    await expect(client.jobs.info("acl-web")).rejects.toBeInstanceOf(ConfigError);
  });
});
