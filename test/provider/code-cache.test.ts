/**
 * The provider entry's bundle and its V8 code cache (provider/code-cache.ts): a second load compiles from
 * the cache the first one wrote, the cache grows with the provider methods that run, and a cache that
 * does not belong (another text, a file V8 refuses, a directory others can write) is never used. The
 * bundle here is a small stand-in with the provider entry's shape; the engine suite loads the real one.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { crc32 } from "node:zlib";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import ts from "typescript";
import { codeCacheDir } from "../../provider/code-cache";

const root = mkdtempSync(join(tmpdir(), "pss-code-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let seq = 0;
/** A fresh directory holding a bundle of the entry's shape, whose methods echo and whose `fail` rejects. */
function fixture(tag = "a"): { bundle: string; cache: string } {
  const dir = join(root, `case-${++seq}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "helper.js"), "module.exports = { twice: (x) => x * 2 };\n");
  const text = `"use strict";
const { twice } = require("./helper.js");
const tag = ${JSON.stringify(tag)};
const impl = {
  async check(olds, news) { return { inputs: { ...news, tag, n: twice(news.n ?? 1) } }; },
  async diff() { return { changes: false }; },
  async create(inputs) { if (inputs.fail) throw new Error("create failed: " + inputs.fail); return { id: "x", outs: inputs }; },
  async read(id, props) { return { id, props }; },
  async update(id, olds, news) { return { outs: news }; },
  async delete() {},
};
exports.provider = (kind) => { if (kind !== "job") throw new TypeError("unknown resource kind " + kind); return impl; };
exports.configure = () => undefined;
exports.where = () => __filename;
`;
  const bundle = join(dir, "host-bundle.js");
  writeFileSync(bundle, text);
  return { bundle, cache: join(dir, "cache") };
}

// V8 keeps what it compiled for the life of a process, so a second load in the same process never asks
// the cache: every load runs in a plain Node process of its own, as every provider host does.
const compiled = join(root, "code-cache.js");
writeFileSync(
  compiled,
  ts.transpileModule(readFileSync(join(__dirname, "..", "..", "provider", "code-cache.ts"), "utf8"), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText,
);
const CHILD = `
const [bundle, cache, calls] = JSON.parse(process.argv[1]);
const { loadBundle } = require(${JSON.stringify(compiled)});
const out = { loaded: [], saved: [], results: [] };
const entry = loadBundle(bundle, cache ?? undefined, {
  loaded: (how) => out.loaded.push(how),
  saved: (_file, covered) => out.saved.push([...covered].sort()),
});
out.where = entry.where();
(async () => {
  for (const [m, ...args] of calls) {
    try {
      out.results.push(await entry.provider("job")[m](...args));
    } catch (e) {
      out.results.push({ error: e.message });
      out.stack = e.stack;
    }
  }
  await new Promise((r) => setImmediate(r));
  console.log(JSON.stringify(out));
})();`;

interface Loaded {
  loaded: string[];
  saved: string[][];
  results: unknown[];
  where: string;
  stack?: string;
}

/** Loads a bundle in a fresh process, makes the calls (method name, then its arguments) and reports the cache's events. */
function load(bundle: string, cache: string | undefined, calls: unknown[][] = []): Loaded {
  return JSON.parse(execFileSync(process.execPath, ["-e", CHILD, JSON.stringify([bundle, cache ?? null, calls])], { encoding: "utf8" })) as Loaded;
}

describe("the bundle's code cache", () => {
  it("runs the bundle as a module of its own directory", () => {
    const f = fixture();
    const r = load(f.bundle, undefined, [["check", {}, { n: 2 }]]);
    expect(r.where).toBe(f.bundle);
    expect(r.loaded).toEqual(["off"]);
    expect(r.results).toEqual([{ inputs: { n: 4, tag: "a" } }]);
  });

  it("writes a cache on first load; the next load compiles from it; each method's first call adds its code", () => {
    const f = fixture();
    const first = load(f.bundle, f.cache, [["check", {}, { n: 1 }], ["check", {}, { n: 1 }]]);
    expect(first.loaded).toEqual(["none"]);
    expect(first.saved).toEqual([[], ["check"]]); // at load, then after check's first call only

    const second = load(f.bundle, f.cache, [["check", {}, { n: 1 }], ["create", { n: 1 }]]);
    expect(second.loaded).toEqual(["accepted"]);
    expect(second.saved).toEqual([["check", "create"]]); // check was covered; create is added

    const files = readdirSync(f.cache);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^host-[0-9a-f]{40}\.v8$/);
    expect(readFileSync(join(f.cache, files[0]!), "utf8").split("\n")[0]).toMatch(/^\{"covered":\["check","create"\],"crc32":\d+\}$/);

    const third = load(f.bundle, f.cache, [["check", {}, { n: 1 }], ["create", { n: 1 }]]);
    expect(third.loaded).toEqual(["accepted"]);
    expect(third.saved).toEqual([]);
  });

  it("saves after a call that failed too, and passes the failure on unchanged", () => {
    const f = fixture();
    const r = load(f.bundle, f.cache, [["create", { fail: "boom" }]]);
    expect(r.results).toEqual([{ error: "create failed: boom" }]);
    expect(r.saved).toEqual([[], ["create"]]);
  });

  it("writes nothing more once every method is covered", () => {
    const f = fixture();
    const all = ["check", "diff", "create", "read", "update", "delete"].map((m) => [m, "x", {}, {}]);
    expect(load(f.bundle, f.cache, all).saved.at(-1)).toEqual(["check", "create", "delete", "diff", "read", "update"]);
    const again = load(f.bundle, f.cache, all);
    expect(again.loaded).toEqual(["accepted"]);
    expect(again.saved).toEqual([]);
  });

  it("keys the cache by the bundle's text: an edited bundle does not use the old cache", () => {
    const f = fixture("a");
    load(f.bundle, f.cache);
    // Same length, different text: V8 alone would take the old cache for it.
    writeFileSync(f.bundle, readFileSync(f.bundle, "utf8").replace('const tag = "a"', 'const tag = "b"'));
    const again = load(f.bundle, f.cache, [["check", {}, {}]]);
    expect(again.loaded).toEqual(["none"]);
    expect(again.results).toEqual([{ inputs: { n: 2, tag: "b" } }]);
    expect(readdirSync(f.cache)).toHaveLength(2);
  });

  it("keys the cache by the bundle's path too: a copy elsewhere has its own, and its errors name its own file", () => {
    const f = fixture();
    load(f.bundle, f.cache, [["check", {}, {}]]);
    const copy = join(root, `copy-${++seq}`);
    mkdirSync(copy);
    writeFileSync(join(copy, "helper.js"), readFileSync(join(dirname(f.bundle), "helper.js")));
    writeFileSync(join(copy, "host-bundle.js"), readFileSync(f.bundle));
    const other = load(join(copy, "host-bundle.js"), f.cache, [["create", { fail: "where" }]]);
    expect(other.loaded).toEqual(["none"]);
    expect(other.stack).toContain(join(copy, "host-bundle.js"));
    expect(readdirSync(f.cache)).toHaveLength(2);
  });

  it("replaces a file V8 refuses, and ignores one that is not a cache file or whose bytes changed", () => {
    const f = fixture();
    load(f.bundle, f.cache);
    const file = join(f.cache, readdirSync(f.cache)[0]!);
    const junk = Buffer.alloc(4096, 7);
    writeFileSync(file, Buffer.concat([Buffer.from(`{"covered":["check"],"crc32":${crc32(junk)}}\n`), junk]));
    const refused = load(f.bundle, f.cache, [["check", {}, { n: 3 }]]);
    expect(refused.loaded).toEqual(["rejected"]);
    expect(refused.results).toEqual([{ inputs: { n: 6, tag: "a" } }]);
    expect(refused.saved).toEqual([[], ["check"]]); // what the refused file claimed to cover is forgotten with it

    writeFileSync(file, "not a cache file");
    expect(load(f.bundle, f.cache).loaded).toEqual(["none"]);
    expect(load(f.bundle, f.cache).loaded).toEqual(["accepted"]);

    // One byte of the compiled code changed on disk: not handed to V8 (which would not notice), written anew.
    const good = readFileSync(file);
    const damaged = Buffer.from(good);
    damaged[damaged.length - 100] = (damaged[damaged.length - 100]! + 1) % 256;
    writeFileSync(file, damaged);
    expect(load(f.bundle, f.cache).loaded).toEqual(["none"]);
    expect(load(f.bundle, f.cache).loaded).toEqual(["accepted"]);
  });

  it("uses no directory that others can write or that is a link, and leaves no temporary files", () => {
    const f = fixture();
    mkdirSync(f.cache);
    chmodSync(f.cache, 0o777);
    expect(load(f.bundle, f.cache).loaded).toEqual(["off"]);
    expect(readdirSync(f.cache)).toEqual([]);

    const real = join(root, `real-${++seq}`);
    mkdirSync(real, { mode: 0o700 });
    const link = join(root, `link-${seq}`);
    symlinkSync(real, link, "dir");
    expect(load(f.bundle, link).loaded).toEqual(["off"]);
    expect(readdirSync(real)).toEqual([]);

    const ok = fixture();
    load(ok.bundle, ok.cache, [["check", {}, {}]]);
    expect(readdirSync(ok.cache).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("a host that writes a new cache removes other releases' files not written for 30 days, and dead writers' temporary files", () => {
    const f = fixture();
    mkdirSync(f.cache, { mode: 0o700 });
    const old = Date.now() / 1000 - 31 * 24 * 3600;
    const stale = ["host-0000000000000000000000000000000000000000.v8", "host-1111111111111111111111111111111111111111.v8.123.tmp"];
    const kept = ["host-2222222222222222222222222222222222222222.v8", "notes.txt"];
    for (const name of [...stale, ...kept]) writeFileSync(join(f.cache, name), "x");
    for (const name of [...stale, "notes.txt"]) utimesSync(join(f.cache, name), old, old);
    load(f.bundle, f.cache);
    const left = readdirSync(f.cache);
    for (const name of stale) expect(left).not.toContain(name);
    for (const name of kept) expect(left).toContain(name);
    expect(left).toHaveLength(3); // the two kept and the new cache
  });

  it("keeps at most the 16 most recently written cache files (each installation path has its own)", () => {
    const f = fixture();
    mkdirSync(f.cache, { mode: 0o700 });
    const now = Date.now() / 1000;
    const names = Array.from({ length: 20 }, (_, i) => `host-${String(i).padStart(40, "0")}.v8`);
    // Written one minute apart: names[0] the newest.
    names.forEach((name, i) => {
      writeFileSync(join(f.cache, name), "x");
      utimesSync(join(f.cache, name), now - 60 * (i + 1), now - 60 * (i + 1));
    });
    load(f.bundle, f.cache);
    const left = readdirSync(f.cache).sort();
    expect(left).toHaveLength(16);
    expect(left).toEqual([...names.slice(0, 15)].concat(left.filter((n) => !names.includes(n))).sort());
  });

  it("still loads when the directory cannot be made", () => {
    const f = fixture();
    const blocker = join(root, `file-${++seq}`);
    writeFileSync(blocker, "");
    const r = load(f.bundle, join(blocker, "cache"), [["check", {}, {}]]);
    expect(r.loaded).toEqual(["off"]);
    expect(r.results).toEqual([{ inputs: { n: 2, tag: "a" } }]);
  });
});

describe("codeCacheDir", () => {
  it("is off with NODE_DISABLE_COMPILE_CACHE, under NODE_COMPILE_CACHE when set, else this user's in the temp directory", () => {
    expect(codeCacheDir({ NODE_DISABLE_COMPILE_CACHE: "1", NODE_COMPILE_CACHE: "/somewhere" })).toBeUndefined();
    expect(codeCacheDir({ NODE_COMPILE_CACHE: "/somewhere" })).toBe(join("/somewhere", "pulumi-secrets-scheduler"));
    expect(codeCacheDir({})).toBe(join(tmpdir(), `pulumi-secrets-scheduler-${String(process.getuid?.() ?? "")}`));
  });
});
