import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { AuthMount } from "../../sdk/generated/auth-mount";
import { AuthRole } from "../../sdk/generated/auth-role";
import { schedulerConnection, secretsConnection } from "../../sdk/connection";
import { Job } from "../../sdk/generated/job";
import { JobVersionTag } from "../../sdk/generated/job-version-tag";
import { installMocks, outputValue, type MockRecorder } from "../helpers/mocks";

const SIG = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";

let rec: MockRecorder;

beforeAll(async () => {
  rec = await installMocks((args) => ({ ...args.inputs, jobId: "web", version: 1, path: "cloud", name: "r" }));
});

describe("connections", () => {
  it("mark the token and client key secret and leave the rest plain, tagged with their service", async () => {
    const c = schedulerConnection({ address: "https://a:4646", token: "tok-a", clientKey: "KEY", region: "eu" });
    expect(c.service).toBe("scheduler");
    expect(c.address).toBe("https://a:4646");
    expect(c.region).toBe("eu");
    expect(await pulumi.isSecret(pulumi.output(c.token))).toBe(true);
    expect(await pulumi.isSecret(pulumi.output(c.clientKey))).toBe(true);
    const s = secretsConnection({ address: "https://v:8200", token: pulumi.output("tok-v"), namespace: "team" });
    expect(s.service).toBe("secrets");
    expect(await pulumi.isSecret(pulumi.output(s.token))).toBe(true);
    expect(s).not.toHaveProperty("clientKey");
  });

  it("reach the engine as each resource's connection input, the token as a secret inside it", async () => {
    const sched = schedulerConnection({ address: "https://a:4646", token: "tok-a" });
    const sec = secretsConnection({ address: "https://v:8200", token: "tok-v" });
    const job = new Job("conn-job", { jobspec: 'job "web" {}', connection: sched });
    const tag = new JobVersionTag("conn-tag", { jobId: job.jobId, name: "launch", connection: sched });
    const mount = new AuthMount("conn-mount", { connection: sec });
    const role = new AuthRole("conn-role", { name: "r", connection: sec });
    await Promise.all([outputValue(tag.version), outputValue(mount.path), outputValue(role.name)]);
    for (const [name, address, token] of [
      ["conn-job", "https://a:4646", "tok-a"],
      ["conn-tag", "https://a:4646", "tok-a"],
      ["conn-mount", "https://v:8200", "tok-v"],
      ["conn-role", "https://v:8200", "tok-v"],
    ] as const) {
      const r = rec.registered.find((x) => x.name === name);
      // The mocks' deserializer lifts a nested secret to the object holding it; the wire keeps it nested.
      const conn = r?.inputs.connection as Record<string, unknown>;
      const lifted = conn[SIG] === SECRET;
      const inner = (lifted ? conn.value : conn) as Record<string, unknown>;
      expect(inner.address).toBe(address);
      expect(inner.service).toBe(name.startsWith("conn-job") || name === "conn-tag" ? "scheduler" : "secrets");
      expect(inner.token).toEqual(lifted ? token : { [SIG]: SECRET, value: token });
      expect(String(r?.inputs.__provider)).not.toContain(token);
    }
  });

  it("leave a resource without one as it was: no connection input, no extra secret output", async () => {
    const m = new AuthMount("no-conn", { path: "cloud" });
    await outputValue(m.path);
    expect(rec.registered.find((x) => x.name === "no-conn")?.inputs).not.toHaveProperty("connection");
    expect(rec.secretOutputs.get("no-conn") ?? []).toEqual([]);
  });
});
