/**
 * This user's own directories for what the provider host keeps between commands (Node's compile cache,
 * the plan markers of ./log.ts): under the user's cache home, never in a shared temporary
 * directory, and used only when they are provably this user's alone.
 *
 * A directory is used only if, checked with lstat (a link is never followed):
 * - it and `pulumi-secrets-scheduler/` above it are real directories owned by this user;
 * - it can be read, written or entered by nobody else (mode 0700: it is created so), and
 *   `pulumi-secrets-scheduler/` can be written by nobody else;
 * and the cache home itself (which may be a link, to another disk say) is owned by this user or root and
 * writable by no one else unless sticky. Anything else: undefined, and the caller goes without.
 */
import { lstatSync, mkdirSync, statSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The directory under the cache home that holds this library's directories. */
export const APP_DIR = "pulumi-secrets-scheduler";

/**
 * The user's cache home: `$XDG_CACHE_HOME` when it is an absolute path (as the XDG base directory
 * specification asks), else `~/.cache`; on Windows `%LOCALAPPDATA%`. Undefined when there is no home.
 */
export function cacheHome(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return xdg;
  if (process.platform === "win32") {
    const local = env["LOCALAPPDATA"];
    return local !== undefined && local !== "" && isAbsolute(local) ? local : undefined;
  }
  let home: string;
  try {
    home = homedir();
  } catch {
    return undefined;
  }
  return home !== "" && isAbsolute(home) ? join(home, ".cache") : undefined;
}

function uid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/** A directory of ours: a real directory, owned by this user, not writable (or, `strict`, usable) by others. */
function ours(st: Stats, me: number | undefined, strict: boolean): boolean {
  if (!st.isDirectory()) return false;
  if (me === undefined) return true; // Windows: no POSIX owner or mode; the profile's ACLs apply
  return st.uid === me && (st.mode & (strict ? 0o077 : 0o022)) === 0;
}

/** The cache home may be shared with root (a system-wide XDG_CACHE_HOME) but not writable by others unless sticky. */
function trustedHome(st: Stats, me: number | undefined): boolean {
  if (!st.isDirectory()) return false;
  if (me === undefined) return true;
  return (st.uid === me || st.uid === 0) && ((st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0);
}

/** mkdir that leaves an existing entry (whatever it is) to the checks. */
function makeDir(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

/**
 * `<cache home>/pulumi-secrets-scheduler/<name>`, made (mode 0700) if needed, when it is this user's
 * alone (see above); else undefined. Never throws.
 */
export function privateDir(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const home = cacheHome(env);
  if (home === undefined) return undefined;
  const app = join(home, APP_DIR);
  const dir = join(app, name);
  const me = uid();
  try {
    // Each level is checked before anything is made inside it: nothing is created through a planted link.
    mkdirSync(home, { recursive: true, mode: 0o700 });
    if (!trustedHome(statSync(home), me)) return undefined;
    makeDir(app);
    if (!ours(lstatSync(app), me, false)) return undefined;
    makeDir(dir);
    if (!ours(lstatSync(dir), me, true)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}
