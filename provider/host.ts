/**
 * What `pulumi-secrets-scheduler/provider` loads at run time: the provider entry (./index) as the one file
 * scripts/bundle-host.js builds from it (with zod and undici's HTTP parts), compiled with a V8 code cache
 * that is kept between processes.
 *
 * Pulumi starts a new dynamic-provider host for every command, and the host loads this library's provider
 * code on the command's first call. Compiling that code, and the functions the first calls run, was most
 * of what a command with a few resources paid beyond the engine's own cost. From the cache, in a
 * host-like process here: loading the Job code 37 -> 20 ms, its first check 4.1 -> 1.9 ms, its first
 * create 27 -> 19 ms (medians of 10; the README's Scale section has the whole-command figures).
 *
 * The cache (./code-cache.ts):
 * - is one file per bundle text, bundle path and Node build, named by a hash of them, in `$NODE_COMPILE_CACHE/
 *   pulumi-secrets-scheduler` when that is set, else in `<os temp dir>/pulumi-secrets-scheduler-<uid>`;
 * - is written by a host that found none, or one V8 refused, or one that lacks a provider method the host
 *   ran (after that method's first call settles, so it holds the code the call compiled); under a
 *   temporary name, then renamed, so a reader never sees half a file;
 * - is used only from a directory that is this user's alone (not a link, not writable by others);
 * - is off when NODE_DISABLE_COMPILE_CACHE is set, as Node's own compile cache is.
 * A cache that cannot be read or written is skipped without a word: it only ever saves time. Where the
 * bundle is absent (a build by tsc alone), this loads ./index itself.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BUNDLE_FILE, codeCacheDir, loadBundle, type Entry } from "./code-cache";

function load(): Entry {
  const bundlePath = join(__dirname, BUNDLE_FILE);
  return existsSync(bundlePath) ? loadBundle(bundlePath, codeCacheDir()) : (require("./index") as Entry);
}

const entry: Entry = load();
export = entry;
