// Synchronous access to the real HCL2 parser (hashicorp/hcl v2 compiled to WebAssembly, shipped in
// @cdktf/hcl2json). The package's public API is async only because it instantiates the WebAssembly
// module asynchronously; the exported Go functions themselves answer through their callback before
// returning. Compiling the module with the synchronous WebAssembly constructors lets the parse route
// stay synchronous. This leans on the package layout (wasm/bridge_wasm_exec.js, main.wasm.gz and the
// global the Go side registers its functions on), which is why the dependency is pinned exactly.

import * as fs from "fs";
import * as path from "path";
import * as zlib from "zlib";

/** Result of one parser call: the JSON text on success, the parser's diagnostic text on failure. */
export type EngineResult =
  { readonly ok: true; readonly json: string } | { readonly ok: false; readonly error: string };

type GoCallback = (err: string | null, result: string | null) => void;
type GoFunction = (filename: string, source: string, cb: GoCallback) => void;
// The project's lib settings carry no WebAssembly typings (they live in the DOM lib), so the few
// members used here are declared locally.
interface WasmInstance {
  readonly exports: unknown;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => unknown;
  Instance: new (module: unknown, imports: unknown) => WasmInstance;
}
interface GoRuntime {
  readonly importObject: unknown;
  run(instance: WasmInstance): Promise<void>;
}
type GoConstructor = new () => GoRuntime;

/** Global the Go side registers `parse`, `parseExpression` and `getExpressionAst` on (set by the package's Go code). */
const ROOT_GLOBAL = "__parse_terraform_config_wasm__";

let exported: Record<string, unknown> | undefined;

/** The parser's package: an optional peer dependency of this library, needed only by the devserver's HCL path. */
const PARSER_PACKAGE = "@cdktf/hcl2json";
const PARSER_VERSION = "0.21.0";

function packageDir(): string {
  try {
    return path.dirname(require.resolve(`${PARSER_PACKAGE}/package.json`));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw e;
    throw new Error(
      `the devserver parses HCL jobspecs with ${PARSER_PACKAGE}, an optional peer dependency of pulumi-secrets-scheduler that is not installed; ` +
        `install it where the devserver runs: npm install --save-dev --save-exact ${PARSER_PACKAGE}@${PARSER_VERSION} (jobs given as JSON need nothing)`,
      { cause: e },
    );
  }
}

function load(): Record<string, unknown> {
  if (exported) return exported;
  const dir = packageDir();
  // Defines globalThis.Go (Go's own wasm_exec runtime glue).
  require(path.join(dir, "wasm", "bridge_wasm_exec.js"));
  const GoCtor = (globalThis as unknown as { Go?: GoConstructor }).Go;
  if (typeof GoCtor !== "function") throw new Error("HCL parser runtime did not load");
  const go = new GoCtor();
  const bytes = zlib.gunzipSync(fs.readFileSync(path.join(dir, "main.wasm.gz")));
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const instance = new wasm.Instance(new wasm.Module(bytes), go.importObject);
  const root: Record<string, unknown> = {};
  (globalThis as unknown as Record<string, unknown>)[ROOT_GLOBAL] = root;
  // main() registers the functions and then blocks forever; the promise never settles normally.
  go.run(instance).catch(() => {
    exported = undefined;
  });
  if (typeof root["parse"] !== "function") throw new Error("HCL parser did not register its functions");
  exported = root;
  return root;
}

function call(name: string, filename: string, source: string): EngineResult {
  const fn = load()[name];
  if (typeof fn !== "function") throw new Error(`HCL parser has no function ${name}`);
  let result: EngineResult | undefined;
  try {
    (fn as GoFunction)(filename, source, (err, json) => {
      result = err ? { ok: false, error: String(err) } : { ok: true, json: json ?? "null" };
    });
  } catch (e) {
    // A panic ends the Go program; the next call loads a fresh instance.
    exported = undefined;
    throw e;
  }
  if (!result) throw new Error("HCL parser did not answer synchronously");
  return result;
}

/** Parses HCL2 native syntax into the hcl2json form: blocks become (label-keyed) lists, non-literal expressions stay "${...}" templates. */
export function hclToJson(filename: string, source: string): EngineResult {
  return call("parse", filename, source);
}
