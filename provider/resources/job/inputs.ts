/**
 * The Job resource's inputs: their schema, `check`, and the pure helpers that turn them into what a
 * register sends (durations, var-file text, the submission) or how it runs (promotion policy, preserved
 * scale, batch-only settings). No network here.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { parseGoDuration } from "../../values";
import { checkInputs, containsUnknown, copyInputs, isRecord, shownKey } from "../common";
import { echoedKeys, inputsSchema, sourceKeys, unsetDefaults, type InputsOf } from "../definition";
import { jobDefinition as DEF } from "../definitions/job";
import { checkJobObject } from "./validate";
import { renderVarFile } from "./varfile";

/** What the settings the inputs may leave out mean (`check` leaves them unset). */
export const JOB_DEFAULTS = unsetDefaults(DEF);

const HCL_IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Schema of the Job inputs after the engine resolved them (no `pulumi.Input` wrappers).
 */
const JobInputsSchema = inputsSchema(DEF);

/** The Job inputs as the provider receives them. */
export type JobInputs = InputsOf<typeof DEF>;

/** The inputs the job is derived from: a change of one resolves the job again. */
export const SOURCE_KEYS = sourceKeys(DEF);

/**
 * The settings inputs: how the job is written, followed and deleted, and where (the connection): every
 * input but the sources and `__secretInputs`. Outputs echo them and `diff` compares them.
 */
export const SETTING_KEYS = echoedKeys(DEF);

/** Validates Job inputs, naming each bad property; values unknown at preview pass through. */
export function checkJobInputs(raw: Record<string, unknown>): dynamic.CheckResult<JobInputs> {
  const { inputs, failures } = checkInputs(JobInputsSchema, raw, "Job");
  // Own keys only, on a null prototype: nothing below may read an inherited value.
  const news = copyInputs(raw);
  const unknown = (k: string): boolean => containsUnknown(news[k]);
  const given = (k: string): boolean => news[k] !== undefined && news[k] !== null;
  const extra: dynamic.CheckFailure[] = [];

  if (!unknown("jobspec") && !unknown("job")) {
    if (given("jobspec") && given("job")) {
      extra.push({ property: "job", reason: "set exactly one of jobspec (HCL2 text) and job (an object), not both" });
    } else if (!given("jobspec") && !given("job")) {
      extra.push({ property: "jobspec", reason: "set exactly one of jobspec (HCL2 text) and job (an object)" });
    }
  }
  if (given("job") && !unknown("job") && isRecord(news.job)) {
    const body = news.job;
    if (typeof body.ID !== "string" || body.ID === "") {
      const hint = isRecord(body.Job) ? ' (this looks like a register body: pass its "Job" object instead)' : "";
      extra.push({ property: "job.ID", reason: `the job object must have a non-empty string ID${hint}` });
    }
    if (!isRecord(body.Job)) extra.push(...checkJobObject(body));
    if (given("variables") && !unknown("variables")) {
      extra.push({ property: "variables", reason: "variables apply only to a jobspec; a job object has no variables" });
    }
  }
  if (isRecord(news.variables) && !unknown("variables")) {
    for (const key of Object.keys(news.variables)) {
      if (!HCL_IDENT.test(key)) {
        extra.push({
          property: `variables.${shownKey(key)}`,
          reason: "is not a valid variable name: letters, digits, '_' and '-', starting with a letter or '_'",
        });
      }
    }
  }
  const timeout = news.deploymentTimeout;
  if (timeout !== undefined && timeout !== null && !unknown("deploymentTimeout")) {
    if (
      (typeof timeout === "number" || typeof timeout === "string") &&
      parseDurationMs(timeout) === undefined &&
      !isZeroDuration(timeout)
    ) {
      extra.push({
        property: "deploymentTimeout",
        reason: 'is not a duration: use seconds (300), a Go duration ("5m", "1h30m"), or 0 for no time limit',
      });
    }
  }
  extra.push(...checkPromotionInput(news.promotion, unknown("promotion")));
  if (given("promotion") && news.promotion !== "manual" && news.waitForDeployment === false && !unknown("promotion")) {
    extra.push({
      property: "promotion",
      reason:
        "promotes canaries while `up` follows the deployment: it needs waitForDeployment (leave it unset or true)",
    });
  }
  const all = [...failures, ...extra];
  if (all.length > 0) return { failures: all };
  return { inputs, failures: [] };
}

/**
 * Returns a duration in milliseconds: a number (or digits-only text) counts seconds, other text is a Go
 * duration ("90s", "5m", "1h30m"). Returns undefined for anything else, zero or negative values included.
 */
function parseDurationMs(v: number | string): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v > 0 ? v * 1000 : undefined;
  const text = v.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return parseDurationMs(Number(text));
  const ms = parseGoDuration(text);
  return ms !== undefined && ms > 0 ? ms : undefined;
}

/** True for a zero duration (`0`, `"0"`, `"0s"`, `"0h0m"`): no time limit of our own. */
function isZeroDuration(v: number | string): boolean {
  if (typeof v === "number") return v === 0;
  const text = v.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) === 0;
  return !text.startsWith("-") && parseGoDuration(text) === 0;
}

/**
 * Returns the deployment timeout of the inputs in milliseconds (default five minutes). Zero means no time
 * limit of our own (Infinity): the deployment is followed until it ends, and the scheduler's progress
 * deadline still fails a deployment that stops making progress.
 */
export function deploymentTimeoutMs(inputs: Pick<JobInputs, "deploymentTimeout">): number {
  const v = inputs.deploymentTimeout ?? JOB_DEFAULTS.deploymentTimeout;
  if (isZeroDuration(v)) return Infinity;
  return parseDurationMs(v) ?? 300_000;
}

/** Returns the var-file text the parse endpoint takes ("" when there are no variables). */
export function variablesText(variables: JobInputs["variables"]): string {
  if (variables === undefined) return "";
  return typeof variables === "string" ? variables : renderVarFile(variables);
}

/** What a register sends as `Submission`: the source the user wrote, for the UI, reads and reverts. */
export type JobSubmissionBody = {
  Source: string;
  Format: "hcl2" | "json";
  VariableFlags?: Record<string, string>;
  Variables?: string;
};

/** Which sources are secret, as far as the submission goes (see `secretSources` in ./secrets.ts). */
export interface SubmissionSecrets {
  /** The jobspec or job itself is secret (or which sources are is not known). */
  everything: boolean;
  /** Secret variables: all, or those of the given names. */
  variables?: { all: true } | { all: false; keys: ReadonlySet<string> };
}

/**
 * Builds the submission of the inputs: the jobspec text with its variables, or the job object as JSON. The
 * scheduler keeps a submission for every version and shows it to any token that can read the job, so no
 * secret goes into it: a secret variable is left out (a secret var-file text: all of it), and a secret
 * jobspec or job sends no submission at all (undefined).
 */
export function submissionOf(
  inputs: Pick<JobInputs, "jobspec" | "job" | "variables">,
  secrets?: SubmissionSecrets,
): JobSubmissionBody | undefined {
  if (secrets?.everything === true) return undefined;
  const secretVar = (k: string): boolean =>
    secrets?.variables !== undefined && (secrets.variables.all || secrets.variables.keys.has(k));
  if (inputs.jobspec !== undefined) {
    const s: JobSubmissionBody = { Source: inputs.jobspec, Format: "hcl2" };
    const vars = inputs.variables;
    if (typeof vars === "string") {
      if (vars !== "" && secrets?.variables === undefined) s.Variables = vars;
    } else if (vars !== undefined) {
      const flags: Record<string, string> = {};
      for (const k of Object.keys(vars).sort()) if (!secretVar(k)) flags[k] = String(vars[k]);
      s.VariableFlags = flags;
    }
    return s;
  }
  return { Source: JSON.stringify(inputs.job ?? {}, null, 2), Format: "json" };
}

/** How canaries are promoted. */
export type PromotionPolicy = { mode: "manual" } | { mode: "auto"; soakMs: number; groups?: readonly string[] };

/** Returns the policy of the inputs (unset: the definition's default, "manual"). */
export function promotionPolicy(inputs: Pick<JobInputs, "promotion">): PromotionPolicy {
  const p = inputs.promotion ?? JOB_DEFAULTS.promotion;
  if (p === "manual") return { mode: "manual" };
  if (p === "auto") return { mode: "auto", soakMs: 0 };
  const soakMs = isZeroDuration(p.soak) ? 0 : (parseDurationMs(p.soak) ?? 0);
  return { mode: "auto", soakMs, ...(p.groups !== undefined ? { groups: [...new Set(p.groups)] } : {}) };
}

/** Check failures of a `promotion` input the schema let through (a soak that is no duration). */
function checkPromotionInput(v: unknown, unknown: boolean): dynamic.CheckFailure[] {
  if (unknown || v === null || typeof v !== "object" || Array.isArray(v)) return [];
  const soak = (v as Record<string, unknown>).soak;
  if (
    (typeof soak === "number" || typeof soak === "string") &&
    parseDurationMs(soak) === undefined &&
    !isZeroDuration(soak)
  ) {
    return [{ property: "promotion.soak", reason: 'is not a duration: use seconds (600) or a Go duration ("10m")' }];
  }
  return [];
}

/** Which scaled values the inputs keep. */
export interface Preserve {
  counts: boolean;
  resources: boolean;
}

/** Returns what the inputs ask to keep; undefined when neither `preserveCounts` nor `preserveResources` is set. */
export function preserveOf(inputs: Pick<JobInputs, "preserveCounts" | "preserveResources">): Preserve | undefined {
  const p = { counts: inputs.preserveCounts === true, resources: inputs.preserveResources === true };
  return p.counts || p.resources ? p : undefined;
}
