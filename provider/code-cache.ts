/**
 * Loads the provider entry's bundle with a V8 code cache kept between processes (./host.ts says why; the
 * README's Scale section what it saves).
 *
 * A cache file holds one line of JSON (which provider methods had run when it was made, and a CRC-32 of
 * the rest) and then the code cache V8 made of the bundle after those calls, so it holds the functions
 * they compiled. A host writes the file after the first call of each method the file it found does not
 * cover, so the cache grows to what the commands run, and a host whose calls are all covered writes
 * nothing. Files are
 * written under a temporary name and renamed: a reader sees a whole file or none. A host that writes a
 * new file removes the files of other bundles (earlier releases, other installations) not written for 30
 * days, and all but the 16 most recently written.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import Module = require("node:module");
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { crc32 } from "node:zlib";
import type * as ProviderEntry from "./index";

/** What the bundle exports: the provider entry. */
export type Entry = typeof ProviderEntry;

/** The bundle's file name, beside ./host.js. */
export const BUNDLE_FILE = "host-bundle.js";

/** The provider methods whose compiled code the cache keeps. */
const METHODS = ["check", "diff", "create", "read", "update", "delete"] as const;
type Method = (typeof METHODS)[number];

/**
 * The directory of the code cache, or undefined when it is off: NODE_DISABLE_COMPILE_CACHE turns it off
 * (as it does Node's own compile cache), NODE_COMPILE_CACHE moves it, else it is this user's directory
 * in the temporary directory (where Node's own compile cache goes by default).
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env["NODE_DISABLE_COMPILE_CACHE"]) return undefined;
  const base = env["NODE_COMPILE_CACHE"];
  if (base) return join(base, "pulumi-secrets-scheduler");
  const who = typeof process.getuid === "function" ? String(process.getuid()) : (env["USERNAME"] ?? "user").replace(/[^A-Za-z0-9_-]/g, "_");
  return join(tmpdir(), `pulumi-secrets-scheduler-${who}`);
}

/** Makes the directory if needed; true if it is a real directory that only this user can write. */
function privateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (!st.isDirectory()) return false;
    if (typeof process.getuid === "function") return st.uid === process.getuid() && (st.mode & 0o022) === 0;
    return true;
  } catch {
    return false;
  }
}

/**
 * The cache file of one bundle text at one path under this Node build. V8 itself checks only the text's
 * length; the path is in the key because compiled code keeps the file name it was compiled under (stack
 * traces would name another installation's file).
 */
function cacheFile(dir: string, bundlePath: string, text: string): string {
  const h = createHash("sha256");
  h.update(`${process.version}\0${process.arch}\0${process.versions.v8}\0${bundlePath}\0`).update(text);
  return join(dir, `host-${h.digest("hex").slice(0, 40)}.v8`);
}

/** A cache file's parts; undefined when there is none or it is not one. */
function readCache(file: string): { covered: Set<Method>; data: Buffer } | undefined {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch {
    return undefined;
  }
  const eol = raw.indexOf(0x0a);
  if (eol < 0 || eol > 1024) return undefined;
  try {
    const head = JSON.parse(raw.subarray(0, eol).toString("utf8")) as { covered?: unknown; crc32?: unknown };
    const data = raw.subarray(eol + 1);
    // V8 checks a cache's versions and lengths, not its bytes: a file damaged on disk is not handed to it.
    if (head.crc32 !== crc32(data)) return undefined;
    const covered = new Set(Array.isArray(head.covered) ? METHODS.filter((m) => (head.covered as unknown[]).includes(m)) : []);
    return { covered, data };
  } catch {
    return undefined;
  }
}

/** Writes the cache file through a temporary name in the same directory; a failure leaves no file behind. */
function writeCache(file: string, covered: ReadonlySet<Method>, data: Buffer): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(JSON.stringify({ covered: [...covered], crc32: crc32(data) }) + "\n"), data]), { mode: 0o600 });
    renameSync(tmp, file);
    return true;
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
    return false;
  }
}

/** A cache file not written this long is removed when a host writes a cache (each release has its own file). */
const CACHE_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
/**
 * At most this many cache files stay, the most recently written (each installation path has its own file,
 * and test runs and temporary projects make many): an older one still in use is only written again.
 */
const CACHE_MAX_FILES = 16;
/** A temporary file this old belongs to a writer that died. */
const TMP_MAX_AGE_MS = 3600 * 1000;

/**
 * Removes other cache files not written for CACHE_MAX_AGE_MS or beyond the CACHE_MAX_FILES most recently
 * written (`keep`, just written, counts among them), and temporary files a dead writer left.
 */
function prune(dir: string, keep: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const caches: Array<{ path: string; mtimeMs: number }> = [];
  const remove = (path: string): void => {
    try {
      unlinkSync(path);
    } catch {
      // gone already, or not ours to remove
    }
  };
  for (const name of names) {
    const path = join(dir, name);
    if (path === keep || !name.startsWith("host-")) continue;
    const isCache = name.endsWith(".v8");
    if (!isCache && !name.endsWith(".tmp")) continue;
    let mtimeMs: number;
    try {
      mtimeMs = lstatSync(path).mtimeMs;
    } catch {
      continue;
    }
    if (now - mtimeMs > (isCache ? CACHE_MAX_AGE_MS : TMP_MAX_AGE_MS)) remove(path);
    else if (isCache) caches.push({ path, mtimeMs });
  }
  caches.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const c of caches.slice(CACHE_MAX_FILES - 1)) remove(c.path);
}

/** What happened to the cache, for the tests. */
export interface CacheEvents {
  /** "off": no usable directory; "none": no file yet; "accepted" / "rejected": V8's verdict on the file. */
  loaded?(how: "off" | "none" | "accepted" | "rejected", file: string | undefined): void;
  /** A cache file was written, covering these methods. */
  saved?(file: string, covered: readonly string[]): void;
}

/**
 * Runs the bundle at `bundlePath` as a CommonJS module and returns its exports, compiled from the cache in
 * `dir` when that holds one for this text (undefined `dir`: no cache).
 */
export function loadBundle(bundlePath: string, dir: string | undefined, events: CacheEvents = {}): Entry {
  const text = readFileSync(bundlePath, "utf8");
  const file = dir !== undefined && privateDir(dir) ? cacheFile(dir, bundlePath, text) : undefined;
  const found = file !== undefined ? readCache(file) : undefined;
  // The wrapper Node puts around a CommonJS module, on the first line so that line numbers stay.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${text}\n})`, {
    filename: bundlePath,
    ...(found !== undefined ? { cachedData: found.data } : {}),
  });
  const mod = { exports: {} as Entry };
  const wrapper = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(bundlePath), mod, bundlePath, dirname(bundlePath));
  const entry = mod.exports;
  const rejected = found !== undefined && script.cachedDataRejected === true;
  events.loaded?.(file === undefined ? "off" : found === undefined ? "none" : rejected ? "rejected" : "accepted", file);
  if (file === undefined) return entry;

  const covered = new Set<Method>(found !== undefined && !rejected ? found.covered : []);
  const save = (): void => {
    if (writeCache(file, covered, script.createCachedData())) events.saved?.(file, [...covered]);
  };
  if (found === undefined || rejected) {
    save();
    prune(dirname(file), file, Date.now());
  }
  if (METHODS.every((m) => covered.has(m))) return entry;

  // Calls of a method the cache does not cover yet: after the first one settles, save the code it compiled.
  let saving = false;
  const settled = (m: Method): void => {
    if (covered.has(m)) return;
    covered.add(m);
    if (saving) return;
    saving = true;
    setImmediate(() => {
      saving = false;
      save();
    }).unref();
  };
  const watched = new Map<string, ReturnType<Entry["provider"]>>();
  const provider: Entry["provider"] = (kind) => {
    const known = watched.get(kind);
    if (known !== undefined) return known;
    const impl = entry.provider(kind);
    const wrapped = { ...impl };
    for (const m of METHODS) {
      const f = impl[m] as ((...args: unknown[]) => Promise<unknown>) | undefined;
      if (typeof f !== "function" || covered.has(m)) continue;
      (wrapped as Record<string, unknown>)[m] = (...args: unknown[]) => {
        const p = f.apply(impl, args);
        Promise.resolve(p).then(() => settled(m), () => settled(m));
        return p;
      };
    }
    watched.set(kind, wrapped);
    return wrapped;
  };
  return { ...entry, provider };
}
