/**
 * The `__provider` text every resource stores in state: small, stable, free of secrets, and runnable by
 * the host.
 */
import { describe, expect, it } from "vitest";
import { runChild } from "../harness/child";
import { KINDS, record, type EngineContext } from "../harness/context";
import { hashTree } from "../harness/pack";
import { execFile } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { promisify } from "node:util";

interface ProviderLoad {
  atLoad: string[];
  resourceFiles: string[];
  zodCoreFiles: string[];
  entryFiles: string[];
  checked: boolean;
  frenchLocale: string;
  afterUse: number;
  node: string;
  compileCache: boolean;
  compileCacheDir: string | null;
  jwtAudience: string;
}

/** Budget for one serialized provider (perf-floor §4). */
export const PROVIDER_BUDGET_BYTES = 2048;

/** Registers the serialization tests. */
export function serializationSuite(get: () => EngineContext): void {
  describe("serialized provider (__provider)", () => {
    it("can find the package root from the project (Pulumi maps shim files through it)", () => {
      // Pulumi's serializer locates a module's package.json by resolving the bare package name; if "."
      // does not resolve, it emits a require of the raw file path, which the exports map then forbids.
      const p = get().projects[0];
      expect(() => p.require.resolve("pulumi-secrets-scheduler")).not.toThrow();
    });

    it("importing the package root loads no HTTP client or schema library until `clients` is used", async () => {
      const { value } = await runChild<{
        afterImport: { undici: boolean; zod: boolean };
        resources: string[];
        clientKeys: string[];
        schedulerClient: string;
        afterClients: { undici: boolean; zod: boolean };
      }>(get().projects[0], "imports.cjs");
      expect(value.resources).toEqual(["function", "function", "function", "function", "function"]);
      expect(value.afterImport).toEqual({ undici: false, zod: false });
      expect(value.clientKeys).toContain("SecretsClient");
      expect(value.schedulerClient).toBe("function");
      // The clients' schemas load with them; undici waits for the first request (a provider host that
      // sends none, a preview with nothing changed, never loads it).
      expect(value.afterClients).toEqual({ undici: false, zod: true });
    });

    it("a resource's code loads from the one bundled file, with none of zod's translated messages until they are used", async () => {
      const home = mkdtempSync(join(tmpdir(), "pss-cache-home-"));
      try {
        const { value } = await runChild<ProviderLoad>(get().projects[0], "provider-load.cjs", [], {
          env: { XDG_CACHE_HOME: home, NODE_COMPILE_CACHE: undefined },
        });
        // The index in the cache is provider/lazy-zod-locales.ts's stand-in, not zod's own; English is in the bundle.
        expect(value.atLoad).toEqual(["index.cjs"]);
        expect(value.resourceFiles).toEqual([]);
        expect(value.zodCoreFiles).toEqual([]);
        // From the library's own files, only the loader and its cache-directory check: the rest is in host-bundle.js.
        expect(value.entryFiles).toEqual(["host-bundle.js", "host.js", "user-cache.js"]);
        expect(value.checked).toBe(true);
        expect(value.frenchLocale).toBe("function");
        expect(value.afterUse).toBeGreaterThan(60);
        // jose is ESM-only: its dynamic import works from CommonJS on every supported Node (no vm.Script in between).
        expect(value.jwtAudience).toBe("load");
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });

    it("Node's own compile cache goes to a private directory in the user's cache home and nowhere in the temp directory", async () => {
      const base = realpathSync(mkdtempSync(join(tmpdir(), "pss-compile-cache-")));
      const home = join(base, "cache-home");
      const tmp = join(base, "tmp");
      mkdirSync(tmp, { mode: 0o700 });
      const dir = join(home, "pulumi-secrets-scheduler", "compile-cache");
      const env = {
        XDG_CACHE_HOME: home,
        TMPDIR: tmp,
        NODE_COMPILE_CACHE: undefined,
        NODE_DISABLE_COMPILE_CACHE: undefined,
      };
      const files = (d: string): Map<string, number> => {
        const out = new Map<string, number>();
        for (const e of readdirSync(d, { recursive: true, withFileTypes: true }))
          if (e.isFile()) out.set(join(e.parentPath, e.name), statSync(join(e.parentPath, e.name)).mtimeMs);
        return out;
      };
      try {
        const project = get().projects[0];
        const first = await runChild<ProviderLoad>(project, "provider-load.cjs", [], {
          env: { ...env, NODE_DEBUG_NATIVE: "COMPILE_CACHE" },
        });
        expect(first.value.checked).toBe(true);
        expect(first.value.jwtAudience).toBe("load");
        expect(readdirSync(tmp)).toEqual([]);
        record(get(), "compileCache", "node", first.value.node);
        // Every supported Node has a compile cache: the host always turns it on.
        expect(first.value.compileCache).toBe(true);
        const st = lstatSync(dir);
        expect(st.isDirectory()).toBe(true);
        expect(st.mode & 0o777).toBe(0o700);
        expect(st.uid).toBe(process.getuid?.());
        expect(first.value.compileCacheDir?.startsWith(dir + sep)).toBe(true);
        const bundle = (verdict: string): RegExp =>
          new RegExp(`cache for (?:CommonJS )?\\S*/pulumi-secrets-scheduler/dist/provider/host-bundle\\.js ${verdict}`);
        expect(first.stderr).toMatch(bundle("was not initialized"));
        const written = files(dir);
        expect(written.size).toBeGreaterThan(0);

        // The next host compiles the bundle from it; Node rewrites nothing it accepted.
        const second = await runChild<ProviderLoad>(project, "provider-load.cjs", [], {
          env: { ...env, NODE_DEBUG_NATIVE: "COMPILE_CACHE" },
        });
        expect(second.value.checked).toBe(true);
        expect(second.value.jwtAudience).toBe("load");
        expect(second.stderr).toMatch(bundle("was accepted"));
        expect(files(dir)).toEqual(written);
        expect(readdirSync(tmp)).toEqual([]);

        // Turned off as for Node's own cache: nothing is made.
        const offHome = join(base, "off-home");
        const off = await runChild<ProviderLoad>(project, "provider-load.cjs", [], {
          env: { ...env, XDG_CACHE_HOME: offHome, NODE_DISABLE_COMPILE_CACHE: "1" },
        });
        expect(off.value.compileCacheDir).toBeNull();
        expect(existsSync(offHome)).toBe(false);

        // NODE_COMPILE_CACHE, Node's own setting, is honoured: the cache goes there and nothing to the cache home.
        const own = join(base, "own");
        const ownHome = join(base, "own-home");
        const chosen = await runChild<ProviderLoad>(project, "provider-load.cjs", [], {
          env: { ...env, XDG_CACHE_HOME: ownHome, NODE_COMPILE_CACHE: own },
        });
        expect(chosen.value.compileCacheDir?.startsWith(own + sep)).toBe(true);
        expect(existsSync(join(ownHome, "pulumi-secrets-scheduler", "compile-cache"))).toBe(false);

        // A cache directory others can write is not used.
        const openHome = join(base, "open-home");
        mkdirSync(join(openHome, "pulumi-secrets-scheduler", "compile-cache"), { recursive: true });
        chmodSync(join(openHome, "pulumi-secrets-scheduler", "compile-cache"), 0o777);
        const open = await runChild<ProviderLoad>(project, "provider-load.cjs", [], {
          env: { ...env, XDG_CACHE_HOME: openHome },
        });
        expect(open.value.checked).toBe(true);
        expect(open.value.compileCacheDir).toBeNull();
        expect(readdirSync(join(openHome, "pulumi-secrets-scheduler", "compile-cache"))).toEqual([]);
        expect(readdirSync(tmp)).toEqual([]);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    });

    it.each(KINDS)("%s is a require of the installed shim, within budget", (kind) => {
      const ctx = get();
      const s = ctx.serialized[0].kinds[kind];
      const bytes = Buffer.byteLength(s.text);
      record(ctx, "providerBytes", kind, bytes);
      record(ctx, "serializeFirstMs", kind, Math.round(s.firstMs));
      expect(bytes).toBeLessThanOrEqual(PROVIDER_BUDGET_BYTES);
      // Loaded from node_modules, the shim is captured by reference through the exports map.
      expect(s.shimPath).toContain(
        join("node_modules", "pulumi-secrets-scheduler", "dist", "sdk", "shim", `${kind}.js`),
      );
      expect(s.text).toContain(`require("pulumi-secrets-scheduler/shim/${kind}")`);
      expect(s.containsSecrets).toBe(false);
    });

    it("is byte-identical across provider objects, processes, builds and project paths", () => {
      const [a, b] = get().serialized;
      for (const kind of KINDS) {
        expect(a.kinds[kind].again).toBe(a.kinds[kind].text);
        expect(b.kinds[kind].text).toBe(a.kinds[kind].text);
      }
      // Each kind has its own text (the host caches providers by text).
      expect(new Set(KINDS.map((k) => a.kinds[k].text)).size).toBe(KINDS.length);
    });

    it("comes from two builds that are byte-identical", () => {
      const [a, b] = get().packs;
      const ha = hashTree(join(a.stageDir, "dist"));
      const hb = hashTree(join(b.stageDir, "dist"));
      expect(ha.size).toBeGreaterThan(0);
      expect([...hb.entries()]).toEqual([...ha.entries()]);
    });

    it("contains no token, secret or machine path", () => {
      const ctx = get();
      for (const kind of KINDS) {
        const text = ctx.provider(kind);
        for (const secret of ctx.secrets) expect(text).not.toContain(secret);
        expect(text).not.toContain(ctx.workDir);
        expect(text).not.toMatch(/\/(tmp|home|root|work)\//);
      }
    });

    it("from a program inside the package itself (the root Pulumi.yaml), a shim serialized by value runs in the host", async () => {
      // The build's staging directory is such a package: package.json (name and exports), dist/ and
      // node_modules. A program directory in it with no package.json loads the library by self-reference.
      const program = join(get().packs[0].stageDir, "program");
      mkdirSync(program, { recursive: true });
      copyFileSync(
        join(__dirname, "..", "harness", "self-ref", "self-reference.cjs"),
        join(program, "self-reference.cjs"),
      );
      const { stdout } = await promisify(execFile)(process.execPath, ["self-reference.cjs"], {
        cwd: program,
        maxBuffer: 16 * 1024 * 1024,
      });
      const out = JSON.parse(stdout) as {
        byReference: boolean;
        error?: string;
        calls: { check?: { inputKeys: string[]; failures: unknown[] } };
      };
      expect(out.byReference, "not from node_modules: serialized by value").toBe(false);
      expect(out.error).toBeUndefined();
      expect(out.calls.check).toEqual({ inputKeys: ["path", "type"], failures: [] });
    });

    it("evaluates like the host does and yields all seven methods", async () => {
      const ctx = get();
      const texts = KINDS.map((k) => ctx.provider(k));
      const { value } = await runChild<string[][]>(ctx.projects[1], "evaluate.cjs", [], {
        input: JSON.stringify(texts),
      });
      for (const methods of value) {
        expect(methods).toEqual(["check", "configure", "create", "delete", "diff", "read", "update"]);
      }
    });
  });
}
