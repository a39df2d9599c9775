/**
 * No value of a secret Job source in the text the provider shows. Pure tests of the mask
 * and of the plan text with it.
 */
import { describe, expect, it } from "vitest";
import { UNKNOWN } from "../../../helpers/unknown";
import { formatPlan } from "../../../../provider/resources/job/text";
import { maskError, maskText, masksField } from "../../../../provider/resources/job/mask-text";
import { NO_SECRETS, secretMaskOf } from "../../../../provider/resources/job/secrets";
import type { PlanResponse } from "../../../../provider/schemas/scheduler";

const plan = (
  extra: { taskFields?: NonNullable<PlanResponse["Diff"]>["Fields"]; warnings?: string } = {},
): PlanResponse => ({
  JobModifyIndex: 5,
  Diff: {
    Type: "Edited",
    ID: "web",
    Fields: [{ Type: "Edited", Name: "Meta[owner]", Old: "team-a", New: "team-b" }],
    TaskGroups: [
      {
        Type: "Edited",
        Name: "web",
        Fields: [{ Type: "Edited", Name: "Count", Old: "2", New: "3" }],
        Tasks: [
          {
            Type: "Edited",
            Name: "app",
            Fields: [
              { Type: "Edited", Name: "Env[DB_PASSWORD]", Old: "old-pw-4711", New: "new-pw-4712" },
              { Type: "Added", Name: "Env[DB_URL]", Old: "", New: "postgres://app:new-pw-4712@db:5432/app" },
              ...(extra.taskFields ?? []),
            ],
            Objects: [
              {
                Type: "Edited",
                Name: "Config",
                Fields: [{ Type: "Edited", Name: "image", Old: "nginx:1.25", New: "nginx:1.26" }],
              },
              {
                Type: "Added",
                Name: "Template",
                Fields: [{ Type: "Added", Name: "EmbeddedTmpl", Old: "", New: 'password={{ env "X" }}' }],
              },
            ],
          },
        ],
      },
    ],
  },
  Annotations: { DesiredTGUpdates: { web: { Place: 1, InPlaceUpdate: 2 } } },
  ...(extra.warnings !== undefined ? { Warnings: extra.warnings } : {}),
});

const vars = { db_password: "new-pw-4712", count: 3 };

describe("secretMaskOf", () => {
  it("treats a missing or empty secretInputs (state written before it existed) as nothing secret", () => {
    expect(secretMaskOf({ variables: vars })).toEqual(NO_SECRETS);
    expect(secretMaskOf({ variables: vars, __secretInputs: [] })).toEqual(NO_SECRETS);
    expect(secretMaskOf(undefined)).toEqual(NO_SECRETS);
  });

  it("one secret variable of a map: its value, and the sensitive fields", () => {
    const m = secretMaskOf({ variables: vars, __secretInputs: ["variables.db_password"] });
    expect(m).toEqual({ everything: false, sensitiveFields: true, values: ["new-pw-4712"] });
  });

  it("secret variables as a whole (a map or var-file text): every value", () => {
    expect(secretMaskOf({ variables: vars, __secretInputs: ["variables"] }).values).toEqual(["new-pw-4712", "3"]);
    const text = 'db_password = "s3cr\\"et-value"\ncount = 3\n';
    expect(secretMaskOf({ variables: text, __secretInputs: ["variables"] }).values).toEqual(
      expect.arrayContaining(['s3cr"et-value', "3"]),
    );
  });

  it("a secret jobspec or job, an unknown list, or a name it does not know: everything is masked", () => {
    for (const secretInputs of [["jobspec"], ["job"], [UNKNOWN], UNKNOWN, ["something-new"], [7]]) {
      expect(
        secretMaskOf({ variables: vars, __secretInputs: secretInputs } as never).everything,
        JSON.stringify(secretInputs),
      ).toBe(true);
    }
  });

  it("reads var-file text values for the named keys only", () => {
    const text = 'a = "x1234"\nb = 5\n# c = "no"\n';
    expect(secretMaskOf({ variables: text, __secretInputs: ["variables.a"] }).values).toEqual(['"x1234"', "x1234"]);
  });
});

describe("masking", () => {
  it("knows the fields that carry configuration", () => {
    // A secret variable masks the fields that carry configuration, whatever their value.
    const m = secretMaskOf({ variables: { pw: "hunter22" }, __secretInputs: ["variables.pw"] });
    const isSensitiveField = (name: string): boolean => masksField(m, name, "plain");
    for (const n of [
      "Env[DB_PASSWORD]",
      "Meta[k]",
      "Config.image",
      "Config.args[0]",
      "Template.EmbeddedTmpl",
      "Artifact.GetterOptions[token]",
    ])
      expect(isSensitiveField(n), n).toBe(true);
    for (const n of ["Count", "Priority", "Resources.CPU", "Service.PortLabel"])
      expect(isSensitiveField(n), n).toBe(false);
  });

  it("replaces values of 4+ characters anywhere in a text, shorter ones as whole words, and in errors", () => {
    const m = secretMaskOf({ variables: { pw: "hunter22", short: "ab" }, __secretInputs: ["variables"] });
    expect(maskText("x hunter22 y ab", m)).toBe("x [secret] y [secret]");
    expect(maskText('invalid duration "ab"; about xab', m)).toBe('invalid duration "[secret]"; about xab');
    const e = maskError(new Error("parse failed near hunter22"), m) as Error;
    expect(e.message).toBe("parse failed near [secret]");
    expect(e.stack).not.toContain("hunter22");
  });
});

describe("formatPlan with secrets", () => {
  it("without a mask shows the values (what happened before, for every secret)", () => {
    const text = formatPlan(plan(), { jobId: "web", namespace: "default" });
    expect(text).toContain('~ Env[DB_PASSWORD]: "old-pw-4711" => "new-pw-4712"');
  });

  it("a secret variable: Env, Meta, Config and Template values and any value holding it show [secret]; the rest stays", () => {
    const mask = secretMaskOf({ variables: vars, __secretInputs: ["variables.db_password"] });
    const text = formatPlan(
      plan({
        taskFields: [{ Type: "Added", Name: "User", Old: "", New: "u-new-pw-4712" }],
        warnings: "Task uses new-pw-4712 in a label\n",
      }),
      {
        jobId: "web",
        namespace: "default",
        mask,
      },
    );
    expect(text).toContain("~ Env[DB_PASSWORD]: [secret] => [secret]");
    expect(text).toContain("+ Env[DB_URL]: [secret]");
    expect(text).toContain("~ Meta[owner]: [secret] => [secret]");
    expect(text).toContain("~ Config.image: [secret] => [secret]");
    expect(text).toContain("+ Template.EmbeddedTmpl: [secret]");
    expect(text).toContain("+ User: [secret]");
    expect(text).toContain('~ Count: "2" => "3"');
    expect(text).toContain("! Task uses [secret] in a label");
    for (const s of ["old-pw-4711", "new-pw-4712", "team-a", "nginx:1.26"]) expect(text).not.toContain(s);
  });

  it("a secret jobspec: every field value shows [secret], the counts stay", () => {
    const text = formatPlan(plan(), {
      jobId: "web",
      namespace: "default",
      mask: secretMaskOf({ __secretInputs: ["jobspec"] }),
    });
    expect(text).toContain("~ Count: [secret] => [secret]");
    expect(text).toContain('Scheduler plan for job "web" in namespace "default"');
    expect(text).toContain('Group "[secret]" (Edited): 1 to place, 2 in-place updates');
    expect(text).toContain('Task "[secret]" (Edited)');
    expect(text).toContain("~ Env[[secret]]: [secret] => [secret]");
    expect(text).not.toMatch(/"app"|DB_PASSWORD|owner/);
    expect(text).not.toMatch(/"(old|new)-pw|"2"|nginx/);
  });
});
