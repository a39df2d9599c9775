/**
 * The job a Job resource describes: its inputs turned into the job to send and its normal form (a jobspec
 * is parsed and canonicalized by the scheduler itself, a job object is taken as written), the hash of what
 * it was derived from, its identity and the replacement rules. The namespace and region the job lands in
 * are settled here, once, so every request and every comparison uses the same ones.
 */
import { createHash, createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";
import { UsageError } from "../../errors";
import type { ParseJobRequest, SchedulerClient } from "../../clients/scheduler";
import { SERVER_MANAGED_JOB_FIELDS } from "../../clients/scheduler/jobs";
import type { Job } from "../../schemas/scheduler";
import { canonicalJson, containsUnknown, isRecord } from "../common";
import {
  SOURCE_KEYS,
  submissionOf,
  variablesText,
  type JobInputs,
  type JobSubmissionBody,
  type Preserve,
} from "./inputs";
import { keepParsed, parseKey, takeParsed } from "./memo";
import { maskOfJob, masksAnything, secretSources, storedRecordOf, type JobMask, type SecretMask } from "./secrets";

/**
 * Job fields that carry credentials. They are sent when the user sets them, but never kept in state's
 * normal form or compared (the real scheduler never returns them on reads).
 */
export const CREDENTIAL_FIELDS: readonly string[] = Object.freeze(["SecretsToken", "DiscoveryToken"]);

/** Returns the text state keeps of a job already in normal form: its canonical JSON without credentials. */
function stateText(normal: JobObject): string {
  const stored: JobObject = { ...normal };
  for (const k of CREDENTIAL_FIELDS) delete stored[k];
  return canonicalJson(stored);
}

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

/** What a desired job is derived from: the source inputs and the connection's default namespace and region. */
function hashMaterial(inputs: JobInputs, client: Pick<SchedulerClient, "core">): Record<string, unknown> {
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
export function desiredInputsHash(
  inputs: JobInputs,
  client: Pick<SchedulerClient, "core">,
  salt: Buffer = randomBytes(16),
): string {
  const mac = hmacSha256Hex(salt, canonicalJson(hashMaterial(inputs, client)));
  return `hmac-sha256$${salt.toString("base64url")}$${mac}`;
}

/** SHA-256's block size in bytes: the HMAC key is padded (or first hashed) to it. */
const SHA256_BLOCK = 64;

/**
 * HMAC-SHA-256 (RFC 2104) of `message` under `key`, in hex: the value `createHmac` gives, from two one-shot
 * hashes. Every diff of a Job checks its inputs hash (a refresh too, once per Job), and `createHmac` spent
 * most of that check preparing a key object (30-90 µs a call, against 3 µs for the two hashes).
 */
export function hmacSha256Hex(key: Buffer, message: string): string {
  const padded = Buffer.alloc(SHA256_BLOCK);
  (key.length > SHA256_BLOCK ? hash("sha256", key, "buffer") : key).copy(padded);
  const inner = Buffer.allocUnsafe(SHA256_BLOCK);
  const outer = Buffer.allocUnsafe(SHA256_BLOCK);
  for (let i = 0; i < SHA256_BLOCK; i++) {
    const b = padded[i] ?? 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  const innerDigest = hash("sha256", Buffer.concat([inner, Buffer.from(message, "utf8")]), "buffer");
  return hash("sha256", Buffer.concat([outer, innerDigest]), "hex");
}

/** True when `stored` is the hash of these inputs (see {@link desiredInputsHash}). */
export function inputsHashMatches(
  stored: string | undefined,
  inputs: JobInputs,
  client: Pick<SchedulerClient, "core">,
): boolean {
  const m = SALTED.exec(stored ?? "");
  if (stored === undefined || !m) return false;
  const again = desiredInputsHash(inputs, client, Buffer.from(m[1] ?? "", "base64url"));
  return again.length === stored.length && timingSafeEqual(Buffer.from(again), Buffer.from(stored));
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

/** Returns the canonical normal-form text of a job as the server holds it (credentials left out). */
export function serverJobText(job: Job): string {
  return stateText(normalizeJob(job as JobObject));
}

/**
 * True when state holds a stored job's text, without parsing it: this library writes it as the canonical
 * JSON of an object (`stateText`, or the server's job), so it starts with "{".
 */
export function storedObjectText(text: unknown): text is string {
  return typeof text === "string" && text.startsWith("{");
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

/*
 * Normal form of a job definition, so that what the user wrote can be compared with what state holds
 * without formatting, key order, empty lists or server bookkeeping ever showing as a change.
 */

/** A job definition in the API's JSON shape (loose: every field the server knows is kept). */
export type JobObject = Record<string, unknown>;

/** The fields the normal form leaves out: every server-managed one (the client's list). */
const SERVER_MANAGED: ReadonlySet<string> = new Set(SERVER_MANAGED_JOB_FIELDS);

/**
 * Returns the normal form of a job: server-managed fields removed, and at every level `null` values and
 * empty lists dropped (the server treats `[]`, `null` and a missing list alike, yet a stored `[]` would
 * otherwise look like a change; see the scheduler's issue 20497). Empty objects are kept: for the server
 * an empty block is not the same as no block.
 */
export function normalizeJob(job: JobObject): JobObject {
  const out: JobObject = {};
  for (const [k, v] of Object.entries(job)) {
    if (SERVER_MANAGED.has(k)) continue;
    const n = normalizeValue(v);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

function normalizeValue(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    // Elements keep their place (a null element is still an element).
    return v.map((x) => (x === null ? null : normalizeValue(x)));
  }
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const n = normalizeValue(x);
      if (n !== undefined) out[k] = n;
    }
    return out;
  }
  return v;
}

/** What makes a job a different job, or one the server refuses to turn into the other. */
export interface JobIdentity {
  id: string;
  namespace: string;
  region: string;
  type: string;
  periodic: boolean;
  parameterized: boolean;
}

/** Returns a job's identity; the server's defaults fill what the job leaves out. */
export function identityOf(job: JobObject): JobIdentity {
  return {
    id: typeof job.ID === "string" ? job.ID : "",
    namespace: typeof job.Namespace === "string" && job.Namespace !== "" ? job.Namespace : "default",
    region: typeof job.Region === "string" && job.Region !== "" ? job.Region : "global",
    type: typeof job.Type === "string" && job.Type !== "" ? job.Type : "service",
    periodic: isRecord(job.Periodic),
    parameterized: isRecord(job.ParameterizedJob),
  };
}

/** Returns the problem with batch-only settings on a job of this identity, or undefined when there is none. */
export function batchSettingsProblem(
  identity: JobIdentity,
  inputs: Pick<JobInputs, "waitForCompletion" | "runOnce">,
): string | undefined {
  const used = (["waitForCompletion", "runOnce"] as const).filter((k) => inputs[k] === true);
  if (used.length === 0) return undefined;
  const batch = identity.type === "batch" || identity.type === "sysbatch";
  if (batch && !identity.periodic && !identity.parameterized) return undefined;
  const kind = identity.periodic
    ? `periodic ${identity.type}`
    : identity.parameterized
      ? `parameterized ${identity.type}`
      : identity.type;
  return (
    `Job "${identity.id}": ${used.join(" and ")} apply only to batch and sysbatch jobs that run themselves, not to a ${kind} job` +
    (identity.periodic || identity.parameterized ? " (its runs are child jobs the scheduler launches)" : "") +
    "."
  );
}

/** Throws the problem of {@link batchSettingsProblem}, if any. */
export function assertBatchSettings(identity: JobIdentity, inputs: JobInputs): void {
  const problem = batchSettingsProblem(identity, inputs);
  if (problem !== undefined) throw new UsageError(problem);
}

/** One reason why a change needs a new job instead of an update. */
export interface ReplaceReason {
  field: keyof JobIdentity;
  old: string;
  new: string;
}

/**
 * Lists why going from one job to another needs a replacement. A different ID, namespace or region is a
 * different job (an update would leave the old one running); the server refuses to change a job's type or
 * to switch periodic or parameterized on or off, so those must be decided at preview, never at apply.
 */
export function replaceReasons(olds: JobIdentity, news: JobIdentity): ReplaceReason[] {
  const out: ReplaceReason[] = [];
  const fields: Array<keyof JobIdentity> = ["id", "namespace", "region", "type", "periodic", "parameterized"];
  for (const f of fields) {
    if (olds[f] !== news[f]) out.push({ field: f, old: String(olds[f]), new: String(news[f]) });
  }
  return out;
}

/**
 * True when the server runs no deployment for jobs of this kind, so there is nothing to wait for
 * (periodic and parameterized jobs do not even get an evaluation until they launch).
 */
export function hasNoDeployment(identity: JobIdentity): boolean {
  return identity.periodic || identity.parameterized || identity.type === "batch" || identity.type === "sysbatch";
}

/*
 * The Job's identity (ID, namespace, region, type) as checked inputs, so that a preview knows it.
 *
 * In a preview the engine does not call the dynamic provider's `update`: it takes the checked inputs as the
 * resource's outputs, and every output that is not among them is unknown. So a Job update showed its `jobId`
 * as unknown, and a JobVersionTag built on it showed `jobId: "web" => [unknown]` and counted as an update
 * that `up` never made. (`stables` from `diff` would be the usual answer, but the Node dynamic-provider host
 * drops them and the engine does not use them for previews.) The identity only changes with a replacement,
 * so `check` resolves it and adds it to the inputs: then those outputs stay known.
 *
 * A later `check` reuses the identity in the old inputs when the sources are the same (no request, and no
 * hash that would show as a changed input); a jobspec is parsed by the scheduler otherwise. `__resolvedKeys`
 * names the inputs `check` added, and the provider's other methods take them out again (`userInputs`), so
 * they see exactly what the user wrote. Its name starts with `__`: the engine's display leaves such keys out
 * of previews and diffs (as it does `__provider`), so a preview lists only what the user wrote and the
 * identity. (Releases up to 0.2.0 stored it as `resolvedKeys`; ../migrate.ts renames it.)
 */

/** The Job inputs after `check`: what the user wrote, with the resolved identity. */
export type CheckedJobInputs = JobInputs & { jobId?: string; type?: string; __resolvedKeys?: string[] };

/** The input that names what `check` added (see above). */
export const RESOLVED_KEYS = "__resolvedKeys" satisfies keyof CheckedJobInputs;

/**
 * Returns the inputs with the job's identity added. The user's own `namespace` and `region` stay as written;
 * when the user left them out, the resolved ones are added (they are what the job lands in either way).
 * Unknown sources at preview, or a jobspec the server cannot parse, leave the inputs as they are: `diff` and
 * `create` report the problem.
 */
export async function withIdentity(
  client: SchedulerClient,
  olds: Record<string, unknown>,
  inputs: JobInputs,
): Promise<CheckedJobInputs> {
  if (SOURCE_KEYS.some((k) => containsUnknown(inputs[k]))) return inputs;
  let identity: { jobId: string; namespace: string; region: string; type: string };
  if (sameSources(client, olds, inputs) && isIdentity(olds)) {
    identity = { jobId: olds.jobId, namespace: olds.namespace, region: olds.region, type: olds.type };
  } else {
    try {
      const d = await resolveDesired(client, inputs, true);
      if (d.identity.id === "") return inputs;
      identity = {
        jobId: d.identity.id,
        namespace: d.identity.namespace,
        region: d.identity.region,
        type: d.identity.type,
      };
    } catch {
      return inputs;
    }
  }
  const resolved = ["jobId", "type", ...(["namespace", "region"] as const).filter((k) => inputs[k] === undefined)];
  return { ...inputs, ...identity, [RESOLVED_KEYS]: resolved };
}

/**
 * True when the old inputs were checked from the same sources: the same jobspec, job and variables, and the
 * same namespace and region as the user wrote them. A namespace or region that was resolved (not written) is
 * reused only when it is what the connection's default gives, so a changed default resolves again (a job
 * that names its own namespace or region in the jobspec is then parsed again too: one request).
 */
function sameSources(client: SchedulerClient, olds: Record<string, unknown>, inputs: JobInputs): boolean {
  const resolved = olds[RESOLVED_KEYS];
  if (!Array.isArray(resolved)) return false;
  const conn = client.core.connection;
  if (resolved.includes("namespace") && olds.namespace !== (conn.namespace ?? "default")) return false;
  if (resolved.includes("region") && olds.region !== (conn.region ?? "global")) return false;
  const before = userInputs(olds as CheckedJobInputs);
  return SOURCE_KEYS.every((k) => canonicalJson(before[k] ?? null) === canonicalJson(inputs[k] ?? null));
}

/** Returns the inputs without what `check` added: what the user wrote. */
export function userInputs<T extends CheckedJobInputs>(inputs: T): JobInputs {
  // Copied without the keys left out rather than copied whole and deleted from: a deleted key turns the
  // copy into a slow dictionary object, and every diff reads it through (the inputs' hash among others).
  const listed = inputs[RESOLVED_KEYS];
  const resolved: readonly unknown[] = Array.isArray(listed) ? listed : [];
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(inputs)) {
    if (k === "jobId" || k === "type" || k === RESOLVED_KEYS || resolved.includes(k)) continue;
    out[k] = (inputs as Record<string, unknown>)[k];
  }
  return out as JobInputs;
}

function isIdentity(
  o: Record<string, unknown>,
): o is { jobId: string; namespace: string; region: string; type: string } {
  return (
    typeof o.jobId === "string" &&
    typeof o.namespace === "string" &&
    typeof o.region === "string" &&
    typeof o.type === "string"
  );
}

/** The job meta key that carries the hash of `triggers`. */
const TRIGGERS_META = "pulumi-triggers";

/**
 * Returns the job with the hash of `triggers` in its meta (unchanged when there are no triggers). The job is
 * readable by any token that can read it on the scheduler, so when a trigger is secret the hash is keyed
 * (an HMAC with `key`, kept in state as a secret: see {@link triggersKeyOf}) and a short secret cannot be
 * guessed from it; plain triggers keep the plain hash they always had.
 */
export function withTriggers(job: JobObject, triggers: Record<string, string> | undefined, key?: string): JobObject {
  if (triggers === undefined || Object.keys(triggers).length === 0) return job;
  const text = canonicalJson(triggers);
  const hash =
    key !== undefined
      ? createHmac("sha256", key).update(text).digest("hex").slice(0, 32)
      : createHash("sha256").update(text).digest("hex").slice(0, 16);
  const meta =
    job.Meta !== null && typeof job.Meta === "object" && !Array.isArray(job.Meta)
      ? (job.Meta as Record<string, unknown>)
      : {};
  return { ...job, Meta: { ...meta, [TRIGGERS_META]: hash } };
}

/**
 * Returns the key of the hash of secret triggers (undefined when no trigger is secret): the one state keeps
 * in `secretMask`; for a job state has none for yet, one derived from what state keeps as secrets (its salted
 * inputs hash, else its stored job), so that the `diff` and the `update` of one `up` hash alike; for a new
 * job, a random one. It is kept in state from then on.
 */
export function triggersKeyOf(
  inputs: Pick<JobInputs, "__secretInputs">,
  olds?: { secretMask?: unknown; inputsHash?: string; normalizedJob?: string },
): string | undefined {
  if (secretSources(inputs)?.triggers === undefined) return undefined;
  const kept = storedRecordOf(olds)?.key;
  if (kept !== undefined) return kept;
  const base = olds?.inputsHash || olds?.normalizedJob;
  if (base !== undefined && base !== "")
    return createHash("sha256").update(`pulumi-triggers-key\u0000${base}`).digest("base64url");
  return randomBytes(32).toString("base64url");
}

/** Task resource fields `preserveResources` keeps (what vertical scaling changes). */
export const SCALED_RESOURCE_FIELDS: readonly string[] = Object.freeze(["CPU", "Cores", "MemoryMB", "MemoryMaxMB"]);

function named(list: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (Array.isArray(list)) for (const x of list) if (isRecord(x) && typeof x.Name === "string") out.set(x.Name, x);
  return out;
}

/**
 * Returns `job` with the counts (and task resources) of the groups and tasks `server` also has, taken from
 * `server`. Groups or tasks only one side has are left as they are; nothing else changes.
 */
export function withServerScale(job: JobObject, server: Job, how: Preserve): JobObject {
  if (!Array.isArray(job.TaskGroups)) return job;
  const serverGroups = named(server.TaskGroups);
  const groups = job.TaskGroups.map((g: unknown) => {
    if (!isRecord(g) || typeof g.Name !== "string") return g;
    const sg = serverGroups.get(g.Name);
    if (sg === undefined) return g;
    let out: Record<string, unknown> = g;
    if (how.counts && typeof sg.Count === "number") out = { ...out, Count: sg.Count };
    if (how.resources && Array.isArray(g.Tasks)) {
      const serverTasks = named(sg.Tasks);
      out = {
        ...out,
        Tasks: g.Tasks.map((t: unknown) => {
          if (!isRecord(t) || typeof t.Name !== "string") return t;
          const sr = serverTasks.get(t.Name)?.Resources;
          if (!isRecord(sr)) return t;
          const resources: Record<string, unknown> = isRecord(t.Resources) ? { ...t.Resources } : {};
          for (const f of SCALED_RESOURCE_FIELDS) {
            if (sr[f] !== undefined && sr[f] !== null) resources[f] = sr[f];
            else delete resources[f];
          }
          return { ...t, Resources: resources };
        }),
      };
    }
    return out;
  });
  return { ...job, TaskGroups: groups };
}

/** Returns the desired job with the server's scaled values kept (its state text recomputed). */
export function desiredWithServerScale(d: DesiredJob, server: Job, how: Preserve): DesiredJob {
  const job = withServerScale(d.job as JobObject, server, how);
  return { ...d, job: job as Job, text: stateText(job) };
}
