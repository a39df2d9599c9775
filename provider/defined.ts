/** Values the engine's protobuf structs can carry. */

/** Returns a copy without `undefined` values, at every depth (the engine's protobuf structs cannot carry them). */
export function definedDeep<T>(v: T): T {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(definedDeep) as unknown as T;
  // Keys, not entries: every read's outputs pass here, and an entry array per property was most of the cost.
  const out: Record<string, unknown> = {};
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x !== undefined) out[k] = definedDeep(x);
  }
  return out as T;
}
