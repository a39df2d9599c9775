/**
 * The ESM-only packages this library loads, each through a dynamic import from this CommonJS module.
 *
 * The import lives here, in a module of its own, because the provider entry's bundle (scripts/bundle-host.js)
 * keeps this file outside: the bundle is compiled with a V8 code cache (./code-cache.ts), and a script
 * compiled from a code cache cannot make a dynamic import in Node 20 ("A dynamic import callback was not
 * specified"). A plain module's import always can.
 */

type Jose = typeof import("jose", { with: { "resolution-mode": "import" } });

/** jose (JWT decoding), loaded on first use. */
export function importJose(): Promise<Jose> {
  return import("jose");
}
