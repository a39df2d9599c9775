/**
 * Keeps secret job values, and what is computed from them, out of the text the Job provider shows (the
 * scheduler's plan at preview, notes, refusals, error messages) and out of the init errors Pulumi keeps in
 * plaintext state.
 *
 * The dynamic-provider host receives secret inputs unwrapped (it tells the engine it does not accept
 * secrets), so the provider cannot see which inputs were secret. The program side can: the SDK's `Job`
 * adds the input `__secretInputs` (the engine's display leaves `__` names out of previews and diffs), the
 * names of its secret sources: `jobspec`, `job`, `variables` (the whole map or var-file text), or
 * `variables.<name>` for one secret value of a variables map. That list holds no value, so it is not secret
 * itself.
 *
 * Secrecy follows where a value came from, not how it is spelled:
 * - a secret `jobspec` or `job`: everything in it is secret. Every field value of the plan, every group and
 *   task name, every map key shown in a field name, the constraints and datacenters of failed placements;
 *   in free text (notes, errors), every string value and every user-chosen name (map keys) of the job. Only
 *   the job's identity (ID, namespace, region) stays shown: it is the resource's ID, which Pulumi keeps in
 *   plaintext anyway. Before the jobspec is parsed (its parse failed), its string literals and every quoted
 *   text of an error are masked.
 * - a secret variable: the jobspec is parsed a second time with every secret variable replaced by a value of
 *   the same type and length whose every character differs (`swapped`); every field of the job whose value
 *   differs between the two parses came from a secret, whatever functions it went through (`upper`,
 *   `base64encode`, `substr`, ...), and its value is masked wherever it appears. The values under Env,
 *   Meta, Template, Config, artifacts and getter options are masked too, and the secret values themselves.
 *   What does not change with the value (its length, a comparison's result) is not treated as secret. When
 *   the second parse fails, everything counts as secret.
 * - a `__secretInputs` unknown at preview, or one this version does not understand: as a secret jobspec.
 *
 * How a mask is applied to what is shown (plan fields, names, free text, errors) is ./mask-text.ts; the
 * swapped values and the literals of an HCL text, ./swap.ts.
 *
 * Nothing of this costs anything when nothing is secret: the mask is then {@link NO_SECRETS} and every
 * function here returns at once.
 *
 * State written before `__secretInputs` (or `secretInputs`, its name up to 0.2.0) existed has none: it counts as "nothing secret", and `diff` never
 * compares it, so adding it shows no change.
 */
import { containsUnknown, isRecord } from "../common";
import type { JobInputs } from "./inputs";
import { hclLiterals, swappedValue, swappedVarFile } from "./swap";
import { renderVarFile, type JobVariableValue } from "./varfile";

/** What of a Job's text must be masked. */
export interface SecretMask {
  /** A whole source (jobspec or job) is secret, or which sources are secret is not known: mask every field value and name. */
  readonly everything: boolean;
  /** Some variable is secret: mask the values of the fields that carry configuration (Env, Meta, Template, Config, ...). */
  readonly sensitiveFields: boolean;
  /** Texts masked wherever they appear: the secret values and every value and name that came from them (longest first). */
  readonly values: readonly string[];
  /** Texts shown although `everything` is set: the job's identity (ID, namespace, region). */
  readonly shown?: readonly string[];
  /** Mask every quoted text in free text too (a secret jobspec not parsed yet: errors quote its source). */
  readonly quoted?: boolean;
}

/** Nothing is secret. */
export const NO_SECRETS: SecretMask = Object.freeze({
  everything: false,
  sensitiveFields: false,
  values: Object.freeze([]),
});

/** True when the mask masks something (a cheap test: callers skip all masking work when it is false). */
export function masksAnything(mask: SecretMask): boolean {
  return mask !== NO_SECRETS && (mask.everything || mask.sensitiveFields || mask.values.length > 0);
}

/** Which variables are secret: all of them, or those of the given keys; undefined when none is. */
type SecretVariables = { all: true } | { all: false; keys: ReadonlySet<string> };

/** Which sources are secret: a whole source (`everything`: the jobspec or job, or not known), which variables. */
export interface Sources {
  everything: boolean;
  variables: SecretVariables | undefined;
  /** Secret `triggers` values (`triggers`, or `triggers.<key>`): their hash in the job's meta is keyed. */
  triggers?: SecretVariables;
}

/** Returns which sources of the inputs are secret (`__secretInputs`); undefined when none is. */
export function secretSources(inputs: Partial<Pick<JobInputs, "__secretInputs">> | undefined): Sources | undefined {
  const raw: unknown = inputs?.__secretInputs;
  if (raw === undefined || raw === null) return undefined;
  if (containsUnknown(raw) || !Array.isArray(raw) || raw.some((n) => typeof n !== "string"))
    return { everything: true, variables: { all: true }, triggers: { all: true } };
  const names = raw as string[];
  if (names.length === 0) return undefined;
  let everything = false;
  let wholeVariables = false;
  let wholeTriggers = false;
  const keys = new Set<string>();
  const triggerKeys = new Set<string>();
  for (const n of names) {
    if (n === "jobspec" || n === "job") everything = true;
    else if (n === "variables") wholeVariables = true;
    else if (n.startsWith("variables.") && n.length > "variables.".length) keys.add(n.slice("variables.".length));
    else if (n === "triggers") wholeTriggers = true;
    else if (n.startsWith("triggers.") && n.length > "triggers.".length) triggerKeys.add(n.slice("triggers.".length));
    else everything = true; // a name this version does not know: the safe side
  }
  const some = (all: boolean, k: ReadonlySet<string>): SecretVariables | undefined =>
    all ? { all: true } : k.size > 0 ? { all: false, keys: k } : undefined;
  const triggers = everything ? { all: true as const } : some(wholeTriggers, triggerKeys);
  return { everything, variables: some(wholeVariables, keys), ...(triggers !== undefined ? { triggers } : {}) };
}

/**
 * Returns what to mask for the inputs of a Job (checked inputs or old ones from state), from the inputs
 * alone: the secret values, and for a secret jobspec or job every value and name in it. {@link maskOfJob}
 * adds what came from secret variables once the job is parsed.
 */
export function secretMaskOf(
  inputs: Partial<Pick<JobInputs, "__secretInputs" | "variables" | "jobspec" | "job" | "triggers">> | undefined,
): SecretMask {
  const sources = secretSources(inputs);
  if (sources === undefined) return NO_SECRETS;
  const values = new Set(variableValues(inputs?.variables, keysOf(sources.variables)));
  const triggers = inputs?.triggers;
  if (sources.triggers !== undefined && isRecord(triggers) && !containsUnknown(triggers))
    for (const [k, v] of Object.entries(triggers))
      if (sources.triggers.all || sources.triggers.keys.has(k)) values.add(String(v));
  let quoted = false;
  let shown: string[] | undefined;
  if (sources.everything) {
    if (isRecord(inputs?.job) && !containsUnknown(inputs.job)) {
      collectJobTexts(inputs.job, values);
      shown = identityTexts(inputs.job);
    } else if (typeof inputs?.jobspec === "string") {
      for (const lit of hclLiterals(inputs.jobspec)) values.add(lit);
      quoted = true;
    } else {
      quoted = true;
    }
  }
  return {
    everything: sources.everything,
    sensitiveFields: sources.everything || sources.variables !== undefined,
    values: sortedTexts(values, shown),
    ...(shown !== undefined ? { shown } : {}),
    ...(quoted ? { quoted } : {}),
  };
}

function keysOf(v: SecretVariables | undefined): ReadonlySet<string> | undefined | null {
  if (v === undefined) return null;
  return v.all ? undefined : v.keys;
}

/**
 * Returns the full mask of a job whose inputs gave `base` (see {@link secretMaskOf}), once `job` (the job
 * as parsed or given) is known. With secret variables of a jobspec, `parse` parses the jobspec with other
 * variables text (the one extra parse); called only when some variable is secret.
 */
export async function maskOfJob(
  inputs: Partial<Pick<JobInputs, "__secretInputs" | "variables" | "jobspec" | "job">>,
  base: SecretMask,
  job: Record<string, unknown>,
  parse: (variables: string) => Promise<unknown>,
  older: readonly unknown[] = [],
  identity: readonly string[] = identityTexts(job),
): Promise<JobMask> {
  if (!masksAnything(base)) return { own: base, older: [] };
  const sources = secretSources(inputs);
  if (sources === undefined) return { own: base, older: [] };
  const values = new Set(base.values);
  const olderTexts = new Set<string>();
  const shown = [...identity];
  // Only secret triggers: their values are not in the job (a keyed hash is), so nothing more to trace.
  if (!sources.everything && sources.variables === undefined) return { own: base, older: [] };
  if (!sources.everything && sources.variables !== undefined && inputs.jobspec !== undefined) {
    const other = swappedVariables(inputs.variables, sources.variables);
    let alt: unknown;
    try {
      alt = other === undefined ? undefined : await parse(other);
    } catch {
      alt = undefined;
    }
    if (isRecord(alt)) {
      // The same places of an older form of the job (what state holds) came from the secret then.
      const places = taintedPlaces(job, alt);
      textsAt(job, places, values);
      for (const j of older) textsAt(j, places, olderTexts);
      return { own: { ...base, values: sortedTexts(values), quoted: false }, older: sortedTexts(olderTexts) };
    }
    // The second parse failed: what came from the secret cannot be told apart, so all of it is secret.
  }
  collectJobTexts(job, values);
  for (const j of older) collectJobTexts(j, olderTexts);
  return {
    own: { everything: true, sensitiveFields: true, values: sortedTexts(values, shown), shown },
    older: sortedTexts(olderTexts, shown),
  };
}

/**
 * The mask of a job ({@link maskOfJob}): `own`, what the job itself holds of secrets (what state keeps of it,
 * {@link recordOf}); `older`, the texts at the same places of the older forms of the job (masked too).
 */
export interface JobMask {
  own: SecretMask;
  older: readonly string[];
}

/** Returns one mask that masks what either mask does (the new inputs' and the old ones'). */
export function mergeMasks(a: SecretMask, b: SecretMask): SecretMask {
  if (!masksAnything(b)) return a;
  if (!masksAnything(a)) return b;
  const shown = [...(a.shown ?? []), ...(b.shown ?? [])];
  return {
    everything: a.everything || b.everything,
    sensitiveFields: a.sensitiveFields || b.sensitiveFields,
    values: sortedTexts([...a.values, ...b.values]),
    ...(shown.length > 0 ? { shown } : {}),
    ...(a.quoted === true || b.quoted === true ? { quoted: true } : {}),
  };
}

/**
 * What state keeps of a job's mask, as the output `secretMask` (a Pulumi secret): which values of the stored
 * job (`normalizedJob`) came from secrets. Secrecy follows a value's origin in the old job too: text built
 * from state (the old side of a plan, notes, delete and read errors, revert messages) masks them even once
 * the program dropped the secret or made it plain, when the new inputs say nothing is secret.
 */
export interface SecretRecord {
  /** The whole job was secret (a secret jobspec or job): every text of the stored job is masked. */
  all?: boolean;
  /** A variable was secret: the configuration fields (Env, Meta, Template, ...) are masked. */
  config?: boolean;
  /** The texts that came from a secret (the secret values and what the job computed from them). */
  values?: string[];
  /** The key of the hash of secret `triggers` in the job's meta (hashes.ts, `withTriggers`). */
  key?: string;
}

/** Returns what state keeps of a mask; undefined when it masks nothing (no output then). */
export function recordOf(mask: SecretMask): SecretRecord | undefined {
  if (!masksAnything(mask)) return undefined;
  if (mask.everything) return { all: true };
  return {
    ...(mask.sensitiveFields ? { config: true } : {}),
    ...(mask.values.length > 0 ? { values: [...mask.values] } : {}),
  };
}

/** Returns a record that masks what either does. */
export function mergeRecords(a: SecretRecord | undefined, b: SecretRecord | undefined): SecretRecord | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const key = a.key ?? b.key;
  const withKey = key !== undefined ? { key } : {};
  if (a.all === true || b.all === true) return { all: true, ...withKey };
  const values = sortedTexts([...(a.values ?? []), ...(b.values ?? [])]);
  return {
    ...(a.config === true || b.config === true ? { config: true } : {}),
    ...(values.length > 0 ? { values } : {}),
    ...withKey,
  };
}

/**
 * Returns the mask of the job state holds (outputs), from its `secretMask`; nothing when it has none (the job
 * had no secret). A whole secret job masks every text and name of the stored job, which is parsed only then;
 * a record this version cannot read counts as such.
 */
export function storedMaskOf(outputs: { secretMask?: unknown; normalizedJob?: unknown } | undefined): SecretMask {
  const r = storedRecordOf(outputs);
  if (r === undefined) return NO_SECRETS;
  if (r.all !== true)
    return { everything: false, sensitiveFields: r.config === true, values: sortedTexts(r.values ?? []) };
  const job = storedJob(outputs?.normalizedJob);
  const texts = new Set<string>();
  if (job !== undefined) collectJobTexts(job, texts);
  const shown = job !== undefined ? identityTexts(job) : [];
  return {
    everything: true,
    sensitiveFields: true,
    values: sortedTexts(texts, shown),
    ...(shown.length > 0 ? { shown } : {}),
  };
}

/** Returns the `secretMask` state holds (undefined: none); one this version cannot read counts as `all`. */
export function storedRecordOf(outputs: { secretMask?: unknown } | undefined): SecretRecord | undefined {
  const r = outputs?.secretMask;
  if (r === undefined || r === null) return undefined;
  if (!isRecord(r)) return { all: true };
  const values = r.values;
  const key = typeof r.key === "string" && r.key !== "" ? { key: r.key } : {};
  if (r.all === true || !(values === undefined || (Array.isArray(values) && values.every(isString))))
    return { all: true, ...key };
  return {
    ...(r.config === true ? { config: true } : {}),
    ...(values !== undefined ? { values: values as string[] } : {}),
    ...key,
  };
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

/** The stored job of `normalizedJob` (canonical JSON of an object), or undefined. */
function storedJob(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== "string" || !text.startsWith("{")) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The job's identity texts, shown even when everything else is masked. */
function identityTexts(job: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of ["ID", "Namespace", "Region"]) {
    const v = job[k];
    if (typeof v === "string" && v !== "") out.push(v);
  }
  return out;
}

function sortedTexts(values: Iterable<string>, shown?: readonly string[]): string[] {
  const out = new Set(values);
  out.delete("");
  for (const s of shown ?? []) out.delete(s);
  return [...out].sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
}

/** Map fields whose keys the user chooses (their keys are names from the job, masked like values). */
const USER_KEYED = /(^|\.)(Meta|CanaryMeta|Env|Config|Volumes|TaggedAddresses|Options|GetterOptions|GetterHeaders)$/;

/** Adds every string value of a job, and every name the user chose (map keys), to `out`. */
function collectJobTexts(v: unknown, out: Set<string>, path = ""): void {
  if (typeof v === "string") out.add(v);
  else if (Array.isArray(v)) for (const x of v) collectJobTexts(x, out, path);
  else if (isRecord(v)) {
    const userKeyed = USER_KEYED.test(path) || /(^|\.)Config\./.test(path);
    for (const [k, x] of Object.entries(v)) {
      if (userKeyed || !/^[A-Z][A-Za-z0-9]*$/.test(k)) out.add(k);
      collectJobTexts(x, out, path === "" ? k : `${path}.${k}`);
    }
  }
}

/** Where in a job a value that came from a secret is: its keys and indexes; `key`: the key itself too. */
interface TaintedPlace {
  path: readonly (string | number)[];
  key: boolean;
}

/**
 * Lists the places of `real` whose value differs from the value at the same place of `alt` (the job parsed
 * with the secret variables swapped), and the keys only `real` has: what came from a secret.
 */
function taintedPlaces(
  real: unknown,
  alt: unknown,
  out: TaintedPlace[] = [],
  path: (string | number)[] = [],
): TaintedPlace[] {
  if (Array.isArray(real)) {
    if (!Array.isArray(alt) || alt.length !== real.length) out.push({ path: [...path], key: false });
    else real.forEach((x, i) => taintedPlaces(x, alt[i], out, [...path, i]));
  } else if (isRecord(real)) {
    if (!isRecord(alt)) out.push({ path: [...path], key: false });
    else
      for (const [k, x] of Object.entries(real)) {
        if (!Object.hasOwn(alt, k)) out.push({ path: [...path, k], key: true });
        else taintedPlaces(x, alt[k], out, [...path, k]);
      }
  } else if (real !== null && real !== undefined && (alt === null || alt === undefined || String(real) !== String(alt)))
    out.push({ path: [...path], key: false });
  return out;
}

/** Adds to `out` what `job` holds at the given places (every value under them, and the keys named). */
function textsAt(job: unknown, places: readonly TaintedPlace[], out: Set<string>): void {
  for (const { path, key } of places) {
    let v: unknown = job;
    for (const p of path) {
      v = typeof p === "number" ? (Array.isArray(v) ? v[p] : undefined) : isRecord(v) ? v[p] : undefined;
      if (v === undefined) break;
    }
    if (v === undefined) continue;
    const last = path[path.length - 1];
    if (key && typeof last === "string") out.add(last);
    collectLeaves(v, out);
  }
}

function collectLeaves(v: unknown, out: Set<string>): void {
  if (Array.isArray(v)) for (const x of v) collectLeaves(x, out);
  else if (isRecord(v))
    for (const [k, x] of Object.entries(v)) {
      out.add(k);
      collectLeaves(x, out);
    }
  else if (v !== null && v !== undefined) out.add(String(v));
}

/**
 * Returns the variables text with every secret variable's value swapped (see `swapped`, ./swap.ts); undefined
 * when the variables are not known.
 */
function swappedVariables(variables: JobInputs["variables"] | undefined, secret: SecretVariables): string | undefined {
  if (variables === undefined || variables === null || containsUnknown(variables)) return undefined;
  if (typeof variables === "string") return swappedVarFile(variables);
  const out: Record<string, JobVariableValue> = {};
  for (const [k, v] of Object.entries(variables))
    out[k] = secret.all || secret.keys.has(k) ? swappedValue(v as JobVariableValue) : (v as JobVariableValue);
  return renderVarFile(out);
}

/**
 * Returns the values of the variables as text, longest first: all of them (`keys` undefined), or those of
 * the given keys (`null`: none). Var-file text gives every literal value in it (strings, heredocs and their
 * lines, numbers), as written and as read.
 */
function variableValues(
  variables: JobInputs["variables"] | undefined,
  keys: ReadonlySet<string> | undefined | null,
): string[] {
  if (keys === null || variables === undefined || variables === null || containsUnknown(variables)) return [];
  const out = new Set<string>();
  if (typeof variables === "string") {
    if (keys === undefined) for (const v of hclLiterals(variables)) out.add(v);
    else {
      // Only some names of a var-file text: the literals of their own lines.
      for (const line of variables.split(/\r?\n/)) {
        const m = /^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*$/.exec(line);
        if (!m || !keys.has(m[1] ?? "")) continue;
        out.add(m[2] ?? "");
        for (const v of hclLiterals(m[2] ?? "")) out.add(v);
      }
    }
  } else if (typeof variables === "object") {
    for (const [k, v] of Object.entries(variables)) {
      if (keys !== undefined && !keys.has(k)) continue;
      out.add(String(v));
    }
  }
  return sortedTexts(out);
}
