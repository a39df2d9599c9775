/**
 * What codegen/render.ts makes of a field marked secret, of an object field, of a setting's service default,
 * of the class's arguments, of a shim and of package.json's exports, on a small definition (the real ones are
 * checked by test/generated.test.ts).
 */
import { describe, expect, it } from "vitest";
import { defineResource, field } from "../../provider/resources/definition";
import {
  checkNames,
  renderPackageJson,
  renderReference,
  renderSdk,
  renderSdkIndex,
  renderShim,
} from "../../codegen/render";

const DEF = defineResource({
  name: "Safe",
  module: "safe",
  doc: "A safe.",
  argsDoc: "Arguments of a safe.",
  id: "<name>",
  replaceOrder: "create-first",
  fields: {
    name: field.string({ doc: "Name.", kind: "source", required: true, replaceOnChange: true }),
    code: field.string({ doc: "Code.", kind: "setting", secret: true, sdkOutput: false }),
    tries: field.number({ doc: "Tries.", wire: "tries", unsetMeans: 3 }),
    lock: field.object(
      { bolts: field.number({ doc: "Bolts.", wire: "bolts" }) },
      {
        doc: "Lock.",
        kind: "setting",
        types: { input: { name: "LockArgs", doc: "A lock." }, output: { name: "Lock", doc: "The lock." } },
      },
    ),
    codeHash: field.string({ doc: "Hash of the code.", kind: "output", secret: true }),
    connection: field.connection("secrets", "reads"),
  },
});

describe("rendering a definition", () => {
  const sdk = renderSdk(DEF);

  it("wraps a secret input with pulumi.secret and lists every secret field among the additional secret outputs", () => {
    expect(sdk).toContain("    code: args.code === undefined ? undefined : pulumi.secret(args.code),\n");
    expect(sdk).toContain("    name: args.name,\n");
    expect(sdk).toContain("function safeOptions(opts?: pulumi.CustomResourceOptions)");
    expect(sdk).toContain(`additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), "code", "codeHash"]`);
    expect(sdk).not.toContain("declare readonly code:");
    expect(sdk).toContain("declare readonly codeHash: pulumi.Output<string | undefined>;");
  });

  it("renders no options function for a definition without secrets", () => {
    const plain = defineResource({ ...DEF, fields: { name: DEF.fields.name } });
    expect(renderSdk(plain)).not.toContain("Options(");
  });

  it("renders an object field's input and output interfaces and its sub-fields on the reference page", () => {
    expect(sdk).toContain("export interface LockArgs {\n  /** Bolts. */\n  bolts?: pulumi.Input<number>;\n}");
    expect(sdk).toContain("export interface Lock {\n  /** Bolts. */\n  bolts?: number;\n}");
    expect(sdk).toContain("  lock?: pulumi.Input<LockArgs>;\n");
    const md = renderReference(DEF);
    expect(md).toContain("| `bolts` | `pulumi.Input<number>` | `bolts` | Bolts. |");
    expect(md).toContain("| `code` | `pulumi.Input<string>` |  | updates | yes | Code. |");
    expect(md).toContain("| `tries` | `pulumi.Input<number>` | `3` | updates |  | Tries. |");
    expect(md).toContain("except the secret `code`, which state keeps as inputs only");
  });

  it("says how a replacement is made and what new connection settings do, from the definition", () => {
    const md = renderReference(DEF);
    expect(md).toContain(
      "- A change of `name` replaces the Safe: the new one is created first, then the old one deleted.\n",
    );
    expect(renderReference({ ...DEF, replaceOrder: "delete-first" })).toContain(
      "replaces the Safe: the old one is deleted first, then the new one created.",
    );
    expect(md).toContain(
      "- A `connection` to another address replaces it too: created there first, then deleted here.\n",
    );
    expect(md).toContain(
      "- In a `connection`, a new token, TLS setting, header style or timeout is an update that reads",
    );
    expect(md).not.toContain("updates state only");
  });

  it("registers every key of args, then the inputs as the provider takes them, after the seeded outputs", () => {
    const props = sdk.slice(sdk.indexOf("function safeProps("));
    const at = (text: string): number => {
      expect(props).toContain(text);
      return props.indexOf(text);
    };
    expect(at("    codeHash: undefined,\n")).toBeLessThan(at("    ...args,\n"));
    expect(at("    ...args,\n")).toBeLessThan(at("    name: args.name,\n"));
    expect(sdk).toContain('super(shim, name, safeProps(args), safeOptions(opts), "pulumi-secrets-scheduler", "Safe");');
    expect(sdk).toContain('import shim from "../shim/safe";');
    expect(sdk).toContain("  constructor(name: string, args: SafeArgs, opts?: pulumi.CustomResourceOptions) {\n");
  });

  it("computes the inputs the definition says the SDK sets, and refuses a mismatch with sdkArg", () => {
    const secretless = { ...DEF.fields, code: field.string({ doc: "Code.", kind: "setting", sdkArg: false }) };
    const computed = defineResource({ ...DEF, fields: secretless, sdkComputed: { code: "codeOf(args)" } });
    expect(renderSdk(computed)).toContain("    code: codeOf(args),\n");
    expect(renderSdk(computed)).not.toContain("code?: pulumi.Input<string>;");
    expect(() => renderSdk(defineResource({ ...DEF, fields: secretless }))).toThrow(/sdkComputed/);
  });

  it("lets args be left out only where the definition says so and nothing is required", () => {
    const optional = defineResource({ ...DEF, fields: { tries: DEF.fields.tries }, sdkArgsOptional: true });
    expect(renderSdk(optional)).toContain("constructor(name: string, args: SafeArgs = {}, opts?:");
    expect(() => renderSdk(defineResource({ ...DEF, sdkArgsOptional: true }))).toThrow(/name must be set/);
  });
});

describe("rendering from the registry", () => {
  it("holds a kind, its class name and its module to one naming rule", () => {
    expect(() =>
      checkNames("jobVersionTag", { ...DEF, name: "JobVersionTag", module: "job-version-tag" }),
    ).not.toThrow();
    expect(() => checkNames("safe", DEF)).not.toThrow();
    expect(() => checkNames("vault", DEF)).toThrow(/expected "Vault" and "vault"/);
    expect(() => checkNames("safe", { ...DEF, module: "safes" })).toThrow(/module "safes"/);
  });

  it("renders a shim that captures nothing but the kind's name", () => {
    expect(renderShim("safe")).toMatch(/import \{ makeShim \} from "\.\/make";\n\nexport = makeShim\("safe"\);\n$/);
  });

  it("exports each class with its Args and its object arguments' input types", () => {
    expect(renderSdkIndex([DEF])).toContain('export { Safe, type SafeArgs, type LockArgs } from "./safe";\n');
  });

  it("puts one shim export per resource where the shims were, and leaves the rest of package.json as it was", () => {
    const pkg = {
      name: "p",
      exports: { ".": "./dist/index.js", "./shim/old": { default: "./x.js" }, "./package.json": "./package.json" },
      files: ["dist"],
    };
    const out = JSON.parse(renderPackageJson(JSON.stringify(pkg), [DEF])) as typeof pkg;
    expect(Object.keys(out)).toEqual(["name", "exports", "files"]);
    expect(out.exports).toEqual({
      ".": "./dist/index.js",
      "./shim/safe": { types: "./dist/sdk/shim/safe.d.ts", default: "./dist/sdk/shim/safe.js" },
      "./package.json": "./package.json",
    });
    expect(Object.keys(out.exports)).toEqual([".", "./shim/safe", "./package.json"]);
  });
});
