/**
 * Word edges of the mask for short secrets (under 4 characters, masked only as a whole word): any character
 * that is not a letter or a digit is an edge, so a secret after `=`, `/`, `-` or `@` (as server messages
 * write `KEY=value`, `user@host`, `a/b`) is masked, and one inside a longer word is not.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SECRET_SHOWN, masksField, maskText } from "../../../../provider/resources/job/mask-text";
import { secretMaskOf } from "../../../../provider/resources/job/secrets";

const maskOf = (value: string) => secretMaskOf({ variables: { pw: value }, __secretInputs: ["variables"] });

describe("short secrets: every non-alphanumeric character is a word edge", () => {
  it("masks a short secret after =, /, -, @ and before them", () => {
    const m = maskOf("ab1");
    expect(maskText("env: PW=ab1", m)).toBe(`env: PW=${SECRET_SHOWN}`);
    expect(maskText("user ab1@host", m)).toBe(`user ${SECRET_SHOWN}@host`);
    expect(maskText("path /v/ab1/x", m)).toBe(`path /v/${SECRET_SHOWN}/x`);
    expect(maskText("flag --pw-ab1", m)).toBe(`flag --pw-${SECRET_SHOWN}`);
    expect(maskText("a_ab1+b", m)).toBe(`a_${SECRET_SHOWN}+b`);
    expect(masksField(m, "Meta[x]", "PW=ab1")).toBe(true);
    // Inside a longer word it stays (a one-letter secret must not wipe every message).
    expect(maskText("xab1 ab1x ab12 éab1", m)).toBe("xab1 ab1x ab12 éab1");
  });

  it("property: a short alphanumeric secret between any two non-alphanumeric characters never survives", () => {
    const alnum = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".split(""));
    const edge = fc.constantFrom(..." \t\n=/-@_+:;,.!?#$%&*|\\~^'\"`()[]{}<>".split(""));
    fc.assert(
      fc.property(
        fc.array(alnum, { minLength: 1, maxLength: 3 }).map((a) => a.join("")),
        fc.string({ maxLength: 12 }),
        fc.option(edge, { nil: "" }),
        fc.option(edge, { nil: "" }),
        fc.string({ maxLength: 12 }),
        (secret, before, left, right, after) => {
          // The edge is the text's start or end where no character is generated on that side.
          const head = left === "" ? "" : before + left;
          const tail = right === "" ? "" : right + after;
          const out = maskText(head + secret + tail, maskOf(secret));
          expect(out).toContain(`${left}${SECRET_SHOWN}${right}`);
        },
      ),
      { numRuns: 500 },
    );
  });
});
