import { promises as fs, readFileSync } from "node:fs";
import * as path from "node:path";

/** Writes a JSON document atomically: temp file, fsync, rename, then fsync of the directory (best effort). */
export async function writeJsonAtomic(file: string, data: unknown): Promise<void> {
  // Serialize before the first await so the file holds one consistent moment of the state.
  const text = JSON.stringify(data);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await fs.open(tmp, "w", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
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
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
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
