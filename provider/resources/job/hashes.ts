/**
 * The hashes a Job keeps of what its job was derived from: the salted inputs hash in state, which tells an
 * unchanged job without asking the server, and the hash of `triggers` in the job's meta.
 */
import { createHash, createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { SchedulerClient } from "../../clients/scheduler";
import { canonicalJson } from "../common";
import { variablesText, type JobInputs } from "./inputs";
import type { JobObject } from "./normal-form";
import { secretSources, storedRecordOf } from "./secrets";

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
function hmacSha256Hex(key: Buffer, message: string): string {
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
