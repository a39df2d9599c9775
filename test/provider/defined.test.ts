/**
 * definedDeep: what every Job read's outputs pass through before the engine's protobuf structs carry them.
 */
import { describe, expect, it } from "vitest";
import { definedDeep } from "../../provider/defined";

describe("definedDeep", () => {
  it("leaves out undefined values at every depth, keeps null, false, 0 and empty strings, and copies", () => {
    const nested = { a: 1, b: undefined, c: { d: undefined, e: null, f: [{ g: undefined, h: "" }] } };
    const v = { x: nested, y: false, z: 0, u: undefined, list: [1, { k: undefined }] };
    const out = definedDeep(v);
    expect(out).toStrictEqual({ x: { a: 1, c: { e: null, f: [{ h: "" }] } }, y: false, z: 0, list: [1, {}] });
    expect(Object.keys(out)).toEqual(["x", "y", "z", "list"]);
    expect(out.x).not.toBe(nested);
    expect(out.x.c.f).not.toBe(nested.c.f);
    expect(v.u).toBeUndefined();
    expect("u" in v).toBe(true);
  });

  it("returns primitives as they are", () => {
    expect(definedDeep("s")).toBe("s");
    expect(definedDeep(null)).toBeNull();
    expect(definedDeep(undefined)).toBeUndefined();
  });
});
