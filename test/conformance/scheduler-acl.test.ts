/**
 * Conformance of ACL denials through the client: a token without the capability, a token limited to
 * another namespace, an unknown token and no token at all each fail with a clear permission_denied error
 * that never carries the token; no token configured means a request without one (never a placeholder). Tokens with chosen capabilities are minted by the devserver, so those
 * tests skip on a real cluster; the unknown-token test needs a cluster that enforces ACLs.
 */
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { ConfigError, isApiError, type ApiError } from "../../provider/errors";
import { ENV } from "../../provider/http/setting-table";
import { schedulerSide, serviceJob, type SchedulerSide } from "./scheduler-fixture";
import { devserverOr, openTarget, requestRecord, type ConformanceTarget } from "./target";

const MINTS = "mints a token with chosen capabilities";
const UNKNOWN_TOKEN = "00000000-1111-2222-3333-444444444444";
let target: ConformanceTarget;
let f: SchedulerSide;
let web: string;
let prefix: string;
beforeAll(async () => {
  target = await openTarget();
  f = schedulerSide(target);
  prefix = target.name("acl-");
  web = `${prefix}web`;
  await f.register({ Job: serviceJob(web) });
});
afterAll(() => target?.close());

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

/** Skips on a cluster that accepts a made-up token (ACLs off); the devserver always enforces them. */
async function requireAcls(t: Pick<TestContext, "skip">): Promise<void> {
  if (target.devserver !== undefined) return;
  const enforced = await f
    .clientWith({ token: UNKNOWN_TOKEN })
    .jobs.find(web)
    .then(
      () => false,
      (e: unknown) => isApiError(e, "permission_denied"),
    );
  if (!enforced) t.skip("skipped: this cluster does not enforce ACLs (a made-up token was accepted)");
}

describe("ACL denials", () => {
  it("lets a read-only token read and denies it register, plan, stop and revert", async (t) => {
    const dev = devserverOr(t, target, MINTS);
    const token = dev.createToken("scheduler", { capabilities: ["namespace:read-job", "namespace:list-jobs"] });
    const reader = f.clientWith({ token });
    const fresh = `${prefix}new`;
    expect((await reader.jobs.info(web)).value.ID).toBe(web);
    expect((await reader.jobs.listAll({ prefix })).map((s) => s.ID)).toEqual([web]);
    const e = await denied(reader.jobs.register({ Job: serviceJob(fresh) }), token);
    expect(e.message).toMatch(/^register job: POST \/v1\/jobs returned 403: Permission denied/);
    await denied(reader.jobs.plan(web, { Job: serviceJob(web) }), token);
    await denied(reader.jobs.stop(web), token);
    await denied(reader.versions.revert(web, { JobVersion: 0 }), token);
    expect(await f.client.jobs.find(fresh)).toBeUndefined();
  });

  it("denies a submit-only token the reads", async (t) => {
    const dev = devserverOr(t, target, MINTS);
    const token = dev.createToken("scheduler", { capabilities: ["namespace:submit-job"] });
    const writer = f.clientWith({ token });
    await denied(writer.jobs.info(web), token);
    await denied(writer.versions.versions(web), token);
    await denied(writer.jobs.listAll(), token);
  });

  it("denies PolicyOverride without namespace:policy-override, and allows the same register without it", async (t) => {
    const dev = devserverOr(t, target, MINTS);
    const token = dev.createToken("scheduler", { capabilities: ["namespace:submit-job", "namespace:read-job"] });
    const writer = f.clientWith({ token });
    const po = `${prefix}po`;
    f.purgeLater(po);
    await denied(writer.jobs.register({ Job: serviceJob(po), PolicyOverride: true }), token);
    await denied(writer.jobs.plan(po, { Job: serviceJob(po), PolicyOverride: true }), token);
    await writer.jobs.register({ Job: serviceJob(po) });
    expect((await writer.jobs.info(po)).value.ID).toBe(po);
  });

  it("denies dispatch without namespace:dispatch-job", async (t) => {
    const dev = devserverOr(t, target, MINTS);
    const token = dev.createToken("scheduler", { capabilities: ["namespace:submit-job", "namespace:read-job"] });
    await denied(f.clientWith({ token }).jobs.dispatch(web, {}), token);
  });

  it("denies a token limited to another namespace", async (t) => {
    const dev = devserverOr(t, target, MINTS);
    const token = dev.createToken("scheduler", { capabilities: ["namespace:read-job"], namespaces: ["team-b"] });
    await denied(f.clientWith({ token }).jobs.info(web), token);
    await denied(f.clientWith({ token, namespace: "default" }).records.allocations(web), token);
  });

  it("says 'ACL token not found' for an unknown token", async (t) => {
    await requireAcls(t);
    const e = await denied(f.clientWith({ token: UNKNOWN_TOKEN }).jobs.info(web), UNKNOWN_TOKEN);
    expect(e.message).toMatch(/ACL token not found/);
  });

  it("sends a request without a token when none is configured: 403 naming the token settings with ACLs, the job without", async () => {
    const env = {
      ...(target.scheduler.env ?? process.env),
      [ENV.scheduler.token]: undefined,
      [ENV.scheduler.anonymous]: undefined,
    };
    const record = requestRecord();
    const client = new SchedulerClient({
      ...target.scheduler,
      token: undefined,
      env,
      retry: { maxAttempts: 1 },
      hooks: record.hooks,
    });
    const got: { ID?: string | null } | Error = await client.jobs.info(web).then(
      (r) => r.value,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    expect(record.sent).toEqual([`GET /v1/job/${web}`]);
    if (got instanceof Error) {
      expect(got).not.toBeInstanceOf(ConfigError);
      expect(isApiError(got, "permission_denied")).toBe(true);
      expect(got.message).toMatch(/SCHEDULER_TOKEN/);
    } else {
      expect(got.ID).toBe(web);
    }
  });
});
