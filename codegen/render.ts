/**
 * Renders, from the registry and each resource definition (provider/resources/definitions/): the SDK file
 * `sdk/generated/<module>.ts` (the `*Args` interface and the resource class), their index, the shim
 * `sdk/shim/<module>.ts`, the shims' entries of package.json's `exports`, and the reference page
 * `docs/reference/<module>.md`. The text is plain here; ./files.ts formats the TypeScript with prettier.
 */
import { NEW_SETTINGS_DOC, type Field, type ResourceDefinition } from "../provider/resources/definition";
import { shownDefault } from "../provider/resources/setting-values";

const CONNECTION_TYPE = { secrets: "SecretsConnection", scheduler: "SchedulerConnection" } as const;

function header(def: ResourceDefinition): string {
  return `Generated from provider/resources/definitions/${def.module}.ts by \`npm run generate\`: do not edit.`;
}

/** The SDK input type of a field. */
function inputType(f: Field): string {
  if (f.sdkType !== undefined) return `pulumi.Input<${f.sdkType}>`;
  switch (f.type) {
    case "list":
      return "ListInput";
    case "duration":
      return "pulumi.Input<number | string>";
    case "enum":
      return `pulumi.Input<${(f.values ?? []).map((v) => JSON.stringify(v)).join(" | ")}>`;
    case "connection":
      return `pulumi.Input<${CONNECTION_TYPE[f.service ?? "secrets"]}>`;
    case "object":
      return `pulumi.Input<${f.object?.input.name}>`;
    default:
      return `pulumi.Input<${f.type}>`;
  }
}

/** The SDK output type of a field (the value inside `pulumi.Output`). */
function outputType(f: Field): string {
  if (f.sdkOutputType !== undefined) return f.sdkOutputType;
  const base =
    f.type === "list"
      ? "string[]"
      : f.type === "duration"
        ? "number | string"
        : f.type === "enum"
          ? "string"
          : f.type === "connection"
            ? CONNECTION_TYPE[f.service ?? "secrets"]
            : f.type === "object"
              ? (f.object?.output.name ?? "")
              : f.type;
  return alwaysSet(f) ? base : `${base} | undefined`;
}

/** True when state always holds the field (required, or filled in by `check`). */
function alwaysSet(f: Field): boolean {
  return f.required || (f.default !== undefined && f.kind !== "setting");
}

/** A JSDoc comment, wrapped to the project's print width. */
function jsdoc(text: string, indent: string): string {
  const width = 120 - indent.length;
  if (`/** ${text} */`.length <= width) return `${indent}/** ${text} */\n`;
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && ` * ${line} ${word}`.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`).join("\n")}\n${indent} */\n`;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** The type of a sub-field in an object's output interface (an enum keeps its values). */
function subOutputType(f: Field): string {
  return f.type === "enum"
    ? (f.values ?? []).map((v) => JSON.stringify(v)).join(" | ")
    : outputType(f).replace(/ \| undefined$/, "");
}

/** The SDK input and output interfaces of an object field's sub-fields. */
function renderObjectTypes(f: Field): string {
  if (f.object === undefined) return "";
  const subs = Object.entries(f.object.fields);
  let out = jsdoc(f.object.input.doc, "");
  out += `export interface ${f.object.input.name} {\n`;
  for (const [k, s] of subs) out += `${jsdoc(s.doc, "  ")}  ${k}?: ${inputType(s)};\n`;
  out += "}\n\n";
  out += jsdoc(f.object.output.doc, "");
  out += `export interface ${f.object.output.name} {\n`;
  for (const [k, s] of subs) out += `${jsdoc(s.outputDoc ?? s.doc, "  ")}  ${k}?: ${subOutputType(s)};\n`;
  return `${out}}\n\n`;
}

/** A name's first letter uppercased. */
function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A class name in kebab case: `JobVersionTag` -> `job-version-tag`. */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c, i: number) => `${i === 0 ? "" : "-"}${c.toLowerCase()}`);
}

/**
 * Checks a registry entry against the naming rule every generated path relies on: the kind is the class
 * name with a lowercase first letter, the module the class name in kebab case.
 */
export function checkNames(kind: string, def: ResourceDefinition): void {
  if (def.name !== upperFirst(kind) || def.module !== kebab(def.name))
    throw new Error(
      `the registry's "${kind}" has name "${def.name}" and module "${def.module}": expected "${upperFirst(kind)}" and "${kebab(upperFirst(kind))}"`,
    );
}

/** The SDK inputs of a definition: `[key, field]` of every field the `*Args` interface has. */
function sdkInputs(def: ResourceDefinition): [string, Field][] {
  return Object.entries(def.fields).filter(([, f]) => f.kind !== "output" && f.sdkArg);
}

/**
 * The types the SDK exports with a resource class: its `*Args`, the input interface of each object
 * argument, and each type an argument is declared with by name (`sdkType` a bare type name).
 */
function sdkTypeExports(def: ResourceDefinition): string[] {
  const inputs = sdkInputs(def).map(([, f]) => f);
  const objects = inputs.flatMap((f) => (f.object === undefined ? [] : [f.object.input.name]));
  const named = inputs.flatMap((f) => (f.sdkType !== undefined && /^[A-Z]\w*$/.test(f.sdkType) ? [f.sdkType] : []));
  return [`${def.name}Args`, ...objects, ...named];
}

/**
 * The SDK file of one resource (`sdk/generated/<module>.ts`): the `*Args` interface and the class, which
 * declares the output properties and registers every key of its `args` (a key the resource does not have
 * reaches `check`, which refuses it by name), the secret inputs wrapped, with its shim.
 */
export function renderSdk(def: ResourceDefinition): string {
  const fields = Object.entries(def.fields);
  const inputs = sdkInputs(def);
  const outputs = fields.filter(([, f]) => f.sdkOutput);
  const computed = Object.entries(def.sdkComputed ?? {});
  const bySdk = fields.filter(([, f]) => f.kind !== "output" && !f.sdkArg).map(([k]) => k);
  if (bySdk.join() !== computed.map(([k]) => k).join())
    throw new Error(
      `${def.name}: the inputs with sdkArg false (${bySdk.join(", ")}) and the keys of sdkComputed (${computed.map(([k]) => k).join(", ")}) must be the same, in definition order`,
    );
  const types = new Set(inputs.flatMap(([, f]) => [f, ...Object.values(f.object?.fields ?? {})]));
  const connections = [...types]
    .filter((f) => f.type === "connection")
    .map((f) => CONNECTION_TYPE[f.service ?? "secrets"]);
  const required = inputs.filter(([, f]) => f.required && f.default === undefined).map(([k]) => k);
  if (def.sdkArgsOptional === true && required.length > 0)
    throw new Error(`${def.name}: sdkArgsOptional, but ${required.join(", ")} must be set`);
  const lower = lowerFirst(def.name);
  let out = `// ${header(def)}\n`;
  out += `import * as pulumi from "@pulumi/pulumi";\n`;
  if (connections.length > 0)
    out += `import type { ${[...new Set(connections)].sort().join(", ")} } from "../connection";\n`;
  out += `// A default import of the shim's \`export =\` object: the same object as \`require("../shim/${def.module}")\` once compiled.\n`;
  out += `import shim from "../shim/${def.module}";\n`;
  out += `import { pauseStackTraces, resumeStackTraces } from "../stacks";\n`;
  if ([...types].some((f) => inputType(f) === "ListInput")) out += `import type { ListInput } from "../types";\n`;
  for (const line of def.sdkImports ?? []) out += `${line}\n`;
  out += "\n";
  // The named types of arguments come from sdkImports: exported again with the class.
  const declared = new Set([`${def.name}Args`, ...inputs.flatMap(([, f]) => (f.object ? [f.object.input.name] : []))]);
  const imported = sdkTypeExports(def).filter((t) => !declared.has(t));
  if (imported.length > 0) out += `export type { ${imported.join(", ")} };\n\n`;
  for (const [, f] of inputs) out += renderObjectTypes(f);
  out += jsdoc(def.argsDoc, "");
  out += `export interface ${def.name}Args {\n`;
  for (const [k, f] of inputs) {
    out += jsdoc(f.doc, "  ");
    const optional = !f.required || f.default !== undefined;
    out += `  ${k}${optional ? "?" : ""}: ${inputType(f)};\n`;
  }
  out += "}\n\n";
  out += jsdoc(def.doc, "");
  out += `export class ${def.name} extends pulumi.dynamic.Resource {\n`;
  for (const [k, f] of outputs) {
    out += jsdoc(f.outputDoc ?? f.doc, "  ");
    out += `  declare readonly ${k}: pulumi.Output<${outputType(f)}>;\n`;
  }
  out += "\n";
  out += jsdoc(
    `Declares the ${def.name} \`name\` of the stack; \`pulumi up\` makes the service match \`args\`. A key of \`args\` the ${def.name} does not have (a typo in JavaScript) is refused by the provider's \`check\`, which names it.`,
    "  ",
  );
  const argsParam = def.sdkArgsOptional === true ? `args: ${def.name}Args = {}` : `args: ${def.name}Args`;
  out += `  constructor(name: string, ${argsParam}, opts?: pulumi.CustomResourceOptions) {\n`;
  out += "    // Registered with stack capture off: see ../stacks.\n";
  out += "    const limit = pauseStackTraces();\n";
  out += "    try {\n";
  const secrets = fields.filter(([, f]) => f.secret).map(([k]) => JSON.stringify(k));
  const options = secrets.length > 0 ? `${lower}Options(opts)` : "opts";
  out += `      super(shim, name, ${lower}Props(args), ${options}, "pulumi-secrets-scheduler", ${JSON.stringify(def.name)});\n`;
  out += "    } catch (e) {\n";
  out += `      throw resumeStackTraces(limit, e, ${def.name});\n`;
  out += "    } finally {\n";
  out += "      resumeStackTraces(limit);\n";
  out += "    }\n";
  out += "  }\n";
  out += "}\n\n";
  out += jsdoc(
    `The props an {@link ${def.name}} registers: every output property seeded (only keys present in props become outputs), every key of \`args\` (one the resource does not have reaches \`check\`, which refuses it by name), then every input as the provider takes it (a secret one wrapped with \`pulumi.secret\`)${computed.length > 0 ? " and the inputs the SDK computes itself" : ""}.`,
    "",
  );
  out += `function ${lower}Props(args: ${def.name}Args): Record<string, unknown> {\n  return {\n`;
  for (const [k, f] of outputs) if (f.kind === "output") out += `    ${k}: undefined,\n`;
  out += "    ...args,\n";
  for (const [k, f] of inputs)
    out += f.secret
      ? `    ${k}: args.${k} === undefined ? undefined : pulumi.secret(args.${k}),\n`
      : `    ${k}: args.${k},\n`;
  for (const [k, expr] of computed) out += `    ${k}: ${expr},\n`;
  out += "  };\n}\n";
  if (secrets.length > 0) {
    out += "\n";
    out += jsdoc(
      `The options an {@link ${def.name}} registers with: the caller's, and every secret field (${secrets.join(", ")}) among the additional secret outputs.`,
      "",
    );
    out += `function ${lower}Options(opts?: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {\n`;
    out += `  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ${secrets.join(", ")}] };\n}\n`;
  }
  return out;
}

const REGISTRY_HEADER =
  "Generated from the registry (provider/resources/definitions/index.ts) by `npm run generate`: do not edit.";

/** `sdk/generated/index.ts`: every resource class and the types exported with it, in the registry's order. */
export function renderSdkIndex(defs: readonly ResourceDefinition[]): string {
  let out = `// ${REGISTRY_HEADER}\n`;
  out += "/** The resource classes and the types of their arguments. */\n";
  for (const def of defs)
    out += `export { ${[def.name, ...sdkTypeExports(def).map((t) => `type ${t}`)].join(", ")} } from "./${def.module}";\n`;
  return out;
}

/**
 * `sdk/shim/<module>.ts`: the shim of one kind. Its path is stored in every stack that uses the resource
 * (`pulumi-secrets-scheduler/shim/<module>`), so a module never changes once released.
 */
export function renderShim(kind: string): string {
  return (
    `// ${REGISTRY_HEADER}\n` +
    `// The ${kind} shim. Its path is stored in every stack that uses the resource: never rename or move it.\n` +
    `import { makeShim } from "./make";\n\n` +
    `export = makeShim(${JSON.stringify(kind)});\n`
  );
}

/**
 * package.json with its `exports` holding one `./shim/<module>` entry per resource, in the registry's order,
 * where the shims' entries were (else before `./package.json`); everything else as it was.
 */
export function renderPackageJson(text: string, defs: readonly ResourceDefinition[]): string {
  const pkg = JSON.parse(text) as Record<string, unknown>;
  const old = (pkg["exports"] ?? {}) as Record<string, unknown>;
  const shims = Object.fromEntries(
    defs.map((def) => [
      `./shim/${def.module}`,
      { types: `./dist/sdk/shim/${def.module}.d.ts`, default: `./dist/sdk/shim/${def.module}.js` },
    ]),
  );
  const exports: Record<string, unknown> = {};
  let placed = false;
  const place = (): void => {
    if (!placed) Object.assign(exports, shims);
    placed = true;
  };
  for (const [k, v] of Object.entries(old)) {
    if (k.startsWith("./shim/")) place();
    else {
      if (k === "./package.json") place();
      exports[k] = v;
    }
  }
  place();
  pkg["exports"] = exports;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Markdown table cell text: pipes escaped, newlines folded. */
function cell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

function code(s: string): string {
  return `\`${s}\``;
}

function shown(v: unknown): string {
  return v === undefined ? "" : code(JSON.stringify(v));
}

/** How a replacement is made, by {@link ResourceDefinition.replaceOrder}. */
const REPLACE_ORDER: Readonly<Record<ResourceDefinition["replaceOrder"], string>> = {
  "delete-first": "the old one is deleted first, then the new one created",
  "create-first": "the new one is created first, then the old one deleted",
};

/** The reference page of one resource. */
export function renderReference(def: ResourceDefinition): string {
  const fields = Object.entries(def.fields);
  const inputs = fields.filter(([, f]) => f.kind !== "output");
  const outputs = fields.filter(([, f]) => f.kind === "output");
  const replacing = inputs.filter(([, f]) => f.replaceOnChange).map(([k]) => code(k));
  const settings = inputs.filter(([, f]) => f.kind === "setting" && !f.replaceOnChange).map(([k]) => code(k));
  const lines: string[] = [`<!-- ${header(def)} -->`, "", `# ${def.name}`, "", def.doc, ""];
  lines.push(`ID: ${code(def.id)}. Type token: ${code(`pulumi-nodejs:dynamic/pulumi-secrets-scheduler:${def.name}`)}.`);
  lines.push("", "## Inputs", "");
  lines.push("| input | type | default | on change | secret | description |", "|---|---|---|---|---|---|");
  for (const [k, f] of inputs) {
    const req = f.required && f.default === undefined ? " (required)" : "";
    const change =
      f.change !== undefined
        ? f.change
        : f.replaceOnChange
          ? "replaces"
          : f.type === "connection"
            ? "see [replace rules](#replace-rules)"
            : f.kind === "option"
              ? "no request"
              : "updates";
    lines.push(
      `| ${code(k)}${req} | ${cell(code(inputType(f)))} | ${cell(shown(shownDefault(f)))} | ${change} | ${f.secret ? "yes" : ""} | ${cell(f.doc)} |`,
    );
  }
  for (const [k, f] of inputs) {
    if (f.object === undefined) continue;
    lines.push("", `### ${code(k)}`, "", f.object.input.doc.replace(/\{@link ([^}]+)\}/g, "`$1`"), "");
    lines.push("| field | type | service key | description |", "|---|---|---|---|");
    for (const [s, sub] of Object.entries(f.object.fields))
      lines.push(
        `| ${code(s)} | ${cell(code(inputType(sub)))} | ${sub.wire === undefined ? "" : code(sub.wire)} | ${cell(sub.doc)} |`,
      );
  }
  lines.push("", "## Outputs", "");
  const kept = inputs
    .filter(([, f]) => (f.secret || !f.echo) && !f.sdkOutput)
    .map(([k, f]) => (f.secret ? `the secret ${code(k)}` : code(k)));
  const named = kept.length > 1 ? `${kept.slice(0, -1).join(", ")} and ${kept[kept.length - 1]}` : kept[0];
  const except = named !== undefined ? `, except ${named}, which state keeps as inputs only` : "";
  lines.push(`Every input is also an output, as \`check\` normalized it${except}. Besides them:`, "");
  lines.push("| output | type | description |", "|---|---|---|");
  // Inputs the provider resolves into outputs of its own (not copied as given).
  for (const [k, f] of inputs.filter(([, x]) => !x.echo && x.sdkOutput))
    lines.push(`| ${code(k)} | ${cell(code(outputType(f)))} | ${cell(f.outputDoc ?? f.doc)} |`);
  for (const [k, f] of outputs) {
    const doc = f.secret
      ? `${f.doc} Always kept secret.`
      : f.sourcedSecret
        ? `${f.doc} A secret when a source of the job is secret, or was when this was stored.`
        : f.doc;
    lines.push(`| ${code(k)} | ${cell(code(outputType(f)))} | ${cell(doc)} |`);
  }
  lines.push("", "## Replace rules", "");
  lines.push(`- A change of ${replacing.join(" or ")} replaces the ${def.name}: ${REPLACE_ORDER[def.replaceOrder]}.`);
  const connection = inputs.find(([, f]) => f.type === "connection");
  if (connection !== undefined) {
    const [key, f] = connection;
    lines.push(`- A ${code(key)} to another address replaces it too: created there first, then deleted here.`);
    if (f.newSettings !== undefined) lines.push(`- In a ${code(key)}, ${lowerFirst(NEW_SETTINGS_DOC[f.newSettings])}`);
  }
  if (settings.length > 0) lines.push(`- Every other setting (${settings.join(", ")}) updates it in place.`);
  if (def.notes !== undefined) lines.push("", def.notes);
  return `${lines.join("\n")}\n`;
}
