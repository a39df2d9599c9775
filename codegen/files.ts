/**
 * Every file `npm run generate` writes, as it should read today: rendered from the resource registry and
 * definitions (provider/resources/definitions/) by ./render.ts, TypeScript formatted with prettier.
 * ./generate.ts writes them; test/generated.test.ts compares them with the committed files.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as prettier from "prettier";
import { definitions, resources } from "../provider/resources/definitions";
import { checkNames, renderPackageJson, renderReference, renderSdk, renderSdkIndex, renderShim } from "./render";

/** One generated file: its path from the repository root and its whole text. */
export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

/**
 * Every generated file of the repository at `root` as rendered, before formatting ({@link formatted}), in a
 * stable order. package.json is read: only its shims' `exports` are generated.
 */
export function renderedFiles(root: string): GeneratedFile[] {
  const perResource = Object.entries(resources).flatMap(([kind, def]) => {
    checkNames(kind, def);
    return [
      { path: `sdk/generated/${def.module}.ts`, text: renderSdk(def) },
      { path: `sdk/shim/${def.module}.ts`, text: renderShim(kind) },
      { path: `docs/reference/${def.module}.md`, text: renderReference(def) },
    ];
  });
  const pkg = readFileSync(join(root, "package.json"), "utf8");
  return [
    ...perResource,
    { path: "sdk/generated/index.ts", text: renderSdkIndex(definitions) },
    { path: "package.json", text: renderPackageJson(pkg, definitions) },
  ];
}

/** A rendered file's text as written: TypeScript formatted with the repository's prettier config. */
export async function formatted(root: string, { path, text }: GeneratedFile): Promise<string> {
  if (!path.endsWith(".ts")) return text;
  const full = join(root, path);
  const config = await prettier.resolveConfig(full);
  return prettier.format(text, { ...config, filepath: full });
}
