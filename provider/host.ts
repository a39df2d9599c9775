/**
 * What `pulumi-secrets-scheduler/provider` loads at run time: the provider entry (./index) as the one file
 * scripts/bundle-host.js builds from it (with zod and undici's HTTP parts), loaded with a plain `require`.
 *
 * Pulumi starts a new dynamic-provider host for every command, and the host loads this library's provider
 * code on the command's first call, so its load time is paid per command. One file loads faster than the
 * ~130 modules it replaces (the README's Scale section has figures). Node's compile cache
 * (`module.enableCompileCache`, in every Node this library supports) is turned on first, so later commands
 * compile the bundle from the code V8 cached:
 * - in `$NODE_COMPILE_CACHE` when the user set it (Node's own setting; Node has then turned the cache on
 *   for the whole process already);
 * - else in this user's private directory `<cache home>/pulumi-secrets-scheduler/compile-cache` (./user-cache.ts
 *   checks it: a real directory, owned by this user, mode 0700), never a shared temporary directory; where
 *   that directory cannot be had, the host goes without;
 * - not at all when NODE_DISABLE_COMPILE_CACHE is set (Node's own switch).
 * Node reads, checks and writes the cache files itself; this module never touches them. Node writes them at
 * exit; `flushCompileCache` writes them right after the load, as a host the engine kills may never exit
 * normally. Where the bundle is absent (a build by tsc alone), this loads ./index itself.
 */
import { existsSync } from "node:fs";
import { enableCompileCache as nodeEnableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";
import { privateDir } from "./user-cache";
import type * as ProviderEntry from "./index";

type Entry = typeof ProviderEntry;

/** The bundle's file name, beside ./host.js. */
const BUNDLE_FILE = "host-bundle.js";

/**
 * Turns Node's compile cache on for this process (see above); returns the directory Node uses, or
 * undefined when it is off.
 */
function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env["NODE_DISABLE_COMPILE_CACHE"]) return undefined;
  const own = env["NODE_COMPILE_CACHE"];
  const dir = own !== undefined && own !== "" ? undefined : privateDir("compile-cache", env);
  if (dir === undefined && (own === undefined || own === "")) return undefined;
  try {
    // Without a directory Node takes NODE_COMPILE_CACHE (and has normally enabled it at start already).
    return (dir === undefined ? nodeEnableCompileCache() : nodeEnableCompileCache(dir)).directory;
  } catch {
    return undefined;
  }
}

function load(): Entry {
  const bundlePath = join(__dirname, BUNDLE_FILE);
  if (!existsSync(bundlePath)) return require("./index") as Entry;
  const cached = enableCompileCache() !== undefined;
  const entry = require(bundlePath) as Entry;
  if (cached) {
    try {
      flushCompileCache();
    } catch {
      // written at exit instead, or not at all: it only ever saves time
    }
  }
  return entry;
}

// Each export by name (not `export =` of the loaded object): Node then sees them from an ESM
// `import { providers } from "pulumi-secrets-scheduler/provider"` too. The package test (attw) fails when
// index.ts exports a name not forwarded here.
export const {
  configure,
  connectionOptions,
  setConnectionOverrides,
  CONFIG_KEYS,
  CONFIG_NAMESPACE,
  provider,
  providers,
}: Entry = load();
