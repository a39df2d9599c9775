// The secrets service's policy parser: what it accepts and refuses, and that no text makes it slow (a stored
// policy is parsed again at every start): the former regex went back over the rest of the text for every
// `path "x" {` without its `}`, seconds for 20,000 of them.
import fc from "fast-check";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type StartedDevServer } from "../../../../devserver";
import { DevHttpError } from "../../../../devserver/core";
import { PolicyStore } from "../../../../devserver/secrets/state/acl";
import { parsePolicy } from "../../../../devserver/secrets/state/policy-text";

/** The rules of a policy as the service stores them. */
const rules = (text: string): unknown => new PolicyStore().put("team", text).rules;

function refusal(text: string): string {
  try {
    rules(text);
  } catch (e) {
    if (e instanceof DevHttpError) return `${e.status} ${e.message}`;
    throw e;
  }
  return "accepted";
}

describe("policy parser", () => {
  it("reads path rules, their capabilities and comments", () => {
    const text = [
      "# team policy",
      'path "secret/*" {',
      '  capabilities = ["read", "list"] // reads',
      "}",
      'path "/sys/auth"   {  capabilities=["sudo"]  }',
      'path "x" { other = 1 }',
      'path "y" { capabilities = ["read" }',
    ].join("\r\n");
    expect(rules(text)).toEqual([
      { path: "secret/*", capabilities: ["read", "list"] },
      { path: "sys/auth", capabilities: ["sudo"] },
      { path: "x", capabilities: [] },
      { path: "y", capabilities: [] },
    ]);
    expect(rules('{"path": {"a": {"capabilities": ["read"]}}}')).toEqual([{ path: "a", capabilities: ["read"] }]);
  });

  it("refuses text outside the rules and unknown capabilities", () => {
    expect(refusal('path "a" { capabilities = ["read"] } extra')).toBe(
      '400 failed to parse policy: unexpected text "extra"',
    );
    expect(refusal('path "a" {')).toMatch(/^400 failed to parse policy: unexpected text "path \\"a\\" \{"/);
    expect(refusal('path"a" {}')).toMatch(/^400 failed to parse policy: unexpected text/);
    expect(refusal('path "a" { capabilities = ["fly"] }')).toBe(
      '400 failed to parse policy: path "a": invalid capability "fly"',
    );
  });

  it("looks at each character a bounded number of times, whatever the text", () => {
    // the parser itself, for its count of the characters it looked at, which neither the store nor a request shows
    for (const unit of [
      'path "x" {',
      'path "x',
      "path ",
      'path "x" { capabilities = [',
      "capabilities=[",
      "#",
      " //",
    ]) {
      const text = unit.repeat(Math.floor((1 << 19) / unit.length));
      const stats = { steps: 0 };
      try {
        parsePolicy(text, stats);
      } catch (e) {
        if (!(e instanceof DevHttpError)) throw e;
      }
      // it did look at the text (the count is real), and not more than a few times at each character
      expect([unit, stats.steps >= text.length, stats.steps <= 4 * text.length]).toEqual([unit, true, true]);
    }
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'path "x" {}capabilities=[]#/\n'.split("")), maxLength: 300 }),
        (text) => {
          const stats = { steps: 0 };
          try {
            parsePolicy(text, stats);
          } catch (e) {
            if (!(e instanceof DevHttpError)) throw e;
          }
          expect(stats.steps).toBeLessThanOrEqual(4 * text.length + 8);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("policy endpoint", () => {
  let server: StartedDevServer;
  beforeAll(async () => {
    server = await startDevServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("refuses 80,000 unclosed rules with 400 (the former parser needed minutes)", async () => {
    const res = await request(`${server.urls.secrets}/v1/sys/policies/acl/slow`, {
      method: "POST",
      headers: { "x-svc-token": server.rootTokens.secrets, "content-type": "application/json" },
      body: JSON.stringify({ policy: 'path "x" {'.repeat(80_000) }),
    });
    expect([res.statusCode, await res.body.text()]).toEqual([
      400,
      JSON.stringify({
        errors: [`failed to parse policy: unexpected text ${JSON.stringify('path "x" {'.repeat(4))}`],
      }),
    ]);
  });
});
