/**
 * A provider host that sends no request (a preview with nothing changed) must not load undici: it is 110
 * modules, about 60 ms of every command on an idle machine (bench/scale.js, 2 resources). Checked in
 * Node's own module cache, with undici dropped from it first.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const req = createRequire(__filename);
const undiciLoaded = (): boolean => Object.keys(req.cache).some((k) => k.includes("/node_modules/undici/"));

describe("module loading in the provider host", () => {
  it("loads undici only when the first request is sent", async () => {
    for (const k of Object.keys(req.cache)) if (k.includes("/node_modules/undici/")) delete req.cache[k];
    const { configure } = await import("../../provider/config.js");
    const { job } = await import("../../provider/resources/job/index.js");
    await configure({
      config: {
        get: (k: string) =>
          ({
            "pulumi-secrets-scheduler:schedulerAddress": "http://127.0.0.1:9",
            "pulumi-secrets-scheduler:schedulerToken": "t",
          })[k],
      },
    });
    const checked = await job.check(
      {},
      { job: { ID: "lazy", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker" }] }] } },
    );
    const inputs = checked.inputs as Parameters<typeof job.diff>[2];
    const hash = (await import("../../provider/resources/job/hashes.js")).desiredInputsHash;
    const { SchedulerClient } = await import("../../provider/clients/scheduler/index.js");
    const { userInputs } = await import("../../provider/resources/job/checked.js");
    const olds = {
      jobId: "lazy",
      namespace: "default",
      region: "global",
      inputsHash: hash(userInputs(inputs), new SchedulerClient({ address: "http://127.0.0.1:9", token: "t" })),
      normalizedJob: "{}",
    } as unknown as Parameters<typeof job.diff>[1];
    const d = await job.diff("lazy@default", olds, inputs);
    expect(d.changes).toBe(false);
    expect(undiciLoaded()).toBe(false);
    // The first request loads it (the address refuses: only the loading matters here).
    const once = new SchedulerClient({ address: "http://127.0.0.1:9", token: "t", retry: { maxAttempts: 1 } });
    await once.jobs.find("lazy").catch(() => undefined);
    expect(undiciLoaded()).toBe(true);
  });
});
