/**
 * The providers' client of each service is made once per provider host (otherwise a 200-Job refresh would make
 * 400 clients, each resolving its settings and hashing its pool key, about 20 ms of the host's time) and
 * made again whenever what it is made from changes: stack config, connection overrides, the service's
 * environment variables. Calls keep working across closeConnections, which a shared client outlives.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  configure,
  connectionOptions,
  providerClient,
  setConnectionOverrides,
  stackConfigValue,
} from "../../provider/config";
import { setStackConfig } from "../helpers/stack-config";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { HttpCore } from "../../provider/http/core";
import { closeConnections } from "../../provider/http/pools";
import { schedulerClient } from "../../provider/resources/scheduler-client";
import { schedulerCore } from "../../provider/resources/scheduler-core";
import { ConfigError } from "../../provider/errors";
import { job } from "../../provider/resources/job";
import type { JobOutputs } from "../../provider/resources/job/state";
import { batchJob, createJob, startHarness, type Harness } from "./resources/job/harness";

describe("configure and connectionOptions", () => {
  afterEach(() => {
    setConnectionOverrides({});
    setStackConfig({});
  });

  it("turns every stack config key of a service into its connection option, and nothing else", async () => {
    const values: Record<string, string> = {
      "pulumi-secrets-scheduler:schedulerAddress": "http://h:1",
      "pulumi-secrets-scheduler:schedulerToken": "tok",
      "pulumi-secrets-scheduler:schedulerNamespace": "ns",
      "pulumi-secrets-scheduler:schedulerRegion": "eu",
      "pulumi-secrets-scheduler:schedulerCaCert": "/ca.pem",
      "pulumi-secrets-scheduler:schedulerClientCert": "/c.pem",
      "pulumi-secrets-scheduler:schedulerClientKey": "/k.pem",
      "pulumi-secrets-scheduler:schedulerTlsServerName": "name",
      "pulumi-secrets-scheduler:schedulerHeaderStyle": "real",
      "pulumi-secrets-scheduler:schedulerTokenHeader": "X-Tok",
      "pulumi-secrets-scheduler:schedulerTimeoutMs": "1500",
      "pulumi-secrets-scheduler:schedulerAnonymous": "true",
      "pulumi-secrets-scheduler:schedulerDangerouslySkipTlsVerify": "true",
      "pulumi-secrets-scheduler:secretsAddress": "http://s:2",
      "pulumi-secrets-scheduler:secretsRegion": "not-a-secrets-setting",
      "pulumi-secrets-scheduler:secretsAnonymous": "true",
      "pulumi-secrets-scheduler:secretsToken": "",
      "pulumi-secrets-scheduler:secretsTimeoutMs": "soon",
      "pulumi-secrets-scheduler:secretsDangerouslySkipTlsVerify": "1",
      "myproj:other": "x",
    };
    const asked: string[] = [];
    await configure({
      config: {
        get: (k) => {
          asked.push(k);
          return values[k];
        },
      },
    });
    expect(connectionOptions("scheduler")).toEqual({
      optionsFrom: "stack-config",
      address: "http://h:1",
      token: "tok",
      namespace: "ns",
      region: "eu",
      caCert: "/ca.pem",
      clientCert: "/c.pem",
      clientKey: "/k.pem",
      tlsServerName: "name",
      headerStyle: "real",
      headerNames: { token: "X-Tok" },
      timeoutMs: 1500,
      anonymous: true,
      dangerouslySkipTlsVerify: true,
    });
    // Only the secrets service's own keys; an empty value is unset; a timeout is read as a number, flags as "true".
    expect(connectionOptions("secrets")).toEqual({
      optionsFrom: "stack-config",
      address: "http://s:2",
      timeoutMs: NaN,
    });
    expect(asked.filter((k) => !k.startsWith("pulumi-secrets-scheduler:"))).toEqual([]);
    expect(new Set(asked).size).toBe(24);
    expect(stackConfigValue("myproj:other")).toBe("x");
    expect(stackConfigValue("pulumi-secrets-scheduler:secretsToken")).toBeUndefined();
  });

  it("adds the connection overrides: the retry policy always, a timeout only when stack config sets none", () => {
    setConnectionOverrides({ retry: { maxAttempts: 2 }, timeoutMs: 9 });
    setStackConfig({ secretsTimeoutMs: "4" });
    expect(connectionOptions("secrets")).toEqual({
      optionsFrom: "stack-config",
      timeoutMs: 4,
      retry: { maxAttempts: 2 },
    });
    expect(connectionOptions("scheduler")).toEqual({
      optionsFrom: "stack-config",
      timeoutMs: 9,
      retry: { maxAttempts: 2 },
    });
  });
});

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
    const s = await createJob(batchJob("shared-client"));
    const first = await job.read(s.id, s.outs);
    await closeConnections();
    const again = await job.read(s.id, s.outs);
    expect((again.props as JobOutputs).jobModifyIndex).toBe((first.props as JobOutputs).jobModifyIndex);
    await job.delete(s.id, s.outs);
  });

  it("a delete sends through the HTTP core the other methods use (one pool, one count of writes)", async () => {
    const s = await createJob(batchJob("shared-core"));
    const core = schedulerClient().core;
    expect(schedulerCore()).toBe(core);
    const writes = core.writes;
    await job.delete(s.id, s.outs);
    expect(core.writes).toBe(writes + 1);
    expect(await h.client.jobs.find("shared-core")).toBeUndefined();
  });

  it("a SchedulerClient made over a core sends through it, and refuses a core of the secrets service", () => {
    const core = schedulerCore();
    expect(new SchedulerClient(core).core).toBe(core);
    const secrets = new HttpCore("secrets", { address: "http://127.0.0.1:2", token: "t" });
    expect(() => new SchedulerClient(secrets)).toThrow(/HTTP core of the scheduler/);
  });
});
