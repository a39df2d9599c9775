/**
 * Turns Job inputs into the job to send and its normal form: a jobspec is parsed (and canonicalized) by
 * the scheduler itself, a job object is taken as written. The namespace and region the job lands in are
 * settled here, once, so every request and every comparison uses the same ones.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { SchedulerClient } from "../../clients/scheduler";
import type { Job } from "../../schemas/scheduler";
import { canonicalJson } from "../common";
import { withTriggers } from "./batch";
import { submissionOf, variablesText, type JobInputs, type JobSubmissionBody } from "./inputs";
import { hashOf, identityOf, normalizeJob, type JobIdentity, type JobObject } from "./normalize";

/**
 * Job fields that carry credentials. They are sent when the user sets them, but never kept in state's
 * normal form or compared (the real scheduler never returns them on reads).
 */
export const CREDENTIAL_FIELDS: readonly string[] = Object.freeze(["SecretsToken", "DiscoveryToken"]);

/** The job the inputs describe, ready to plan or register. */
export interface DesiredJob {
  /** The body's job: normal form with the settled namespace and region, credentials included. */
  job: Job;
  /** Canonical text of the normal form without credentials: what state keeps as `normalizedJob`. */
  text: string;
  identity: JobIdentity;
  submission: JobSubmissionBody;
  /** Hash of everything the job was derived from; equal hashes mean an equal job without asking the server. */
  inputsHash: string;
}

/** What a desired job is derived from: the source inputs and the connection's default namespace and region. */
function hashMaterial(inputs: JobInputs, client: SchedulerClient): Record<string, unknown> {
  return {
    v: 1,
    jobspec: inputs.jobspec ?? null,
    job: inputs.job ?? null,
    variables: variablesText(inputs.variables),
    namespace: inputs.namespace ?? null,
    region: inputs.region ?? null,
    connNamespace: client.core.connection.namespace ?? null,
    connRegion: client.core.connection.region ?? null,
    // Only when set, so hashes in state written before triggers existed still match.
    ...(inputs.triggers !== undefined ? { triggers: inputs.triggers } : {}),
  };
}

const SALTED = /^hmac-sha256\$([A-Za-z0-9_-]{22})\$([0-9a-f]{64})$/;

/**
 * Returns a salted, keyed hash of what a desired job is derived from, `hmac-sha256$<salt>$<mac>`: a fresh
 * random salt is the HMAC key, so equal inputs give unrelated values across resources and stacks, and a
 * guess at a secret variable cannot be checked against a precomputed table. (State also keeps it secret.)
 */
export function desiredInputsHash(inputs: JobInputs, client: SchedulerClient, salt: Buffer = randomBytes(16)): string {
  const mac = createHmac("sha256", salt)
    .update(canonicalJson(hashMaterial(inputs, client)))
    .digest("hex");
  return `hmac-sha256$${salt.toString("base64url")}$${mac}`;
}

/**
 * True when `stored` is the hash of these inputs: the salted form, or the unsalted one older state holds
 * (matched once more so old state shows no diff; the next write stores the salted form).
 */
export function inputsHashMatches(stored: string | undefined, inputs: JobInputs, client: SchedulerClient): boolean {
  if (stored === undefined || stored === "") return false;
  const m = SALTED.exec(stored);
  if (m) {
    const again = desiredInputsHash(inputs, client, Buffer.from(m[1] ?? "", "base64url"));
    return again.length === stored.length && timingSafeEqual(Buffer.from(again), Buffer.from(stored));
  }
  return /^[0-9a-f]{32}$/.test(stored) && hashOf(hashMaterial(inputs, client)) === stored;
}

/** Resolves the inputs into the job to send; parses a jobspec on the server (one or two parse calls). */
export async function resolveDesired(client: SchedulerClient, inputs: JobInputs): Promise<DesiredJob> {
  const conn = client.core.connection;
  let source: JobObject;
  let written: { namespace?: string; region?: string };
  if (inputs.jobspec !== undefined) {
    const vars = variablesText(inputs.variables);
    const parseOpts = { namespace: inputs.namespace ?? conn.namespace };
    const { value } = await client.jobs.parse(
      { JobHCL: inputs.jobspec, Canonicalize: true, ...(vars !== "" ? { Variables: vars } : {}) },
      parseOpts,
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
      const raw = await client.jobs.parse(
        { JobHCL: inputs.jobspec, Canonicalize: false, ...(vars !== "" ? { Variables: vars } : {}) },
        parseOpts,
      );
      written = { namespace: str(raw.value.Namespace), region: str(raw.value.Region) };
    }
  } else {
    source = (inputs.job ?? {}) as JobObject;
    written = { namespace: str(source.Namespace), region: str(source.Region) };
  }
  const namespace = inputs.namespace ?? written.namespace ?? conn.namespace ?? "default";
  const region = inputs.region ?? written.region ?? conn.region ?? "global";
  const normal = withTriggers({ ...normalizeJob(source), Namespace: namespace, Region: region }, inputs.triggers);
  const stored: JobObject = { ...normal };
  for (const k of CREDENTIAL_FIELDS) delete stored[k];
  return {
    job: normal as Job,
    text: canonicalJson(stored),
    identity: identityOf(normal),
    submission: submissionOf(inputs),
    inputsHash: desiredInputsHash(inputs, client),
  };
}

/** Returns the canonical normal-form text of a job as the server holds it (credentials left out). */
export function serverJobText(job: Job): string {
  const normal: JobObject = normalizeJob(job as JobObject);
  for (const k of CREDENTIAL_FIELDS) delete normal[k];
  return canonicalJson(normal);
}

/** Parses a stored normal-form text back into a job; undefined when state holds none. */
export function parseStoredJob(text: unknown): JobObject | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as JobObject) : undefined;
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function notDefault(v: string | undefined, dflt: string): boolean {
  return v !== undefined && v !== "" && v !== dflt;
}
