/**
 * The HTTP core through a leader change, against the devserver core's leader-change answers (modelled on
 * Nomad 1.6.5 and OpenBao 2.6.2; devserver/core/faults.ts LEADER_CHANGE): which calls are sent again, how
 * long, over which connections, and where a standby's redirect is followed.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE, startServiceHost, type DevServer, type ServiceModule } from "../../../devserver/core";
import { ApiError, isOutcomeUnknown } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";
import { closeConnections } from "../../../provider/http/pools";
import type { RequestOptions } from "../../../provider/http/request";
import type { ConnectionOptions } from "../../../provider/http/settings";
import { capturingStderr } from "../resources/auth-helpers";

/** The active node the secrets module's `GET /v1/sys/leader` names (a function: it may change over a call). */
let namedLeader: () => string | undefined = () => undefined;
/** How long `GET /v1/sys/leader` takes to answer (a node busy with an election). */
let leaderAnswerMs = 0;

function echoModule(name: "secrets" | "scheduler"): ServiceModule {
  return {
    name,
    routes(r) {
      r.get("/v1/echo", (req) => ({ json: { ok: true, q: req.query.get("q") } }));
      r.post("/v1/echo", (req) => ({ json: { got: req.json() } }));
      if (name === "secrets") {
        r.get(
          "/v1/sys/leader",
          async () => {
            if (leaderAnswerMs > 0) await new Promise((resolve) => setTimeout(resolve, leaderAnswerMs));
            const leader = namedLeader();
            return {
              json: leader === undefined ? { ha_enabled: false } : { ha_enabled: true, leader_address: leader },
            };
          },
          { auth: false },
        );
      }
    },
  };
}

let dev: DevServer;
/** A listener that stands for another node: it counts what reaches it and answers 200. */
let other: http.Server;
let otherUrl: string;
const otherSeen: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  dev = await startServiceHost({ services: [echoModule("secrets"), echoModule("scheduler")] });
  other = http.createServer((req, res) => {
    otherSeen.push(req.headers);
    res.setHeader("content-type", "application/json");
    res.end('{"ok":"other"}');
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dev.close();
  await new Promise<void>((resolve) => other.close(() => resolve()));
});
afterEach(() => {
  dev.faults.clear();
  dev.resetLog();
  otherSeen.length = 0;
  namedLeader = () => undefined;
  leaderAnswerMs = 0;
});

/** Addresses where nothing listens (nodes that are down). */
const DEAD_A = "http://127.0.0.1:9";
const DEAD_B = "http://127.0.0.1:7";
const leaderAsks = () => dev.requestLog.filter((e) => e.path === "/v1/sys/leader").length;

/** Two attempts at most by count: a leader change must outlast that, bounded by time instead. */
function core(service: "secrets" | "scheduler", extra: ConnectionOptions = {}): HttpCore {
  return new HttpCore(service, {
    address: dev.urls[service],
    token: dev.rootTokens[service],
    retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 },
    env: {},
    ...extra,
  });
}

const count = () => dev.requestLog.filter((e) => e.path === "/v1/echo").length;
const post = (extra: Partial<RequestOptions<unknown>> = {}): RequestOptions<unknown> => ({
  operation: "echo",
  method: "POST",
  path: "/v1/echo",
  body: { a: 1 },
  ...extra,
});
const quietly = <T>(fn: () => Promise<T>) => capturingStderr(fn);

describe("scheduler leader change", () => {
  it("a read goes through five 'No cluster leader' answers, beyond maxAttempts, and says the server is electing a leader", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: 5, ...LEADER_CHANGE.noLeader });
    const { value: res, lines } = await quietly(() =>
      core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    );
    expect(res.value).toEqual({ ok: true, q: null });
    expect(res.meta.attempts).toBe(6);
    expect(count()).toBe(6);
    // One progress line per election (throttled), naming what is happening, not a bare retry.
    expect(lines.filter((l) => /electing a leader/.test(l))).toHaveLength(1);
    expect(lines[0]).toMatch(
      /The scheduler at http:\/\/127\.0\.0\.1:\d+ is electing a leader \(GET \/v1\/echo: No cluster leader\)/,
    );
  });

  it("a read goes through the forwarded RPC's 'connection refused' to a dead leader", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: 3, ...LEADER_CHANGE.forwardRefused });
    const { value: res } = await quietly(() =>
      core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    );
    expect(res.meta.attempts).toBe(4);
  });

  it("a check-and-set write is sent again after 'No cluster leader' (not applied), beyond maxAttempts", async () => {
    dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/echo", times: 3, ...LEADER_CHANGE.noLeader });
    const { value: res } = await quietly(() => core("scheduler").request(post({ checkAndSet: true })));
    expect(res.value).toEqual({ got: { a: 1 } });
    expect(count()).toBe(4);
  });

  it("a check-and-set write is not sent again after 'rpc error: EOF' (the old leader may have applied it)", async () => {
    dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/echo", times: 1, ...LEADER_CHANGE.forwardLost });
    const err = await core("scheduler")
      .request(post({ checkAndSet: true }))
      .catch((e: unknown) => e);
    expect(ApiError.is(err)).toBe(true);
    expect(isOutcomeUnknown(err)).toBe(true);
    expect((err as ApiError).message).toMatch(/may or may not have been applied/);
    expect(count()).toBe(1);
  });

  it("an idempotent write is sent again after 'rpc error: EOF'", async () => {
    dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/echo", times: 2, ...LEADER_CHANGE.forwardLost });
    await quietly(() => core("scheduler").request(post({ idempotent: true })));
    expect(count()).toBe(3);
  });

  it("a write without a guard is never sent again; the error says it was not applied", async () => {
    dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/echo", times: 1, ...LEADER_CHANGE.noLeader });
    const err = (await core("scheduler")
      .request(post())
      .catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("server");
    expect(err.message).toMatch(/electing a leader; the write was not applied/);
    expect(count()).toBe(1);
  });

  it("a POST or PUT is not taken as safe to repeat unless its call site says so", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: 1, ...LEADER_CHANGE.forwardLost });
    await expect(core("scheduler").request(post({ method: "PUT" }))).rejects.toMatchObject({ status: 500 });
    expect(count()).toBe(1);
  });

  it("an election that outlasts the time budget fails with a message that says so", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: Infinity, ...LEADER_CHANGE.noLeader });
    const { value: err } = await quietly(() =>
      core("scheduler", { retry: { baseDelayMs: 5, maxDelayMs: 50, maxAttempts: 2, maxTotalMs: 400 } })
        .request({ operation: "echo", method: "GET", path: "/v1/echo" })
        .then(
          () => undefined,
          (e: unknown) => e as ApiError,
        ),
    );
    expect(err?.message).toMatch(
      /is electing a leader, and no node took the request in the [\d.]+ s since the first such answer \(the retries' time budget is 0\.4 s: retry\.maxTotalMs\)/,
    );
    expect(count()).toBeGreaterThan(2);
  });

  it("a blocking read that waited longer than the budget before the leader went away still gets the whole budget", async () => {
    // The server held the read 600 ms (a blocking query's wait), then the leader was gone.
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: 1, delayMs: 600, ...LEADER_CHANGE.noLeader });
    const { value: res } = await quietly(() =>
      core("scheduler", { retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2, maxTotalMs: 400 } }).request({
        operation: "echo",
        method: "GET",
        path: "/v1/echo",
      }),
    );
    expect(res.meta.attempts).toBe(2);
  });

  it("after a leader-change answer each attempt takes a new connection (a balancer may pick another node)", async () => {
    await closeConnections();
    const before = dev.stats().scheduler.connections;
    dev.faults.add({ service: "scheduler", path: "/v1/echo", times: 3, ...LEADER_CHANGE.noLeader });
    const { value: res } = await quietly(() =>
      core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    );
    expect(res.meta.attempts).toBe(4);
    // Four attempts: the second still goes over the first one's kept-alive connection (and closes it), the
    // third and fourth each open their own. Without fresh connections all four share one.
    expect(dev.stats().scheduler.connections - before).toBeGreaterThanOrEqual(3);
  });
});

describe("secrets service without an active node", () => {
  it("an idempotent write goes through 503 'no active Vault instance found', beyond maxAttempts", async () => {
    dev.faults.add({ service: "secrets", method: "POST", path: "/v1/echo", times: 4, ...LEADER_CHANGE.noActiveNode });
    const { value: res, lines } = await quietly(() => core("secrets").request(post({ idempotent: true })));
    expect(res.meta.attempts).toBe(5);
    expect(lines.join("\n")).toMatch(/secrets service at .* has no active node/);
  });

  it("a read goes through 'local node not active but active cluster node not found'", async () => {
    dev.faults.add({ service: "secrets", path: "/v1/echo", times: 3, ...LEADER_CHANGE.standbyWithoutActive });
    const { value: res } = await quietly(() =>
      core("secrets").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    );
    expect(res.meta.attempts).toBe(4);
  });

  it("a sealed node keeps the ordinary bounded retries (it waits for an operator, not an election)", async () => {
    dev.faults.add({
      service: "secrets",
      path: "/v1/echo",
      status: 503,
      body: { errors: ["Vault is sealed"] },
      times: Infinity,
    });
    await expect(core("secrets").request({ operation: "echo", method: "GET", path: "/v1/echo" })).rejects.toMatchObject(
      { code: "unavailable", attempts: 2 },
    );
  });
});

describe("a standby's 307", () => {
  it("to another address is not followed and the token never goes there; the read is retried through the configured address", async () => {
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 2 });
    const { value: res } = await quietly(() =>
      core("secrets").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    );
    expect(res.value).toEqual({ ok: true, q: null });
    expect(count()).toBe(3);
    expect(otherSeen).toHaveLength(0);
  });

  it("to the configured address itself is followed at once", async () => {
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: dev.urls.secrets, times: 1 });
    const delays: number[] = [];
    const res = await core("secrets", { hooks: { onRetry: (i) => delays.push(i.delayMs) } }).request({
      operation: "echo",
      method: "GET",
      path: "/v1/echo",
    });
    expect(res.value).toEqual({ ok: true, q: null });
    expect(delays).toEqual([0]);
  });

  it("of a write without a guard is neither followed nor repeated, and its outcome is unknown", async () => {
    dev.faults.add({ service: "secrets", method: "POST", path: "/v1/echo", status: 307, location: otherUrl, times: 1 });
    const err = (await core("secrets")
      .request(post())
      .catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe("unavailable");
    expect(err.status).toBe(307);
    expect(isOutcomeUnknown(err)).toBe(true);
    expect(err.message).toContain(`redirected the request to ${otherUrl}, which is not the configured address`);
    expect(count()).toBe(1);
    expect(otherSeen).toHaveLength(0);
  });

  it("to the active node the cluster itself names is followed at once, token and all, and sent there once", async () => {
    namedLeader = () => otherUrl;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 1 });
    const delays: number[] = [];
    const res = await core("secrets", { hooks: { onRetry: (i) => delays.push(i.delayMs) } }).request(
      post({ idempotent: true }),
    );
    expect(res.value).toEqual({ ok: "other" });
    expect(delays).toEqual([0]);
    expect(count()).toBe(1);
    expect(otherSeen).toHaveLength(1);
    expect(otherSeen[0]?.["x-vault-token"] ?? otherSeen[0]?.["x-svc-token"]).toBe(dev.rootTokens.secrets);
    // The cluster was asked without the token.
    expect(dev.requestLog.filter((e) => e.path === "/v1/sys/leader")).toHaveLength(1);
  });

  it("met by many calls at once: the cluster is asked once for all of them while its answer is on the way", async () => {
    namedLeader = () => otherUrl;
    leaderAnswerMs = 200;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 20 });
    const c = core("secrets");
    const results = await Promise.all(Array.from({ length: 20 }, () => c.request(post({ idempotent: true }))));
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 20 }, () => ({ ok: "other" })));
    expect(otherSeen).toHaveLength(20);
    expect(leaderAsks()).toBe(1);
    // A call aborted while the shared ask is on the way stops waiting; the others still get its answer.
    leaderAnswerMs = 400;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 2 });
    const aborted = new AbortController();
    const [gaveUp, went] = await Promise.all([
      c.request(post({ idempotent: true, signal: aborted.signal })).catch((e: unknown) => e),
      c.request(post({ idempotent: true })),
      new Promise((resolve) => setTimeout(resolve, 100)).then(() => aborted.abort()),
    ]);
    expect(gaveUp).toBeInstanceOf(Error);
    expect(went.value).toEqual({ ok: "other" });
    expect(otherSeen).toHaveLength(21);
    expect(leaderAsks()).toBe(2);
    leaderAnswerMs = 0;
    // A later redirect asks again: an answer is shared only while it is on the way, never kept.
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 1 });
    await c.request(post({ idempotent: true }));
    expect(leaderAsks()).toBe(3);
  });

  it("to a node the cluster does not name as active is not followed; the call goes on through the configured address", async () => {
    namedLeader = () => DEAD_A;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: otherUrl, times: 2 });
    const { value: res } = await quietly(() => core("secrets").request(post({ idempotent: true })));
    expect(res.value).toEqual({ got: { a: 1 } });
    expect(count()).toBe(3);
    expect(otherSeen).toHaveLength(0);
  });

  it("of a write without a guard: the cluster is not even asked, nothing goes to the named node", async () => {
    namedLeader = () => otherUrl;
    dev.faults.add({ service: "secrets", method: "POST", path: "/v1/echo", status: 307, location: otherUrl, times: 1 });
    await expect(core("secrets").request(post())).rejects.toMatchObject({ status: 307 });
    expect(otherSeen).toHaveLength(0);
    expect(leaderAsks()).toBe(0);
  });

  it("to a named active node that is down: tried once, then the call goes on through the configured address", async () => {
    namedLeader = () => DEAD_A;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: DEAD_A, times: 3 });
    const tried: string[] = [];
    const { value: res } = await quietly(() =>
      core("secrets", { hooks: { onRetry: (i) => tried.push(i.code ?? String(i.status)) } }).request(
        post({ idempotent: true }),
      ),
    );
    expect(res.value).toEqual({ got: { a: 1 } });
    // 307, the dead node (refused), 307, 307, then the write through the configured address.
    expect(tried.filter((t) => t === "ECONNREFUSED")).toHaveLength(1);
    expect(count()).toBe(4);
  });

  it("to a named active node that is down: the progress line says it could not be reached", async () => {
    // Seen on a three-node OpenBao 2.6.2 (test/real-clusters/combined-fault-run.test.ts): the line said
    // "(POST /v1/auth/<mount>/role/<role>: undefined)". Through `localhost`, an origin no other test's line
    // throttles.
    namedLeader = () => DEAD_A;
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: DEAD_A, times: 1 });
    const { value: res, lines } = await quietly(() =>
      core("secrets", { address: dev.urls.secrets.replace("127.0.0.1", "localhost") }).request(
        post({ idempotent: true }),
      ),
    );
    expect(res.value).toEqual({ got: { a: 1 } });
    const line = lines.find((l) => /has no active node/.test(l)) ?? "";
    expect(line).toContain(
      `POST /v1/echo: the active node the secrets service named (${DEAD_A}) could not be reached (ECONNREFUSED)`,
    );
    expect(line).not.toContain("undefined");
  });

  it("a leader change that moves on to a new active node gets the budget again from there", async () => {
    // Each named node is down for 0.6 s of a 1 s budget: 1.2 s in all, more than one budget.
    const t0 = Date.now();
    namedLeader = () => (Date.now() - t0 < 600 ? DEAD_A : DEAD_B);
    dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: DEAD_A, times: Infinity });
    setTimeout(() => {
      dev.faults.clear();
      dev.faults.add({ service: "secrets", path: "/v1/echo", status: 307, location: DEAD_B, times: Infinity });
    }, 600);
    setTimeout(() => dev.faults.clear(), 1_200);
    const { value: res } = await quietly(() =>
      core("secrets", { retry: { baseDelayMs: 20, maxDelayMs: 50, maxAttempts: 2, maxTotalMs: 1_000 } }).request(
        post({ idempotent: true }),
      ),
    );
    expect(res.value).toEqual({ got: { a: 1 } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_200);
  });
});
