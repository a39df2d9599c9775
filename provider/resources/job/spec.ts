/**
 * The job a Job resource describes: its inputs turned into the job to send (a jobspec is parsed and
 * canonicalized by the scheduler itself, a job object is taken as written) and what of it is secret. The
 * namespace and region the job lands in are settled here, once, so every request and every comparison uses
 * the same ones. Its normal form is in normal-form.ts, its identity and replacement rules in identity.ts.
 */
import type { ParseJobRequest, SchedulerClient } from "../../clients/scheduler";
import type { Job } from "../../schemas/scheduler";
import { desiredInputsHash, withTriggers } from "./hashes";
import { identityOf, type JobIdentity } from "./identity";
import { submissionOf, variablesText, type JobInputs, type JobSubmissionBody } from "./inputs";
import { keepParsed, parseKey, takeParsed } from "./memo";
import { normalizeJob, stateText, type JobObject } from "./normal-form";
import { maskOfJob, masksAnything, secretSources, type JobMask, type SecretMask } from "./secrets";

/** The job the inputs describe, ready to plan or register. */
export interface DesiredJob {
  /** The body's job: normal form with the settled namespace and region, credentials included. */
  job: Job;
  /** Canonical text of the normal form without credentials: what state keeps as `normalizedJob`. */
  text: string;
  identity: JobIdentity;
  /** The source to keep on the scheduler; undefined when the jobspec or job is secret (see `submissionOf`). */
  submission: JobSubmissionBody | undefined;
  /** Hash of everything the job was derived from; equal hashes mean an equal job without asking the server. */
  inputsHash: string;
  /** The job as parsed from the jobspec (or as given), before its normal form: what secrecy is traced on. */
  source: JobObject;
  /** The key of the hash of secret triggers in the job's meta (state keeps it); undefined: none is secret. */
  triggersKey?: string;
}

/** Sends a parse, or takes the result a `check` got for the same request; `remember` keeps this one for the next. */
async function parseJob(
  client: SchedulerClient,
  body: ParseJobRequest,
  opts: { namespace?: string },
  remember: boolean,
): Promise<Job> {
  const key = parseKey(client, body, opts);
  const kept = takeParsed(key);
  if (kept !== undefined) return kept;
  const { value } = await client.jobs.parse(body, opts);
  if (remember) keepParsed(key, value);
  return value;
}

/**
 * Resolves the inputs into the job to send; parses a jobspec on the server (one or two parse calls, or none
 * when `check` just parsed the same). `remember` (for `check`): keep the parse results for the next call.
 */
export async function resolveDesired(
  client: SchedulerClient,
  inputs: JobInputs,
  remember = false,
  triggersKey?: string,
): Promise<DesiredJob> {
  const conn = client.core.connection;
  let source: JobObject;
  let written: { namespace?: string; region?: string };
  if (inputs.jobspec !== undefined) {
    const vars = variablesText(inputs.variables);
    const parseOpts = { namespace: inputs.namespace ?? conn.namespace };
    const value = await parseJob(
      client,
      { JobHCL: inputs.jobspec, Canonicalize: true, ...(vars !== "" ? { Variables: vars } : {}) },
      parseOpts,
      remember,
    );
    source = value as JobObject;
    written = { namespace: str(source.Namespace), region: str(source.Region) };
    // Canonicalize writes "default"/"global" for a jobspec that names neither, which would hide the
    // connection's own default. Only when that default matters, ask what the jobspec itself says.
    const nsMatters =
      inputs.namespace === undefined && notDefault(conn.namespace, "default") && written.namespace === "default";
    const regionMatters =
      inputs.region === undefined && notDefault(conn.region, "global") && written.region === "global";
    if (nsMatters || regionMatters) {
      const raw = await parseJob(
        client,
        { JobHCL: inputs.jobspec, Canonicalize: false, ...(vars !== "" ? { Variables: vars } : {}) },
        parseOpts,
        remember,
      );
      written = { namespace: str(raw.Namespace), region: str(raw.Region) };
    }
  } else {
    source = (inputs.job ?? {}) as JobObject;
    written = { namespace: str(source.Namespace), region: str(source.Region) };
  }
  const namespace = inputs.namespace ?? written.namespace ?? conn.namespace ?? "default";
  const region = inputs.region ?? written.region ?? conn.region ?? "global";
  const normal = withTriggers(
    { ...normalizeJob(source), Namespace: namespace, Region: region },
    inputs.triggers,
    triggersKey,
  );
  // The hash only when asked for: `check` and a `diff` that plans never store it (a random salt and an HMAC each).
  let hash: string | undefined;
  // The text only when asked for too: `check` needs the identity alone.
  let text: string | undefined;
  return {
    job: normal as Job,
    get text() {
      return (text ??= stateText(normal));
    },
    identity: identityOf(normal),
    submission: submissionOf(inputs, secretSources(inputs)),
    get inputsHash() {
      return (hash ??= desiredInputsHash(inputs, client));
    },
    source,
    ...(triggersKey !== undefined ? { triggersKey } : {}),
  };
}

/**
 * Returns what of the job's text is secret (secrets.ts): from the inputs alone, and, when a variable of a
 * jobspec is secret, from one more parse with the secret variables' values swapped. Nothing is sent and
 * nothing is computed when nothing is secret.
 */
export async function jobMask(
  client: SchedulerClient,
  inputs: JobInputs,
  desired: DesiredJob,
  base: SecretMask,
  older: readonly unknown[],
): Promise<JobMask> {
  if (!masksAnything(base)) return { own: base, older: [] };
  const parseOpts = { namespace: inputs.namespace ?? client.core.connection.namespace };
  return maskOfJob(
    inputs,
    base,
    desired.source,
    async (variables) => {
      const { value } = await client.jobs.parse(
        { JobHCL: inputs.jobspec ?? "", Canonicalize: true, ...(variables !== "" ? { Variables: variables } : {}) },
        parseOpts,
      );
      return value;
    },
    older,
    [desired.identity.id, desired.identity.namespace, desired.identity.region],
  );
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function notDefault(v: string | undefined, dflt: string): boolean {
  return v !== undefined && v !== "" && v !== dflt;
}
