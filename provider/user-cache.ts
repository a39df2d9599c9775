/**
 * This user's own directories for what the provider host keeps between commands (Node's compile cache,
 * the texts a CLI run has shown, ./shown-texts.ts): under the user's cache home, never in a shared temporary
 * directory, and used only when they are provably this user's alone.
 *
 * The checks follow OpenSSH's StrictModes. The cache home is resolved to its real path first (it may be a
 * link, to another disk say) and only that path is used afterwards, so a link that changes later changes
 * nothing. Then every component of it, from the root down, is checked with lstat (a link is never
 * followed; one found there means the path changed, and the cache is skipped):
 * - each is a real directory owned by root or this user, writable by no one else unless sticky (like /tmp,
 *   whose entries only their owner can move; the entry below is again one of root or this user);
 * - `pulumi-secrets-scheduler/` is a real directory owned by this user that no one else can write;
 * - the directory handed out is owned by this user and usable by no one else (mode 0700: it is created so).
 * Nothing is created before the existing part of the path has passed. Anything else: undefined, and the
 * caller goes without. {@link stillPrivate} repeats the checks after a use.
 */
import { existsSync, lstatSync, mkdirSync, realpathSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, parse, relative, sep } from "node:path";

/** The directory under the cache home that holds this library's directories. */
const APP_DIR = "pulumi-secrets-scheduler";

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

/** A directory on the way to the cache home, or the home itself: owned by root or this user, not writable by others unless sticky. */
function safeAncestor(st: Stats, me: number | undefined): boolean {
  if (!st.isDirectory()) return false;
  if (me === undefined) return true;
  return (st.uid === me || st.uid === 0) && ((st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0);
}

/** Checks every component of an absolute real path from the root, by lstat. */
function safePath(real: string, me: number | undefined): boolean {
  const { root } = parse(real);
  let at = root;
  if (!safeAncestor(lstatSync(at), me)) return false;
  for (const part of relative(root, real)
    .split(sep)
    .filter((p) => p !== "")) {
    at = join(at, part);
    if (!safeAncestor(lstatSync(at), me)) return false;
  }
  return true;
}

/** The real path of `path` when every component of it passes {@link safePath}; else undefined. */
function trustedRealPath(path: string, me: number | undefined): string | undefined {
  const real = realpathSync(path);
  return safePath(real, me) ? real : undefined;
}

/** The cache home's real path, made (0700) if missing once its nearest existing ancestor is trusted. */
function trustedHome(home: string, me: number | undefined): string | undefined {
  if (!existsSync(home)) {
    let ancestor = dirname(home);
    while (!existsSync(ancestor) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
    if (trustedRealPath(ancestor, me) === undefined) return undefined;
    mkdirSync(home, { recursive: true, mode: 0o700 });
  }
  return trustedRealPath(home, me);
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
 * `<cache home>/pulumi-secrets-scheduler/<name>` (by the home's real path), made (mode 0700) if needed,
 * when it is this user's alone (see above); else undefined. Never throws.
 */
export function privateDir(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const home = cacheHome(env);
  if (home === undefined) return undefined;
  const me = uid();
  try {
    // Each level is checked before anything is made inside it: nothing is created through a planted link.
    const real = trustedHome(home, me);
    if (real === undefined) return undefined;
    const app = join(real, APP_DIR);
    makeDir(app);
    if (!ours(lstatSync(app), me, false)) return undefined;
    const dir = join(app, name);
    makeDir(dir);
    if (!ours(lstatSync(dir), me, true)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Repeats the checks of {@link privateDir} on a directory it returned (after using it); false when any fails. Never throws. */
export function stillPrivate(dir: string): boolean {
  const me = uid();
  try {
    const app = dirname(dir);
    return (
      basename(app) === APP_DIR &&
      safePath(dirname(app), me) &&
      ours(lstatSync(app), me, false) &&
      ours(lstatSync(dir), me, true)
    );
  } catch {
    return false;
  }
}
