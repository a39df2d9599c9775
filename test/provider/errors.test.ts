/**
 * provider/errors.ts: the resource error model (issue 23 item 2). Each resource's refusals carry a stable
 * `code` (the resource tests check which); here, the outcome-unknown path of a write whose read-back cannot
 * tell, and the brand that recognises the error across duplicate installs.
 */
import { describe, expect, it } from "vitest";
import { ApiError, ResourceError } from "../../provider/errors";
import { writeWithReadBack } from "../../provider/resources/common";

const lost = () =>
  new ApiError({
    code: "transport",
    service: "scheduler",
    operation: "register job",
    method: "PUT",
    path: "/v1/jobs",
    requestSent: true,
  });

describe("ResourceError", () => {
  it("is what a write with an unknown outcome and an unreadable result rejects with, code outcome_unknown", async () => {
    const write = async () => {
      throw lost();
    };
    const readFails = await writeWithReadBack("write x", write, async () => {
      throw new Error("read failed");
    }).catch((e: unknown) => e);
    expect(readFails).toMatchObject({ name: "ResourceError", code: "outcome_unknown" });
    expect(ResourceError.is(readFails, "outcome_unknown")).toBe(true);
    expect((readFails as Error).message).toContain("write x: register job: PUT /v1/jobs failed");
    expect((readFails as Error).message).toContain("read failed");
    expect((readFails as Error).cause).toBeInstanceOf(ApiError);

    const unsure = await writeWithReadBack("write y", write, async () => "unsure").catch((e: unknown) => e);
    expect(ResourceError.is(unsure, "outcome_unknown")).toBe(true);
    // Not applied: the write's own error, not a ResourceError.
    const notApplied = await writeWithReadBack("write z", write, async () => "not-applied").catch((e: unknown) => e);
    expect(ApiError.is(notApplied)).toBe(true);
    expect(ResourceError.is(notApplied)).toBe(false);
  });

  it("is recognised by its brand, with or without codes, and not confused with other errors", () => {
    const e = new ResourceError("changed_outside", "moved");
    expect(ResourceError.is(e)).toBe(true);
    expect(ResourceError.is(e, "changed_outside", "already_exists")).toBe(true);
    expect(ResourceError.is(e, "replace_needed")).toBe(false);
    expect(ResourceError.is(new Error("moved"))).toBe(false);
    expect(ResourceError.is(Object.assign(new Error("x"), { code: "changed_outside" }))).toBe(false);
  });
});
