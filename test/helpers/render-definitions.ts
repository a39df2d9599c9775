/**
 * Renders, from each resource definition (provider/resources/definition.ts): the SDK file
 * `sdk/generated/<module>.ts` (the `*Args` interface, a base class declaring the output properties, the
 * props the constructor registers) and the reference page `docs/reference/<module>.md`. The text is plain
 * here; test/generated.test.ts formats the TypeScript with prettier before comparing or writing it.
 */
import {
  NEW_SETTINGS_DOC,
  shownDefault,
  type Field,
  type ResourceDefinition,
} from "../../provider/resources/definition";

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

/** The SDK file of one resource. */
export function renderSdk(def: ResourceDefinition): string {
  const fields = Object.entries(def.fields);
  const inputs = fields.filter(([, f]) => f.kind !== "output" && f.sdkArg);
  const outputs = fields.filter(([, f]) => f.sdkOutput);
  const types = new Set(inputs.flatMap(([, f]) => [f, ...Object.values(f.object?.fields ?? {})]));
  const connections = [...types]
    .filter((f) => f.type === "connection")
    .map((f) => CONNECTION_TYPE[f.service ?? "secrets"]);
  let out = `// ${header(def)}\n`;
  out += `import * as pulumi from "@pulumi/pulumi";\n`;
  if (connections.length > 0)
    out += `import type { ${[...new Set(connections)].sort().join(", ")} } from "../connection";\n`;
  if ([...types].some((f) => inputType(f) === "ListInput")) out += `import type { ListInput } from "../types";\n`;
  for (const line of def.sdkImports ?? []) out += `${line}\n`;
  out += "\n";
  for (const [, f] of inputs) out += renderObjectTypes(f);
  out += jsdoc(def.argsDoc, "");
  out += `export interface ${def.name}Args {\n`;
  for (const [k, f] of inputs) {
    out += jsdoc(f.doc, "  ");
    const optional = !f.required || f.default !== undefined;
    out += `  ${k}${optional ? "?" : ""}: ${inputType(f)};\n`;
  }
  out += "}\n\n";
  out += jsdoc(`The output properties of an {@link ${def.name}}: ${lowerFirst(def.doc)}`, "");
  out += `export abstract class ${def.name}Resource extends pulumi.dynamic.Resource {\n`;
  for (const [k, f] of outputs) {
    out += jsdoc(f.outputDoc ?? f.doc, "  ");
    out += `  declare readonly ${k}: pulumi.Output<${outputType(f)}>;\n`;
  }
  out += "}\n\n";
  out += jsdoc(
    `The props an {@link ${def.name}} registers: every input, and every output property seeded (only keys present in props become outputs).`,
    "",
  );
  out += `export function ${lowerFirst(def.name)}Props(args: ${def.name}Args): Record<string, unknown> {\n  return {\n`;
  for (const [k, f] of outputs) if (f.kind === "output") out += `    ${k}: undefined,\n`;
  for (const [k, f] of inputs)
    out += f.secret
      ? `    ${k}: args.${k} === undefined ? undefined : pulumi.secret(args.${k}),\n`
      : `    ${k}: args.${k},\n`;
  out += "  };\n}\n";
  const secrets = fields.filter(([, f]) => f.secret).map(([k]) => JSON.stringify(k));
  if (secrets.length > 0) {
    out += "\n";
    out += jsdoc(
      `The options an {@link ${def.name}} registers with: the caller's, and every secret field (${secrets.join(", ")}) among the additional secret outputs.`,
      "",
    );
    out += `export function ${lowerFirst(def.name)}Options(opts?: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {\n`;
    out += `  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ${secrets.join(", ")}] };\n}\n`;
  }
  return out;
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
    const doc = f.secret ? `${f.doc} Always kept secret.` : f.doc;
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
