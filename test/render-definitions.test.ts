/**
 * What test/helpers/render-definitions.ts makes of a field marked secret, of an object field and of a
 * setting's service default, on a small definition (the real ones are checked by test/generated.test.ts).
 */
import { describe, expect, it } from "vitest";
import { defineResource, field } from "../provider/resources/definition";
import { renderReference, renderSdk } from "./helpers/render-definitions";

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
    expect(sdk).toContain("export function safeOptions(opts?: pulumi.CustomResourceOptions)");
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
});
