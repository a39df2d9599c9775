// Decodes the parser's JSON form of a jobspec into the job API's JSON, block by block, driven by the
// tables in job-schema.ts and job-levels.ts, then applies the normalisations the real jobspec decoder
// performs (constraint shorthands, static ports become reserved ports, template and vault defaults, ...).

import { JOB } from "./job-levels";
import type { BlockRef, BlockSpec, Kind } from "./job-schema";
import { POST, inheritSecrets } from "./job-post";
import { type Scope, evaluateDeep } from "./eval";
import { type OutlineItem, type SourcePos, formatPos } from "./outline";
import { EvalError, type HclObject, type HclValue, formatDiag, isObject } from "./values";
import { parseDuration } from "./duration";

type Out = Record<string, unknown>;

interface Ctx {
  readonly filename: string;
  readonly scope: Scope;
  readonly diags: string[];
}

type Entry =
  | { readonly kind: "attr"; readonly name: string; readonly pos?: SourcePos; readonly raw: HclValue | undefined }
  | {
      readonly kind: "block";
      readonly type: string;
      readonly labels: readonly string[];
      readonly pos?: SourcePos;
      readonly raw: HclValue | undefined;
      readonly items?: readonly OutlineItem[];
    };

class KindError extends Error {
  constructor(
    readonly summary: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const at = (ctx: Ctx, pos: SourcePos | undefined): string | undefined => pos && formatPos(ctx.filename, pos);

function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_x, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

function suggest(name: string, candidates: readonly string[]): string {
  const best = candidates.find((c) => levenshtein(name, c) < 3);
  return best ? ` Did you mean "${best}"?` : "";
}

/** Lines up the outline of a body with the parser's JSON for it (block bodies by type, label and occurrence). */
function entries(raw: HclObject, items: readonly OutlineItem[] | undefined, blockNames: readonly string[]): Entry[] {
  if (!items) {
    const out: Entry[] = [];
    for (const key of Object.keys(raw)) {
      const v = raw[key] as HclValue;
      if (blockNames.includes(key) && Array.isArray(v) && v.every(isObject))
        v.forEach((body) => out.push({ kind: "block", type: key, labels: [], raw: body }));
      else if (
        blockNames.includes(key) &&
        isObject(v) &&
        Object.values(v).every((x) => Array.isArray(x) && x.every(isObject))
      ) {
        for (const label of Object.keys(v))
          (v[label] as HclValue[]).forEach((body) =>
            out.push({ kind: "block", type: key, labels: [label], raw: body }),
          );
      } else out.push({ kind: "attr", name: key, raw: v });
    }
    return out;
  }
  const seen = new Map<string, number>();
  return items.map((item): Entry => {
    if (item.kind === "attr") return { kind: "attr", name: item.name, pos: item.pos, raw: raw[item.name] };
    const key = [item.type, ...item.labels].join("\u0000");
    const k = seen.get(key) ?? 0;
    seen.set(key, k + 1);
    let node: HclValue | undefined = raw[item.type];
    for (const l of item.labels) node = isObject(node) ? node[l] : undefined;
    return {
      kind: "block",
      type: item.type,
      labels: item.labels,
      pos: item.pos,
      raw: Array.isArray(node) ? node[k] : undefined,
      items: item.body,
    };
  });
}

function convert(v: HclValue, kind: Kind): unknown {
  const need = (what: string): never => {
    throw new KindError("Incorrect attribute value type", what);
  };
  switch (kind) {
    case "any":
      return v;
    case "string":
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
      return need("string required");
    case "int":
    case "number": {
      const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
      if (Number.isNaN(n)) return need("a number is required");
      if (kind === "int" && !Number.isInteger(n)) return need("value must be a whole number");
      return n;
    }
    case "bool":
      if (typeof v === "boolean") return v;
      if (v === "true" || v === "false") return v === "true";
      return need("a bool is required");
    case "duration":
      if (typeof v === "number") return Math.trunc(v);
      if (typeof v !== "string")
        throw new KindError(
          "Unsuitable value type",
          `Unsuitable value: expected a string but found ${Array.isArray(v) ? "tuple" : isObject(v) ? "object" : typeof v}`,
        );
      try {
        return parseDuration(v);
      } catch (e) {
        throw new KindError("Unsuitable value type", `Unsuitable duration value: ${(e as Error).message}`);
      }
    case "strings":
      if (!Array.isArray(v)) return need("list of string required");
      return v.map((x) => convert(x, "string"));
    case "stringMap": {
      if (!isObject(v)) return need("map of string required");
      const out: Record<string, string> = {};
      for (const k of Object.keys(v).sort()) out[k] = convert(v[k] as HclValue, "string") as string;
      return out;
    }
  }
}

function attrValue(ctx: Ctx, name: string, pos: SourcePos | undefined, raw: HclValue | undefined, kind: Kind): unknown {
  if (raw === undefined) return undefined;
  try {
    const v = evaluateDeep(raw, ctx.scope);
    return v === null ? undefined : convert(v, kind);
  } catch (e) {
    if (e instanceof KindError) {
      const detail =
        e.summary === "Incorrect attribute value type"
          ? `Inappropriate value for attribute "${name}": ${e.detail}.`
          : e.detail;
      ctx.diags.push(formatDiag(at(ctx, pos), e.summary, detail));
    } else if (e instanceof EvalError) ctx.diags.push(formatDiag(at(ctx, pos), e.summary, e.detail));
    else throw e;
    return undefined;
  }
}

function unsupported(ctx: Ctx, e: Entry, spec: { attrs: readonly string[]; blocks: readonly string[] }): void {
  if (e.kind === "attr")
    ctx.diags.push(
      formatDiag(
        at(ctx, e.pos),
        "Unsupported argument",
        `An argument named "${e.name}" is not expected here.${suggest(e.name, spec.attrs)}`,
      ),
    );
  else
    ctx.diags.push(
      formatDiag(
        at(ctx, e.pos),
        "Unsupported block type",
        `Blocks of type "${e.type}" are not expected here.${suggest(e.type, spec.blocks)}`,
      ),
    );
}

/** Decodes a free-form block (driver config): object-literal arguments and nested blocks become lists of objects. */
function decodeFree(ctx: Ctx, raw: HclObject, items: readonly OutlineItem[] | undefined): HclObject {
  const out: HclObject = {};
  const blockNames = Object.keys(raw).filter((k) => Array.isArray(raw[k]) || isObject(raw[k]));
  for (const e of entries(raw, items, items ? [] : blockNames)) {
    if (e.kind === "attr") {
      const v = attrValue(ctx, e.name, e.pos, e.raw, "any") as HclValue | undefined;
      if (v !== undefined) out[e.name] = isObject(e.raw) ? [v] : v;
      continue;
    }
    const body = decodeFree(ctx, isObject(e.raw) ? e.raw : {}, e.items);
    const element = e.labels.reduceRight<HclObject>((inner, label) => ({ [label]: [inner] }), body);
    const list = out[e.type];
    out[e.type] = Array.isArray(list) ? [...list, element] : [element];
  }
  return sortKeys(out) as HclObject;
}

function sortKeys(v: HclValue): HclValue {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  const out: HclObject = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k] as HclValue);
  return out;
}

/** Converts loosely modelled blocks: snake_case names become PascalCase, repeated blocks become lists. */
function decodeGeneric(ctx: Ctx, raw: HclObject, items: readonly OutlineItem[] | undefined): HclObject {
  const out: HclObject = {};
  const pascal = (s: string): string => s.replace(/(^|_)([a-z0-9])/g, (_m, _u: string, c: string) => c.toUpperCase());
  for (const e of entries(
    raw,
    items,
    Object.keys(raw).filter((k) => Array.isArray(raw[k])),
  )) {
    if (e.kind === "attr") {
      const v = attrValue(ctx, e.name, e.pos, e.raw, "any") as HclValue | undefined;
      if (v !== undefined) out[pascal(e.name)] = v;
      continue;
    }
    const body = decodeGeneric(ctx, isObject(e.raw) ? e.raw : {}, e.items);
    const key = pascal(e.type);
    const prev = out[key];
    out[key] = prev === undefined ? body : Array.isArray(prev) ? [...prev, body] : [prev, body];
  }
  return out;
}

function decodeStringMap(
  ctx: Ctx,
  raw: HclObject,
  items: readonly OutlineItem[] | undefined,
  lists: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of entries(raw, items, [])) {
    if (e.kind === "block") {
      unsupported(ctx, e, { attrs: [], blocks: [] });
      continue;
    }
    const v = attrValue(ctx, e.name, e.pos, e.raw, lists ? "strings" : "string");
    if (v !== undefined) out[e.name] = v;
  }
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, out[k]]),
  );
}

function decodeTarget(ctx: Ctx, ref: BlockRef, e: BlockEntry): unknown {
  const raw = isObject(e.raw) ? e.raw : {};
  if (ref.target === "free") return decodeFree(ctx, raw, e.items);
  if (ref.target === "generic") return decodeGeneric(ctx, raw, e.items);
  if (ref.target === "stringMap" || ref.target === "stringListMap")
    return decodeStringMap(ctx, raw, e.items, ref.target === "stringListMap");
  const out = decodeBlock(
    ctx,
    raw,
    e.items,
    ref.target,
    ref.labelField && e.labels[0] !== undefined ? { [ref.labelField]: e.labels[0] } : {},
  );
  return out;
}

type BlockEntry = Entry & { readonly kind: "block" };

/**
 * Expands `dynamic "<type>" { for_each labels iterator content {} }` into one block per element, each
 * decoded in a scope where the iterator (default: the block type) holds `key` and `value`.
 */
function expandDynamic(ctx: Ctx, e: BlockEntry): (readonly [Ctx, BlockEntry])[] {
  const type = e.labels[0];
  const raw = isObject(e.raw) ? e.raw : {};
  if (e.labels.length !== 1 || type === undefined) {
    ctx.diags.push(
      formatDiag(at(ctx, e.pos), "Missing name for dynamic", "All dynamic blocks must have 1 labels (type)."),
    );
    return [];
  }
  const contentItem = e.items?.find((i) => i.kind === "block" && i.type === "content");
  const content = Array.isArray(raw["content"]) ? raw["content"][0] : undefined;
  if (raw["for_each"] === undefined || !isObject(content)) {
    const missing =
      raw["for_each"] === undefined
        ? 'The argument "for_each" is required, but no definition was found.'
        : 'A block of type "content" is required.';
    ctx.diags.push(formatDiag(at(ctx, e.pos), "Missing required argument", missing));
    return [];
  }
  const iterator = typeof raw["iterator"] === "string" ? raw["iterator"].replace(/^\$\{(.*)\}$/, "$1") : type;
  let collection: HclValue;
  try {
    collection = evaluateDeep(raw["for_each"] as HclValue, ctx.scope);
  } catch (err) {
    if (!(err instanceof EvalError)) throw err;
    ctx.diags.push(formatDiag(at(ctx, e.pos), err.summary, err.detail));
    return [];
  }
  const pairs: [HclValue, HclValue][] = Array.isArray(collection)
    ? collection.map((v, i) => [i, v])
    : isObject(collection)
      ? Object.keys(collection).map((k) => [k, (collection as HclObject)[k] as HclValue])
      : [];
  return pairs.map(([key, value]) => {
    const scoped: Ctx = { ...ctx, scope: { ...ctx.scope, [iterator]: { key, value } } };
    const labels =
      raw["labels"] === undefined
        ? []
        : ((attrValue(scoped, "labels", e.pos, raw["labels"], "strings") as string[] | undefined) ?? []);
    const items = contentItem?.kind === "block" ? contentItem.body : undefined;
    return [
      scoped,
      { kind: "block", type, labels, ...(e.pos ? { pos: e.pos } : {}), raw: content, ...(items ? { items } : {}) },
    ] as const;
  });
}

/** Decodes one block body according to its spec; `seed` holds fields that come first (the label). */
function decodeBlock(
  ctx: Ctx,
  raw: HclObject,
  items: readonly OutlineItem[] | undefined,
  spec: BlockSpec,
  seed: Out = {},
): Out {
  const blocks = spec.blocks ?? {};
  const fields: Out = {};
  const singles = new Map<string, SourcePos | undefined>();
  for (const e of entries(raw, items, Object.keys(blocks))) {
    if (e.kind === "attr") {
      const attr = spec.attrs[e.name];
      const ref = blocks[e.name];
      if (attr) {
        const [field, kind] = attr.split(":") as [string, Kind];
        const v = attrValue(ctx, e.name, e.pos, e.raw, kind);
        if (v !== undefined) fields[field] = v;
      } else if (ref && ref.target === "stringMap") {
        // meta/env may also be written as an argument (`meta = { "a.b" = "c" }`), which allows any key.
        const v = attrValue(ctx, e.name, e.pos, e.raw, "stringMap");
        if (v !== undefined) fields[ref.field] = v;
      } else unsupported(ctx, e, { attrs: Object.keys(spec.attrs), blocks: Object.keys(blocks) });
      continue;
    }
    for (const [c, b] of e.type === "dynamic" ? expandDynamic(ctx, e) : [[ctx, e] as const]) {
      const ref = blocks[b.type];
      if (!ref) {
        unsupported(c, b, { attrs: Object.keys(spec.attrs), blocks: Object.keys(blocks) });
        continue;
      }
      const want = ref.labelField ? 1 : 0;
      if (b.labels.length !== want) {
        c.diags.push(
          b.labels.length < want
            ? formatDiag(at(c, b.pos), `Missing name for ${b.type}`, `All ${b.type} blocks must have 1 labels (name).`)
            : formatDiag(
                at(c, b.pos),
                `Extraneous label for ${b.type}`,
                `Only ${want} labels${want ? " (name)" : ""} are expected for ${b.type} blocks.`,
              ),
        );
        continue;
      }
      const value = decodeTarget(c, ref, b);
      if (ref.byLabel) {
        const map = (fields[ref.field] as Out | undefined) ?? {};
        map[b.labels[0] as string] = value;
        fields[ref.field] = map;
      } else if (ref.many) {
        const list = (fields[ref.field] as unknown[] | undefined) ?? [];
        list.push(value);
        fields[ref.field] = list;
      } else if (singles.has(b.type)) {
        const prev = singles.get(b.type);
        c.diags.push(
          formatDiag(
            at(c, b.pos),
            `Duplicate ${b.type} block`,
            `Only one ${b.type} block is allowed. Another was defined at ${at(c, prev) ?? "<nil>"}.`,
          ),
        );
      } else {
        singles.set(b.type, b.pos);
        fields[ref.field] = value;
      }
    }
  }
  // Go struct field order, not source order, so formatting never changes the output.
  const out: Out = { ...seed };
  for (const a of Object.values(spec.attrs)) {
    const f = a.split(":")[0] as string;
    if (f in fields) out[f] = fields[f];
  }
  for (const ref of Object.values(blocks)) if (ref.field in fields) out[ref.field] = fields[ref.field];
  return spec.post ? POST[spec.post](out, ctx) : out;
}

/** Decodes the body of the `job` block into the job API's JSON; diagnostics are collected in `ctx.diags`. */
export function decodeJob(raw: HclObject, items: readonly OutlineItem[] | undefined, id: string, ctx: Ctx): Out {
  const job = decodeBlock(ctx, raw, items, JOB);
  const lone = ((job["Tasks"] as Out[] | undefined) ?? []).map((t) => ({ Name: t["Name"], Tasks: [t] }));
  const { Tasks: _t, ...rest } = job;
  const out: Out = { ID: id, Name: id, ...rest };
  if (lone.length) out["TaskGroups"] = [...lone, ...((out["TaskGroups"] as Out[] | undefined) ?? [])];
  const secrets = out["Secrets"];
  delete out["Secrets"];
  if (secrets !== undefined && Array.isArray(out["TaskGroups"])) {
    out["TaskGroups"] = (out["TaskGroups"] as Out[]).map((g) => inheritSecrets({ ...g, Secrets: secrets }, secrets));
  }
  return out;
}
