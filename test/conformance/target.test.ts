/**
 * The conformance target refuses a variable that shapes only the devserver target when the tests are to
 * run against the cluster in the environment (`npm run conformance`), instead of ignoring it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { openTarget } from "./target";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("openTarget with CONFORMANCE_TARGET=env", () => {
  it.each(["CONFORMANCE_DEVSERVER_RELEASE", "CONFORMANCE_HEADERS"])("refuses %s, naming it", async (name) => {
    vi.stubEnv("CONFORMANCE_TARGET", "env");
    vi.stubEnv("SECRETS_ADDR", "http://127.0.0.1:9");
    vi.stubEnv("SCHEDULER_ADDR", "http://127.0.0.1:9");
    vi.stubEnv(name, name === "CONFORMANCE_HEADERS" ? "real" : "1.6.5");
    await expect(openTarget()).rejects.toThrow(`${name} applies to the devserver target only`);
  });
});
