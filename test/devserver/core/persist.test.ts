import {
  chmodSync,
  chownSync,
  mkdtempSync,
  promises as fsp,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { request } from "undici";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { startServiceHost, writeJsonAtomic, type ServiceModule } from "../../../devserver/core";
import { readJsonIfExists } from "../../../devserver/core/persist";

/** A module that keeps notes in a Map and persists them. */
function notes(): ServiceModule & { restored: unknown[] } {
  const store = new Map<string, string>();
  const restored: unknown[] = [];
  return {
    name: "scheduler",
    restored,
    routes(r, ctx) {
      r.post("/v1/note/:id", (req) => {
        store.set(req.params.id ?? "", req.raw.toString("utf8"));
        return { json: { Index: ctx.nextIndex() } };
      });
      r.get("/v1/note/:id", (req) => {
        const v = store.get(req.params.id ?? "");
        return v === undefined ? { status: 404, text: "missing" } : { text: v, headers: ctx.queryMeta(ctx.index()) };
      });
    },
    snapshot: () => [...store],
    restore: (data) => {
      restored.push(data);
      if (!Array.isArray(data)) return;
      for (const entry of data) {
        if (Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1] === "string")
          store.set(entry[0], entry[1]);
      }
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "devserver-persist-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function call(url: string, token: string, method = "GET", body?: string) {
  const res = await request(url, { method: method as "GET", headers: { "X-Svc-Token": token }, body });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe("persistence", () => {
  it("keeps module data, tokens, root tokens and the index across a restart", async () => {
    const file = join(dir, "state.json");
    const first = await startServiceHost({ services: [notes()], persistPath: file });
    const root = first.rootTokens.scheduler;
    const minted = first.createToken("scheduler", { capabilities: ["*"] });
    const put = await call(`${first.urls.scheduler}/v1/note/a%2Fb`, root, "POST", "hello");
    const index = JSON.parse(put.text).Index as number;
    await first.close();

    const mod = notes();
    const second = await startServiceHost({ services: [mod], persistPath: file });
    try {
      expect(second.rootTokens).toEqual(first.rootTokens);
      const got = await call(`${second.urls.scheduler}/v1/note/a%2Fb`, minted);
      expect([got.status, got.text, got.headers["x-svc-index"]]).toEqual([200, "hello", String(index)]);
      const next = await call(`${second.urls.scheduler}/v1/note/c`, root, "POST", "x");
      expect(JSON.parse(next.text).Index).toBe(index + 1);
      expect(mod.restored).toEqual([[["a/b", "hello"]]]);
    } finally {
      await second.close();
    }
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("writes after a change without waiting for close (debounced)", async () => {
    const file = join(dir, "debounce.json");
    const s = await startServiceHost({ services: [notes()], persistPath: file, persistDelayMs: 5 });
    try {
      await call(`${s.urls.scheduler}/v1/note/k`, s.rootTokens.scheduler, "POST", "v1");
      await expect
        .poll(() => {
          try {
            return JSON.stringify(JSON.parse(readFileSync(file, "utf8")).services.scheduler.data);
          } catch {
            return "";
          }
        })
        .toBe(JSON.stringify([["k", "v1"]]));
    } finally {
      await s.close();
    }
  });

  it("lets an explicit root token win over the persisted one", async () => {
    const file = join(dir, "explicit.json");
    const a = await startServiceHost({ persistPath: file });
    await a.close();
    const b = await startServiceHost({ persistPath: file, scheduler: { rootToken: "fixed-root" } });
    try {
      expect(b.rootTokens.scheduler).toBe("fixed-root");
      expect(b.rootTokens.secrets).toBe(a.rootTokens.secrets);
    } finally {
      await b.close();
    }
  });

  it("refuses to start from a state file it does not understand", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{not json");
    await expect(startServiceHost({ persistPath: bad })).rejects.toThrow(/not valid JSON/);
    writeFileSync(bad, JSON.stringify({ version: "1", services: {} }));
    await expect(startServiceHost({ persistPath: bad })).rejects.toThrow(/unknown layout/);
    writeFileSync(bad, JSON.stringify({ version: 99, services: {} }));
    await expect(startServiceHost({ persistPath: bad })).rejects.toThrow(/written by a newer devserver/);
  });

  it("replaces files atomically and leaves no temp file", async () => {
    const file = join(dir, "atomic.json");
    await writeJsonAtomic(file, { a: 1 });
    await writeJsonAtomic(file, { a: 2 });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 2 });
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

describe("persistence files are private", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("never writes into a temp file someone else created at a predictable name, and leaves the state file 0600", async () => {
    const file = join(dir, "shared-state.json");
    // the former temp name was <file>.<pid>.<Date.now()>.tmp, opened with "w": pre-creating it kept its mode
    vi.spyOn(Date, "now").mockReturnValue(1_700_000_000_000);
    const planted = `${file}.${process.pid}.1700000000000.tmp`;
    writeFileSync(planted, "");
    chmodSync(planted, 0o666);
    await writeJsonAtomic(file, { token: "root-secret" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(planted, "utf8")).toBe("");
    rmSync(planted);
  });

  it("creates the temp file exclusively with mode 0600 next to the target", async () => {
    const file = join(dir, "flags.json");
    writeFileSync(file, "{}");
    chmodSync(file, 0o644);
    const open = vi.spyOn(fsp, "open");
    await writeJsonAtomic(file, { a: 1 });
    const [tmp, flags, mode] = open.mock.calls[0] ?? [];
    expect([flags, mode]).toEqual(["wx", 0o600]);
    expect(String(tmp).startsWith(join(dir, "."))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  // Run in a child process, bundled from the source: with the former blocking open a FIFO held the process
  // until someone wrote to it, which in this one would hold the test runner too. The time bound only ends a
  // hung child; the check is its answer.
  it.skipIf(process.platform === "win32")(
    "refuses a FIFO (or device) planted at the state file's name without opening it",
    () => {
      const fifo = join(dir, "fifo-state.json");
      execFileSync("mkfifo", [fifo]);
      const bundled = buildSync({
        entryPoints: [join(__dirname, "../../../devserver/core/persist.ts")],
        bundle: true,
        platform: "node",
        format: "cjs",
        write: false,
      }).outputFiles[0]?.text;
      const script = `${bundled ?? ""}
try { module.exports.readJsonIfExists(process.argv[1]); console.log("read"); }
catch (e) { console.log("refused: " + e.message); }`;
      const child = spawnSync(process.execPath, ["-e", script, fifo], { encoding: "utf8", timeout: 20_000 });
      expect([child.signal, child.stdout.trim()]).toEqual([
        null,
        `refused: devserver state file ${fifo} is not a regular file; refusing to open it`,
      ]);
      expect(() => readJsonIfExists("/dev/null")).toThrow(/not a regular file/);
    },
  );

  it("refuses to load a state file through a symbolic link, writable by others, or owned by another user", async () => {
    const real = join(dir, "real-state.json");
    await writeJsonAtomic(real, { version: 99, services: {} });
    const link = join(dir, "link-state.json");
    symlinkSync(real, link);
    await expect(startServiceHost({ persistPath: link })).rejects.toThrow(/symbolic link/);
    const open = join(dir, "open-state.json");
    await writeJsonAtomic(open, { version: 99, services: {} });
    chmodSync(open, 0o666);
    await expect(startServiceHost({ persistPath: open })).rejects.toThrow(/writable by group or others/);
    if (process.getuid?.() === 0) {
      const foreign = join(dir, "foreign-state.json");
      await writeJsonAtomic(foreign, { version: 99, services: {} });
      chownSync(foreign, 4242, 4242);
      await expect(startServiceHost({ persistPath: foreign })).rejects.toThrow(/belongs to another user/);
    }
  });
});
