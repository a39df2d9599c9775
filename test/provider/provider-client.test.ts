/**
 * The providers' client of each service is made once per provider host (issue 9: a 200-Job refresh made
 * 400 clients, each resolving its settings and hashing its pool key, about 20 ms of the host's time) and
 * made again whenever what it is made from changes: stack config, connection overrides, the service's
 * environment variables. Calls keep working across closeConnections, which a shared client outlives.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { providerClient, setConnectionOverrides, setStackConfig } from "../../provider/config";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { closeConnections } from "../../provider/http/core";
import { ConfigError } from "../../provider/errors";
import { job } from "../../provider/resources/job";
import type { JobOutputs } from "../../provider/resources/job/state";
import { createJob, startHarness, type Harness } from "./resources/job/harness";

let made = 0;
const scheduler = () =>
  providerClient("scheduler", (o) => {
    made++;
    return new SchedulerClient(o);
  });

describe("providerClient", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    setConnectionOverrides({});
    setStackConfig({});
  });

  it("returns one client while nothing it is made from changes, and a new one after any change", () => {
    setStackConfig({ schedulerAddress: "http://127.0.0.1:1", schedulerToken: "t1" });
    made = 0;
    const a = scheduler();
    expect(scheduler()).toBe(a);
    expect(made).toBe(1);

    setStackConfig({ schedulerAddress: "http://127.0.0.1:1", schedulerToken: "t2" });
    const b = scheduler();
    expect(b).not.toBe(a);
    expect(b.core.connection.token).toBe("t2");

    process.env["SCHEDULER_NAMESPACE"] = "web";
    const c = scheduler();
    expect(c).not.toBe(b);
    expect(c.core.connection.namespace).toBe("web");

    setConnectionOverrides({ timeoutMs: 1234 });
    const d = scheduler();
    expect(d).not.toBe(c);
    expect(d.core.connection.timeoutMs).toBe(1234);
    expect(scheduler()).toBe(d);
    expect(made).toBe(4);
  });

  it("makes nothing it cannot: a missing address throws on every call until it is set", () => {
    setStackConfig({});
    delete process.env["SCHEDULER_ADDR"];
    expect(() => scheduler()).toThrow(ConfigError);
    expect(() => scheduler()).toThrow(/address is not set/);
    process.env["SCHEDULER_ADDR"] = "http://127.0.0.1:2";
    expect(scheduler().core.connection.origin).toBe("http://127.0.0.1:2");
  });
});

describe("the Job provider's shared client", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
    setStackConfig({});
  });

  it("reads after closeConnections (the shared client takes a new pool)", async () => {
    const s = await createJob({
      job: {
        ID: "shared-client",
        Name: "shared-client",
        Type: "batch",
        Datacenters: ["dc1"],
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "true" } }] }],
      },
      waitForDeployment: false,
      purgeOnDestroy: true,
    });
    const first = await job.read(s.id, s.outs);
    await closeConnections();
    const again = await job.read(s.id, s.outs);
    expect((again.props as JobOutputs).jobModifyIndex).toBe((first.props as JobOutputs).jobModifyIndex);
    await job.delete(s.id, s.outs);
  });
});
