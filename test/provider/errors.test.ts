/**
 * provider/errors.ts: one error family. Each error carries a stable `code` (the resource tests check which);
 * here, the outcome-unknown path of a write whose read-back cannot tell, the brand that recognises the
 * family across duplicate installs, `is` across the family, and a scan that provider code throws nothing else.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import * as publicApi from "../../index";
import {
  ApiError,
  ConfigError,
  PssError,
  ResourceError,
  UsageError,
  isApiError,
  type PssErrorCode,
} from "../../provider/errors";
import { ResourceInitError, writeWithReadBack } from "../../provider/resources/common";

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

describe("PssError family", () => {
  const api = new ApiError({ code: "not_found", service: "secrets", operation: "read", method: "GET", path: "/v1/x" });
  const resource = new ResourceError("gone", "gone");
  const usage = new UsageError("bad option");
  const config = new ConfigError("no address");
  const init = new ResourceInitError("not finished", "id", {});
  const internal = new PssError("internal", "bug");
  const all = [api, resource, usage, config, init, internal];

  it("every member is a PssError with its code; PssError.is filters by any code of the one union", () => {
    for (const e of all) {
      expect(e).toBeInstanceOf(PssError);
      expect(PssError.is(e)).toBe(true);
      expect(PssError.is(e, e.code)).toBe(true);
    }
    expect(all.map((e) => [e.name, e.code])).toEqual([
      ["ApiError", "not_found"],
      ["ResourceError", "gone"],
      ["UsageError", "invalid_usage"],
      ["ConfigError", "invalid_config"],
      ["ResourceInitError", "unfinished"],
      ["PssError", "internal"],
    ]);
    const codes: PssErrorCode[] = ["not_found", "invalid_usage"];
    expect(all.filter((e) => PssError.is(e, ...codes))).toEqual([api, usage]);
    expect(PssError.is(new Error("x"))).toBe(false);
    expect(PssError.is(Object.assign(new Error("x"), { code: "not_found" }))).toBe(false);
    expect(PssError.is(null)).toBe(false);
  });

  it("each subclass's is narrows to its own members and codes", () => {
    expect(all.filter((e) => ApiError.is(e))).toEqual([api]);
    expect(all.filter((e) => isApiError(e, "not_found", "conflict"))).toEqual([api]);
    expect(isApiError(api, "conflict")).toBe(false);
    expect(all.filter((e) => ResourceError.is(e))).toEqual([resource, init]);
    expect(all.filter((e) => ResourceError.is(e, "unfinished"))).toEqual([init]);
    expect(all.filter((e) => UsageError.is(e))).toEqual([usage]);
    expect(all.filter((e) => ConfigError.is(e))).toEqual([config]);
    // ApiError.with keeps the family and changes the code.
    expect(ApiError.is(api.with({ code: "conflict" }), "conflict")).toBe(true);
  });

  it("is recognised across duplicate installs: another copy's error carries the same brand", () => {
    const brand = Symbol.for("pulumi-secrets-scheduler.PssError");
    const foreign = Object.defineProperty(Object.assign(new Error("x"), { code: "timeout" }), brand, { value: true });
    expect(PssError.is(foreign)).toBe(true);
    expect(ApiError.is(foreign, "timeout")).toBe(true);
    expect(ResourceError.is(foreign)).toBe(false);
  });

  it("the package exports the family under the names users already use", () => {
    expect(publicApi.PssError).toBe(PssError);
    expect(publicApi.ApiError).toBe(ApiError);
    expect(publicApi.ResourceError).toBe(ResourceError);
    expect(publicApi.isApiError).toBe(isApiError);
  });
});

describe("provider code throws only the family", () => {
  it("no provider module constructs a bare Error, TypeError, RangeError or other built-in error", () => {
    const root = join(__dirname, "..", "..", "provider");
    const offenders: string[] = [];
    const builtin =
      /\bnew\s+(Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError)\s*\(/;
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".ts")) {
          const code = readFileSync(p, "utf8")
            .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ""))
            .replace(/\/\/.*$/gm, "");
          code.split("\n").forEach((line, i) => {
            if (builtin.test(line)) offenders.push(`${relative(root, p)}:${i + 1}: ${line.trim()}`);
          });
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
