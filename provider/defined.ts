/** Values the engine's protobuf structs can carry. */

/** Returns a copy without `undefined` values, at every depth (the engine's protobuf structs cannot carry them). */
export function definedDeep<T>(v: T): T {
  if (Array.isArray(v)) return v.map(definedDeep) as unknown as T;
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = definedDeep(x);
    return out as T;
  }
  return v;
}
