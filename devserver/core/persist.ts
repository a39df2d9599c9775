import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, promises as fs, readFileSync } from "node:fs";
import * as path from "node:path";

/**
 * Writes a JSON document atomically and privately: a temp file of a random name in the target's directory,
 * created exclusively (`wx`: fails rather than opening a file or link someone else put there) with mode 0600,
 * fsync, rename over the target (which so has mode 0600 too), then fsync of the directory (best effort).
 */
export async function writeJsonAtomic(file: string, data: unknown): Promise<void> {
  // Serialize before the first await so the file holds one consistent moment of the state.
  const text = JSON.stringify(data);
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(12).toString("hex")}.tmp`);
  const handle = await fs.open(tmp, "wx", 0o600);
  try {
    // the mode given to open is reduced by the umask only, never widened; make it exact anyway
    await handle.chmod(0o600);
    await handle.writeFile(text);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  try {
    const dir = await fs.open(path.dirname(file), "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Directory fsync is not supported everywhere; the rename is already atomic.
  }
}

/** Reads a JSON file; returns undefined when it does not exist. A corrupt file is an error, not data loss. */
export function readJsonIfExists(file: string): unknown {
  let text: string;
  let fd: number;
  try {
    // A FIFO or device would block the open (and the whole devserver) until someone writes: look first.
    const named = lstatSync(file);
    if (!named.isFile() && !named.isSymbolicLink())
      throw new Error(`devserver state file ${file} is not a regular file; refusing to open it`);
    // not through a symbolic link, never waiting (if the name was swapped for a FIFO since), and checked
    // again on the open file itself
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if ((err as NodeJS.ErrnoException).code === "ELOOP")
      throw new Error(`devserver state file ${file} is a symbolic link; refusing to trust it`, { cause: err });
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile()) throw new Error(`devserver state file ${file} is not a regular file`);
    if (uid !== undefined && st.uid !== uid)
      throw new Error(`devserver state file ${file} belongs to another user (uid ${st.uid}); refusing to trust it`);
    if ((st.mode & 0o022) !== 0)
      throw new Error(`devserver state file ${file} is writable by group or others; refusing to trust it`);
    text = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`devserver state file ${file} is not valid JSON`, { cause: err });
  }
}

/**
 * Debounces snapshot writes: `markDirty()` schedules one write after `delayMs`; writes never overlap, and
 * `flush()` writes any pending change at once (used on close).
 */
export class Persister {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();
  private lastError: unknown;
  /** Number of completed writes (for tests). */
  writes = 0;

  constructor(
    readonly file: string,
    private readonly snapshot: () => unknown,
    private readonly delayMs: number,
  ) {}

  /** Schedules a write of the current state. */
  markDirty(): void {
    this.dirty = true;
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.writeNow();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Writes pending changes now; resolves when they are on disk. Rejects with the last write failure. */
  async flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.writeNow();
    if (this.lastError !== undefined) {
      const err = this.lastError;
      this.lastError = undefined;
      throw err;
    }
  }

  private writeNow(): Promise<void> {
    this.writing = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      try {
        await writeJsonAtomic(this.file, this.snapshot());
        this.writes += 1;
      } catch (err) {
        this.dirty = true;
        this.lastError = err;
      }
    });
    return this.writing;
  }
}
