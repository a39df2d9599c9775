/**
 * Our resource constructors register with stack capture off (sdk/stacks.ts): Pulumi records a stack trace
 * on four promises per output property, and under ts-node each one maps every frame through source maps.
 * Counted here by a prepareStackTrace hook that sees the frames of each trace formatted.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AuthConfig, AuthMount, AuthRole, Job, JobVersionTag } from "../../sdk";
import { installMocks, outputValue } from "../helpers/mocks";

beforeAll(async () => {
  await installMocks((args) => ({ ...args.inputs, jobId: "web", accessor: "auth_x" }));
});

let traces = 0;
let previous: typeof Error.prepareStackTrace;

beforeEach(() => {
  traces = 0;
  previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (err, frames) => {
    if (frames.length > 0) traces++;
    return previous ? previous(err, frames) : `${String(err)}\n${frames.map((f) => `    at ${String(f)}`).join("\n")}`;
  };
});

afterEach(() => {
  Error.prepareStackTrace = previous;
});

describe("resource constructors and stack traces", () => {
  const kinds: Array<[string, () => pulumi.CustomResource]> = [
    ["Job", () => new Job("st-job", { job: { ID: "st" }, waitForDeployment: false })],
    ["JobVersionTag", () => new JobVersionTag("st-tag", { jobId: "st", name: "v1" })],
    ["AuthMount", () => new AuthMount("st-mount", { path: "st" })],
    ["AuthConfig", () => new AuthConfig("st-config", { mount: "st", tenantId: "t", resource: "https://r" })],
    ["AuthRole", () => new AuthRole("st-role", { mount: "st", name: "r", boundSubscriptionIds: ["s"] })],
  ];

  it.each(kinds)(
    "%s records no stack trace per output property, and leaves the limit as it was",
    async (_name, make) => {
      const before = Error.stackTraceLimit;
      const r = make();
      expect(Error.stackTraceLimit).toBe(before);
      // Pulumi reads the caller's position once per resource; none more per output property.
      expect(traces).toBeLessThanOrEqual(2);
      await outputValue(r.urn);
    },
  );

  it("keeps Pulumi's source position of the resource (its own stack read is not limited)", async () => {
    const j = new Job("st-pos", { job: { ID: "pos" }, waitForDeployment: false });
    expect(traces).toBeGreaterThanOrEqual(1);
    await outputValue(j.urn);
  });

  it("gives an error thrown while registering the caller's stack", () => {
    let err: unknown;
    try {
      // A resource option Pulumi rejects synchronously in the Resource constructor.
      new Job("st-bad", { job: { ID: "bad" } }, { parent: {} as pulumi.Resource });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).stack)).toContain("stacks.test.ts");
  });
});
