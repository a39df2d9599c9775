import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, parseRetryAfter, retryDelay, type Outcome, type Safety } from "../../../provider/http/retry";

const policy = { ...DEFAULT_RETRY };
const one = () => 0.999999;

describe("retryDelay", () => {
  it.each<{ name: string; outcome: Outcome; idempotent: boolean; retried: boolean }>([
    { name: "GET 503", outcome: { kind: "status", status: 503 }, idempotent: true, retried: true },
    { name: "GET 502", outcome: { kind: "status", status: 502 }, idempotent: true, retried: true },
    { name: "GET 504", outcome: { kind: "status", status: 504 }, idempotent: true, retried: true },
    { name: "GET 412", outcome: { kind: "status", status: 412 }, idempotent: true, retried: true },
    { name: "GET 429", outcome: { kind: "status", status: 429 }, idempotent: true, retried: true },
    {
      name: "GET 500 transient",
      outcome: { kind: "status", status: 500, transient500: true },
      idempotent: true,
      retried: true,
    },
    { name: "GET 500 deterministic", outcome: { kind: "status", status: 500 }, idempotent: true, retried: false },
    { name: "GET 400", outcome: { kind: "status", status: 400 }, idempotent: true, retried: false },
    { name: "GET 403", outcome: { kind: "status", status: 403 }, idempotent: true, retried: false },
    { name: "GET 404", outcome: { kind: "status", status: 404 }, idempotent: true, retried: false },
    { name: "GET 501", outcome: { kind: "status", status: 501 }, idempotent: true, retried: false },
    { name: "POST 503", outcome: { kind: "status", status: 503 }, idempotent: false, retried: false },
    {
      name: "POST 500 transient",
      outcome: { kind: "status", status: 500, transient500: true },
      idempotent: false,
      retried: false,
    },
    { name: "POST 429", outcome: { kind: "status", status: 429 }, idempotent: false, retried: true },
    {
      name: "POST refused",
      outcome: { kind: "network", code: "ECONNREFUSED", beforeSend: true },
      idempotent: false,
      retried: true,
    },
    {
      name: "POST reset",
      outcome: { kind: "network", code: "ECONNRESET", beforeSend: false },
      idempotent: false,
      retried: false,
    },
    {
      name: "GET reset",
      outcome: { kind: "network", code: "ECONNRESET", beforeSend: false },
      idempotent: true,
      retried: true,
    },
  ])("$name: retried=$retried", ({ outcome, idempotent, retried }) => {
    expect(retryDelay(policy, 1, outcome, idempotent, one) !== undefined).toBe(retried);
  });

  it("grows the jitter ceiling exponentially up to the cap", () => {
    const o: Outcome = { kind: "status", status: 503 };
    const p = { ...policy, maxAttempts: 20 };
    expect(retryDelay(p, 1, o, true, one)).toBe(249);
    expect(retryDelay(p, 2, o, true, one)).toBe(499);
    expect(retryDelay(p, 3, o, true, one)).toBe(999);
    expect(retryDelay(p, 10, o, true, one)).toBe(9999);
    expect(retryDelay(p, 1, o, true, () => 0)).toBe(0);
  });

  it("stops after maxAttempts", () => {
    const o: Outcome = { kind: "status", status: 503 };
    expect(retryDelay({ ...policy, maxAttempts: 3 }, 2, o, true, one)).toBeDefined();
    expect(retryDelay({ ...policy, maxAttempts: 3 }, 3, o, true, one)).toBeUndefined();
  });

  it("waits at least the server's Retry-After, capped by maxDelayMs", () => {
    expect(retryDelay(policy, 1, { kind: "status", status: 429, retryAfterMs: 3000 }, false, () => 0)).toBe(3000);
    expect(retryDelay(policy, 1, { kind: "status", status: 503, retryAfterMs: 60_000 }, true, () => 0)).toBe(10_000);
  });
});

describe("retryDelay through a leader change", () => {
  const notApplied: Outcome = { kind: "status", status: 500, leader: "not-applied" };
  const maybeApplied: Outcome = { kind: "status", status: 500, leader: "maybe-applied" };

  it.each<{ outcome: Outcome; safety: Safety; retried: boolean }>([
    { outcome: notApplied, safety: "idempotent", retried: true },
    { outcome: notApplied, safety: "check-and-set", retried: true },
    { outcome: notApplied, safety: "unguarded", retried: false },
    { outcome: maybeApplied, safety: "idempotent", retried: true },
    { outcome: maybeApplied, safety: "check-and-set", retried: false },
    { outcome: maybeApplied, safety: "unguarded", retried: false },
  ])("$outcome.leader, $safety: retried=$retried", ({ outcome, safety, retried }) => {
    expect(retryDelay(policy, 1, outcome, safety, one) !== undefined).toBe(retried);
  });

  it("is not bounded by maxAttempts (the caller bounds it by time) and keeps growing, in the upper half of the ceiling", () => {
    const p = { ...policy, maxAttempts: 2 };
    expect(retryDelay(p, 5, notApplied, "idempotent", () => 0)).toBe(2000);
    expect(retryDelay(p, 5, notApplied, "idempotent", one)).toBe(3999);
    expect(retryDelay(p, 40, notApplied, "idempotent", one)).toBe(9999);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter("0.5")).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:03 GMT", now)).toBe(3000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});
