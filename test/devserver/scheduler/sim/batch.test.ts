import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, list, rec, startScheduler, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler({ batchMs: 20 });
});
afterAll(async () => {
  await h.close();
});

async function register(job: Obj): Promise<void> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
}

describe("batch work", () => {
  it("fails the tasks whose meta asks for it (exit code 1, not restarting) and ends the job dead", async () => {
    await register(
      batchJob("b-fail", {
        TaskGroups: [
          {
            Name: "work",
            Count: 1,
            Tasks: [
              { Name: "ok", Driver: "exec", Config: { command: "/bin/true" } },
              {
                Name: "bad",
                Driver: "exec",
                Config: { command: "/bin/false" },
                Meta: { "devserver.fail_batch": "true" },
              },
            ],
          },
        ],
      }),
    );
    const [a] = list(await h.call("GET", "/v1/job/b-fail/allocations"));
    expect(a).toMatchObject({ ClientStatus: "failed", DesiredStatus: "run" });
    const states = (a as Obj).TaskStates as Record<string, Obj>;
    expect(states.ok).toMatchObject({ State: "dead", Failed: false });
    expect(states.bad).toMatchObject({ State: "dead", Failed: true });
    const types = ((states.bad as Obj).Events as Obj[]).map((e) => e.Type);
    expect(types.slice(-2)).toEqual(["Terminated", "Not Restarting"]);
    expect(rec(await h.call("GET", "/v1/job/b-fail")).Status).toBe("dead");
  });

  it("collects dead jobs with their records on PUT /v1/system/gc (management only), and leaves running ones", async () => {
    await register(batchJob("b-done"));
    expect(rec(await h.call("GET", "/v1/job/b-done")).Status).toBe("dead");
    h.sched.control.setTiming({ batchMs: 60_000 });
    const r = await h.call("POST", "/v1/jobs", { body: { Job: batchJob("b-long") } });
    expect(r.status).toBe(200);
    const denied = await h.call("PUT", "/v1/system/gc", { token: "not-a-token" });
    expect(denied.status).toBe(403);
    const gc = await h.call("PUT", "/v1/system/gc");
    expect(gc.status, gc.text).toBe(200);
    expect((await h.call("GET", "/v1/job/b-done")).status).toBe(404);
    expect(list(await h.call("GET", "/v1/job/b-done/allocations"))).toEqual([]);
    expect(rec(await h.call("GET", "/v1/job/b-long")).Status).not.toBe("dead");
    expect((await h.call("GET", "/v1/job/b-long")).status).toBe(200);
    h.sched.control.setTiming({ batchMs: 20 });
  });
});
