/**
 * The Job's outputs that are secret only when a source is (`secret: "sourced"` in its definition): the
 * generated SDK lists none of them among the additional secret outputs. That the provider host returns
 * exactly these wrapped as secrets, when a source is secret, is tested over Pulumi's own host
 * (test/engine/suites/lifecycle.ts); what state holds, through the CLI (test/cli/secret-preview.test.ts).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { jobDefinition } from "../../../../provider/resources/definitions/job";

describe("Job outputs secret when sourced", () => {
  const sourced = Object.entries(jobDefinition.fields)
    .filter(([, f]) => f.sourcedSecret)
    .map(([k]) => k)
    .sort();

  it("the definition marks the stored job, the inputs' hash and the mask, none of them always secret", () => {
    expect(sourced).toEqual(["inputsHash", "normalizedJob", "secretMask"]);
    for (const k of sourced) expect(jobDefinition.fields[k as keyof typeof jobDefinition.fields].secret, k).toBe(false);
  });

  it("the SDK's Job registers none of them as additional secret outputs", () => {
    const sdk = readFileSync(resolve(__dirname, "../../../../sdk/generated/job.ts"), "utf8");
    expect(sdk).not.toContain("additionalSecretOutputs");
  });
});
