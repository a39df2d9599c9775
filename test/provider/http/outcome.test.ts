/**
 * Unknown outcomes in the HTTP core: a connection that breaks after the request was sent
 * is not "could not reach", and callers can tell a failure that may have been applied from one that was not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceHost, type DevServer, type ServiceModule } from "../../../devserver/core";
import { ApiError, isOutcomeUnknown } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";

const module: ServiceModule = {
  name: "secrets",
  routes(r) {
    r.post("/v1/thing", () => ({ json: { ok: true } }));
  },
};

let dev: DevServer;
beforeAll(async () => {
  dev = await startServiceHost({ services: [module] });
});
afterAll(async () => {
  await dev.close();
});

const core = (address: string) =>
  new HttpCore("secrets", { address, token: "t", retry: { baseDelayMs: 1, maxAttempts: 2 }, env: {} });

describe("a failure's outcome", () => {
  it("a reset once the connection was made is reported as a lost connection whose outcome is unknown, not as unreachable", async () => {
    dev.faults.add({ service: "secrets", method: "POST", path: "/v1/thing", reset: true });
    const err = (await core(dev.urls.secrets)
      .request({ operation: "write thing", method: "POST", path: "/v1/thing", body: {} })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("transport");
    expect(err.attempts).toBe(1);
    expect(err.message).not.toContain("could not reach");
    expect(err.message).toContain("was lost after the request was sent");
    expect(err.message).toContain("may or may not have applied it");
    expect(err.requestSent).toBe(true);
    expect(isOutcomeUnknown(err)).toBe(true);
  });

  it("a connection never made is unreachable, and surely not applied", async () => {
    const err = (await core("http://127.0.0.1:1")
      .request({ operation: "write thing", method: "POST", path: "/v1/thing", body: {} })
      .catch((e) => e)) as ApiError;
    expect(err.message).toContain("could not reach");
    expect(err.requestSent).toBe(false);
    expect(isOutcomeUnknown(err)).toBe(false);
  });

  it("5xx after sending is unknown; 429, 4xx and conflicts are not", async () => {
    for (const [status, unknown] of [
      [500, true],
      [502, true],
      [503, true],
      [504, true],
      [429, false],
      [400, false],
      [409, false],
    ] as const) {
      dev.faults.add({ service: "secrets", method: "POST", path: "/v1/thing", status, times: 2 });
      const err = (await core(dev.urls.secrets)
        .request({ operation: "write thing", method: "POST", path: "/v1/thing", body: {} })
        .catch((e) => e)) as ApiError;
      dev.faults.clear();
      expect([status, isOutcomeUnknown(err)]).toEqual([status, unknown]);
    }
  });
});
