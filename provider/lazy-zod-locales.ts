/**
 * Makes zod load its translated error messages on first use instead of at start-up.
 *
 * zod's CommonJS build requires every locale (64 files, about 30 ms on this project's machines) when it is
 * first loaded, although only English is used unless a program calls `z.config(z.locales.xx())`. The
 * dynamic-provider host loads zod on the first call of every command, so those 30 ms are paid per command.
 * This module puts a stand-in for zod's locale index in the module cache: it answers `__esModule` itself
 * and loads the real index on any other access, so `z.locales` works as before, only later. It must run
 * before zod is first required in the process; if zod is already loaded, or its layout differs from the
 * pinned version's, it does nothing. `provider()` (provider/index.ts) calls it before it loads a resource's
 * code, so it runs where the providers run (Pulumi's provider host), not in a program that only imports
 * the package.
 */
import Module = require("node:module");

/** Resolves zod's locale index from this package, as zod itself would; undefined if it is not there. */
function localeIndexPath(): string | undefined {
  try {
    return require.resolve("zod/v4/locales");
  } catch {
    return undefined;
  }
}

/** Installs the stand-in; returns whether it did (false when zod's locales are already loaded or absent). */
export function deferZodLocales(): boolean {
  const path = localeIndexPath();
  if (path === undefined || require.cache[path] !== undefined) return false;
  let real: Record<PropertyKey, unknown> | undefined;
  const load = (): Record<PropertyKey, unknown> => {
    if (real === undefined) {
      if (require.cache[path] === stub) delete require.cache[path];
      real = require(path) as Record<PropertyKey, unknown>;
    }
    return real;
  };
  const exports = new Proxy<Record<PropertyKey, unknown>>(
    {},
    {
      get: (_, key) => (key === "__esModule" ? true : load()[key]),
      has: (_, key) => key === "__esModule" || key in load(),
      ownKeys: () => Reflect.ownKeys(load()),
      getOwnPropertyDescriptor: (_, key) => {
        const d = Object.getOwnPropertyDescriptor(load(), key);
        return d === undefined ? undefined : { ...d, configurable: true };
      },
    },
  );
  const stub = new Module(path, module);
  stub.filename = path;
  stub.loaded = true;
  stub.exports = exports;
  require.cache[path] = stub;
  return true;
}
