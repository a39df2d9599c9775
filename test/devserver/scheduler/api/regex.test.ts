// Regular expressions a client sends (job-list `filter` with `matches`, constraint `regexp`) run on a
// linear-time engine with RE2 syntax, as on the real scheduler (Go's regexp): a pattern that makes a
// backtracking engine take exponential time returns at once, and RE2-only syntax rules apply.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { list, rec, serviceJob, startScheduler, type Harness } from "../http";

type Obj = Record<string, unknown>;

// 40 characters is enough: a backtracking engine tries about 2^40 ways to split them between the two `+`.
const SUBJECT = "a".repeat(40) + "!";
const EVIL = "(a+)+$";

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
  const r = await h.call("POST", "/v1/jobs", { body: { Job: serviceJob("re-job", { Meta: { s: SUBJECT } }) } });
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
});
afterAll(async () => {
  await h.close();
});

describe("regular expressions from requests", () => {
  it("job-list filter `matches` answers a catastrophic-backtracking pattern", async () => {
    const filter = (f: string): Promise<{ status: number; text: string; ids: string[] }> =>
      h.call("GET", `/v1/jobs?meta=true&filter=${encodeURIComponent(f)}`).then((r) => ({
        status: r.status,
        text: r.text,
        ids: r.status === 200 ? list(r).map((j) => String(j.ID)) : [],
      }));
    expect(await filter(`Meta.s matches "${EVIL}"`)).toMatchObject({ status: 200, ids: [] });
    expect(await filter(`Meta.s not matches "${EVIL}"`)).toMatchObject({ status: 200, ids: ["re-job"] });
    expect(await filter(`Meta.s matches "^a+!$"`)).toMatchObject({ status: 200, ids: ["re-job"] });
  });

  it("job-list filter `matches` uses RE2 syntax: lookahead and backreferences are refused", async () => {
    for (const bad of ["(?=a)", "(a)\\\\1"]) {
      const r = await h.call("GET", `/v1/jobs?filter=${encodeURIComponent(`Name matches "${bad}"`)}`);
      expect(r.status, `${bad}: ${r.text}`).toBe(400);
    }
  });

  it("constraint `regexp` answers a catastrophic-backtracking pattern in a plan", async () => {
    const job = serviceJob("re-plan", {
      Constraints: [{ LTarget: SUBJECT, RTarget: EVIL, Operand: "regexp" }],
    });
    const r = await h.call("POST", "/v1/job/re-plan/plan", { body: { Job: job, Diff: false } });
    expect(r.status, r.text).toBe(200);
    const failed = (rec(r).FailedTGAllocs as Obj).web as Obj;
    expect(failed.ConstraintFiltered).toEqual({ [`${SUBJECT} regexp ${EVIL}`]: 3 });
    const ok = serviceJob("re-plan", { Constraints: [{ LTarget: SUBJECT, RTarget: "^a+!$", Operand: "regexp" }] });
    const r2 = await h.call("POST", "/v1/job/re-plan/plan", { body: { Job: ok, Diff: false } });
    expect(rec(r2).FailedTGAllocs).toBeNull();
  });

  it("constraint `regexp` uses RE2 syntax: a lookahead pattern never matches", async () => {
    const job = serviceJob("re-plan2", { Constraints: [{ LTarget: "abc", RTarget: "(?=a)", Operand: "regexp" }] });
    const r = await h.call("POST", "/v1/job/re-plan2/plan", { body: { Job: job, Diff: false } });
    expect(r.status, r.text).toBe(200);
    expect(rec(r).FailedTGAllocs).not.toBeNull();
  });
});
