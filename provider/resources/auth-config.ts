/**
 * AuthConfig: the configuration record of an auth method mount (tenant, resource, client credentials).
 *
 * The service never returns `client_secret`. Two ways to give it:
 * - `clientSecret` (a Pulumi secret input): the state keeps only a salted scrypt hash of it (never the
 *   plaintext) to notice when the program's secret changes; it is sent on create and when the hash no
 *   longer matches. Pulumi keeps the input itself, encrypted, in the state's inputs.
 * - write-only: `clientSecretVersion` plus where to read the secret at apply time (`clientSecretEnv`, an
 *   environment variable of the `pulumi` command, or `clientSecretConfigKey`, a stack config key). Neither
 *   the secret nor a hash of it reaches the state; it is sent on create and when the version changes.
 * A secret rotated on the service (`rotate-root`) makes the program's copy stale, and applying it again
 * undoes the rotation.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { ConfigError, PssError } from "../errors";
import type { MethodConfigRecord } from "../clients/secrets";
import { trimMountPath } from "../clients/secrets/normalize";
import { stackConfigValue } from "../config";
import type { ConfigWrite } from "../schemas/secrets";
import {
  checkObjectInputs,
  mountFollow,
  mountMissingHint,
  reportWarnings,
  secretsClient,
  sendWhenRouted,
  whenRouted,
} from "./auth-common";
import { MOVED, connectionChange } from "./connection";
import { ResourceInitError, canonicalJson, containsUnknown, definedDeep, type ProviderImpl } from "./common";
import { inputsSchema, settingKeys, type InputsOf, type OutputsOf } from "./definition";
import { refreshedSetting, sameValue, wireBody } from "./setting-values";
import { authConfigDefinition as DEF } from "./definitions/auth-config";
import { WRITE_AGAIN, confirmedWrite, movedWithMount, recordProvider, refuseUnlessOwn, stateOf } from "./record";

const RESOURCE = DEF.name;

/** The inputs of an AuthConfig after `check`. */
const AuthConfigInputsSchema = inputsSchema(DEF);

/**
 * The inputs of an AuthConfig (`clientSecret` arrives as plaintext: the engine unwraps secrets).
 */
type AuthConfigInputs = InputsOf<typeof DEF>;

/**
 * The outputs (state) of an AuthConfig: every input but `clientSecret`, whose salted hash
 * (`scrypt$N$r$p$<salt>$<hash>` of mount and secret) is kept instead; `incomplete` after an unknown outcome.
 */
type AuthConfigOutputs = Omit<OutputsOf<typeof DEF>, "clientSecret">;

/** The settings the service reports back, compared by the diff: every one with a wire name but the secret. */
const READABLE = settingKeys(DEF).filter(
  (e): e is [Exclude<(typeof e)[0], "clientSecret">, (typeof e)[1]] => !e[1].secret,
);

// Memory-hard and salted, so a short secret cannot be read back from the state by a quick brute force.
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function derive(
  mount: string,
  secret: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      `${mount}\u0000${secret}`,
      salt,
      SCRYPT.keylen,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r },
      (err, key) => (err ? reject(new PssError("internal", "hashing the client secret failed")) : resolve(key)),
    );
  });
}

/**
 * Returns a salted scrypt hash of a client secret for the state.
 */
async function hashClientSecret(mount: string, secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(mount, secret, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/**
 * True when `secret` is the one hashed into `hash` (a hash of another format never matches).
 */
async function clientSecretMatches(mount: string, secret: string, hash: string): Promise<boolean> {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N > 1 << 20 || r > 32 || p > 16) return false;
  const want = Buffer.from(m[5] ?? "", "base64url");
  const got = await derive(mount, secret, Buffer.from(m[4] ?? "", "base64url"), { N, r, p });
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * The key that inputs a refresh stored after drift carry in place of the secret (see `read`): `true` means
 * "the secret the state knows". Only a flag: the hash itself stays in the (secret) outputs, since the
 * engine marks an input secret only under a key that held a secret before.
 */
const SECRET_KEPT = "clientSecretKept";

/** True when the program's secret differs from the one the state knows (or one side has none). */
async function secretChanged(news: AuthConfigInputs, olds: AuthConfigOutputs): Promise<boolean> {
  if (containsUnknown(news.clientSecret) || containsUnknown(news.clientSecretVersion)) return true;
  const stored = news as { [SECRET_KEPT]?: unknown };
  if (news.clientSecretVersion !== undefined) return news.clientSecretVersion !== olds.clientSecretVersion;
  if (news.clientSecret === undefined && stored[SECRET_KEPT] === true) return false;
  if (news.clientSecret === undefined)
    return olds.clientSecretHash !== undefined || olds.clientSecretVersion !== undefined;
  if (olds.clientSecretHash === undefined) return true;
  // The hash was made with the mount of the state (a moved mount keeps the secret).
  return !(await clientSecretMatches(olds.mount, news.clientSecret, olds.clientSecretHash));
}

/**
 * Returns the write-only secret from where the inputs name it, read now (apply time). Throws naming the
 * variable or key, never a value.
 */
function writeOnlySecret(news: AuthConfigInputs): string {
  const where =
    news.clientSecretEnv !== undefined
      ? `the environment variable ${news.clientSecretEnv}`
      : `the stack config key ${news.clientSecretConfigKey ?? "(none)"}`;
  const v =
    news.clientSecretEnv !== undefined
      ? process.env[news.clientSecretEnv]
      : news.clientSecretConfigKey !== undefined
        ? stackConfigValue(news.clientSecretConfigKey)
        : undefined;
  if (v === undefined || v === "") {
    throw new ConfigError(
      `${RESOURCE} "${configId(news.mount)}": clientSecretVersion is ${news.clientSecretVersion ?? "unset"}, so the client secret is sent now, but ${where} is not set ` +
        (news.clientSecretEnv !== undefined
          ? "in the environment of the pulumi command"
          : "(set it with `pulumi config set --secret`)"),
    );
  }
  return v;
}

/** Returns the inputs with the secret to send: the write-only one read now, or the input as it is. */
function withSecret(news: AuthConfigInputs, send: boolean): AuthConfigInputs {
  if (!send || news.clientSecretVersion === undefined) return news;
  return { ...news, clientSecret: writeOnlySecret(news) };
}

/**
 * Checks AuthConfig inputs: UUIDs, the resource URL, the environment name, and one way of giving the client
 * secret (or none, with workload identity); failures name the property.
 */
function checkAuthConfig(news: Record<string, unknown>): dynamic.CheckResult<AuthConfigInputs> {
  const res = checkObjectInputs(RESOURCE, AuthConfigInputsSchema, news);
  const i = res.inputs;
  if (i === undefined || (res.failures ?? []).length > 0) return res;
  const failures: dynamic.CheckFailure[] = [];
  const set = (v: unknown) => v !== undefined;
  const sources = [i.clientSecretEnv, i.clientSecretConfigKey].filter(set).length;
  if (set(i.clientSecret) && set(i.clientSecretVersion)) {
    failures.push({
      property: "clientSecretVersion",
      reason:
        "set either clientSecret (kept encrypted in the state) or clientSecretVersion (write-only, never in the state), not both",
    });
  }
  if (set(i.clientSecretVersion) && sources !== 1) {
    failures.push({
      property: "clientSecretVersion",
      reason:
        "a write-only client secret needs exactly one of clientSecretEnv (an environment variable name) or clientSecretConfigKey (a stack config key)",
    });
  }
  if (!set(i.clientSecretVersion) && sources > 0) {
    failures.push({
      property: set(i.clientSecretEnv) ? "clientSecretEnv" : "clientSecretConfigKey",
      reason: "is read only with clientSecretVersion: set it (and bump it to send the secret again)",
    });
  }
  if (set(i.identityTokenAudience) && (set(i.clientSecret) || set(i.clientSecretVersion))) {
    failures.push({
      property: "identityTokenAudience",
      reason:
        "workload identity replaces the client secret: set identityTokenAudience or a client secret, not both (the service refuses both)",
    });
  }
  return failures.length > 0 ? { failures } : res;
}

/**
 * Compares desired inputs with the state; a new mount replaces, anything else (the secret too) updates.
 */
async function diffAuthConfig(olds: AuthConfigOutputs, news: AuthConfigInputs): Promise<dynamic.DiffResult> {
  const connection = connectionChange("secrets", olds.connection, news.connection);
  if (connection === "moved") return MOVED;
  const follow = mountFollow(olds, news);
  if (typeof follow === "object") return { changes: true, replaces: [follow.replaces] };
  if (olds.incomplete === true || follow === "moved") return { changes: true };
  // A new place to read the write-only secret from is stored (an update), but sends nothing by itself; so is
  // an accessor added or removed.
  const source =
    news.clientSecretEnv !== olds.clientSecretEnv ||
    news.clientSecretConfigKey !== olds.clientSecretConfigKey ||
    news.mountAccessor !== olds.mountAccessor;
  return {
    changes: connection === "settings" || readableDiffers(olds, news) || source || (await secretChanged(news, olds)),
  };
}

/** True when the settings the service reports back (everything but the secret) differ. */
function readableDiffers(olds: Omit<AuthConfigOutputs, "schemaVersion">, news: AuthConfigInputs): boolean {
  return READABLE.some(([k, f]) => containsUnknown(news[k]) || !sameValue(f, news[k], olds[k]));
}

/**
 * Returns the full write (see `wireBody`): every setting the service would otherwise reset, the ones it keeps
 * when omitted only when set now or before (sent empty to clear them). The secret is hand-written: the service
 * never reports it, so it is sent only when asked (`"clear"` sends "" to remove it).
 */
function configBody(
  news: AuthConfigInputs,
  before: Partial<Omit<AuthConfigOutputs, "schemaVersion">>,
  secret: "send" | "clear" | "keep",
): ConfigWrite {
  const body = wireBody(DEF, news, before) as ConfigWrite;
  const clientSecret = secret === "send" ? news.clientSecret : secret === "clear" ? "" : undefined;
  return clientSecret === undefined ? body : { ...body, client_secret: clientSecret };
}

function configId(mount: string): string {
  return `auth/${mount}/config`;
}

/** The keys of state a moved config leaves out of the comparison besides the mount's: the secret and its hash. */
const STATE_ONLY = ["clientSecret", "clientSecretHash"] as const;

function mountOf(id: string, props: Partial<AuthConfigOutputs>): string {
  return props.mount ?? trimMountPath(id.replace(/^auth\//, "").replace(/\/config$/, ""));
}

function outputs(news: AuthConfigInputs, hash: string | undefined): AuthConfigOutputs {
  const { clientSecret: _secret, ...rest } = news;
  return stateOf({ ...rest, clientSecretHash: hash });
}

/**
 * Workload identity the server took but does not keep: a plugin without those fields (the azure plugin of
 * openbao-plugins, which OpenBao runs) answers the write with 204 and drops them, where Vault's community
 * edition refuses them. The config is read back after a write that sets them, and a read without them fails
 * the create or update, saying so, rather than storing settings the server ignored. The state then keeps
 * the config as unfinished, so each `up` writes and checks again until the program drops them.
 */
async function requireWorkloadIdentity(news: AuthConfigInputs): Promise<void> {
  const sent = (["identityTokenAudience", "identityTokenTtl"] as const)
    .filter((input) => news[input] !== undefined)
    .map((input) => [input, DEF.fields[input].wire ?? input] as const);
  if (sent.length === 0) return;
  const rec = await fetchConfig(news.mount, news.connection);
  if (rec === undefined) return; // removed meanwhile: the next refresh sees it
  const dropped = sent.filter(([, wire]) => !(wire in rec.raw));
  if (dropped.length === 0) return;
  const names = dropped.map(([input]) => input).join(" and ");
  throw new ResourceInitError(
    `${RESOURCE} "${configId(news.mount)}": the service accepted ${names} but does not keep ` +
      `${dropped.length > 1 ? "them" : "it"} (its config read has no ${dropped.map(([, w]) => w).join(" or ")}): ` +
      "its auth plugin has no workload identity (OpenBao's azure plugin from openbao-plugins has none). " +
      "The rest of the configuration was written. Remove identityTokenAudience and identityTokenTtl from the " +
      "program (and give a client secret where the method needs one), then run `pulumi up` again.",
    configId(news.mount),
    { ...outputs(news, undefined), incomplete: true },
  );
}

/** The hash the state keeps of a secret input; none for a write-only secret or no secret. */
async function hashOf(inputs: AuthConfigInputs): Promise<string | undefined> {
  return inputs.clientSecret !== undefined && inputs.clientSecretVersion === undefined
    ? hashClientSecret(inputs.mount, inputs.clientSecret)
    : undefined;
}

/** Returns the inputs a refresh stores: the server's values for every setting it reports (see `refreshedSetting`). */
function observed(props: Partial<AuthConfigOutputs>, mount: string, rec: MethodConfigRecord): AuthConfigInputs {
  // The read reports `retry_delay` and `max_retry_delay` in nanoseconds where every other duration, and the
  // write, is in seconds: the record is compared with those two in seconds.
  const record = { ...rec.raw, retry_delay: rec.retryDelay, max_retry_delay: rec.maxRetryDelay };
  const out: Record<string, unknown> = {
    mount,
    // What the service cannot report stays as the state has it.
    mountAccessor: props.mountAccessor,
    clientSecretVersion: props.clientSecretVersion,
    clientSecretEnv: props.clientSecretEnv,
    clientSecretConfigKey: props.clientSecretConfigKey,
    adopt: props.adopt,
    connection: props.connection,
  };
  for (const [k, f] of READABLE) out[k] = refreshedSetting(f, props[k], record);
  return definedDeep(out) as AuthConfigInputs;
}

/** True when a config as the service reports it holds what these inputs write (`props`: the spelling to compare in). */
function sameConfig(rec: MethodConfigRecord, i: AuthConfigInputs, props: Partial<AuthConfigOutputs> = {}): boolean {
  return !readableDiffers(observed(props, i.mount, rec), i);
}

function sameOutputs(a: AuthConfigOutputs, b: Partial<AuthConfigOutputs>): boolean {
  const { __provider: _p, ...rest } = b as Partial<AuthConfigOutputs> & { __provider?: unknown };
  return canonicalJson(a) === canonicalJson(rest);
}

/** What a config write starts from: the config before it, what to do with the secret, and a hash state keeps. */
interface ConfigFrom {
  was: Omit<AuthConfigOutputs, "schemaVersion"> | undefined;
  secret: "send" | "clear" | "keep";
  /** The hash state keeps as it is (the secret not sent, the mount the same); unset: hash the input. */
  kept?: { hash: string | undefined };
}

/** Reads the config at `mount`; undefined when none is written or the mount is gone (see whenRouted). */
function fetchConfig(
  mount: string,
  connection: AuthConfigInputs["connection"],
): Promise<MethodConfigRecord | undefined> {
  const client = secretsClient(connection);
  return whenRouted(client, mount, () => client.config.read(mount, { unroutedThrows: true }), undefined);
}

/**
 * The AuthConfig provider: the record lifecycle (./record.ts) with a config's rules (the secret and its hash).
 * @public required by name: ../index.ts loads this module and takes the export named after the kind.
 */
export const authConfig: ProviderImpl<AuthConfigInputs, AuthConfigOutputs> = recordProvider({
  resource: RESOURCE,
  check: async (_olds, news) => checkAuthConfig(news),
  diff: (olds: AuthConfigOutputs, news: AuthConfigInputs) => diffAuthConfig(olds, news),
  place: (i: AuthConfigInputs) => i.mount,
  locate: mountOf,
  id: configId,
  fetch: (mount: string, connection) => fetchConfig(mount, connection),
  remove: (mount, connection) => {
    const client = secretsClient(connection);
    return whenRouted(client, mount, () => client.config.delete(mount, { unroutedThrows: true }), false);
  },
  observed,
  outputs,
  create: {
    // A write-only secret is read now, before anything is sent: a missing one changes nothing.
    prepare: (inputs) => withSecret(inputs, true),
    start(news, found, mount): ConfigFrom {
      // The ID is fixed and writing is safe: a config that reports exactly what this resource writes is the
      // one an earlier, unconfirmed create wrote (its answer lost), and is written again. Anything else is
      // someone else's configuration.
      refuseUnlessOwn(
        RESOURCE,
        configId(mount),
        news,
        found,
        (rec, i) => sameConfig(rec, i),
        `the method at "${news.mount}/" is already configured. Set adopt: true to take the ` +
          "configuration over (it is then overwritten with this resource's), or remove it first.",
      );
      const was = found === undefined ? undefined : observed({}, mount, found);
      return { was, secret: news.clientSecret !== undefined ? "send" : "keep" };
    },
  },
  async update(olds, inputs) {
    // After an unconfirmed write the secret is sent again: whether the service has it is unknown.
    const changed = olds.incomplete === true || (await secretChanged(inputs, olds));
    const read = () => fetchConfig(inputs.mount, inputs.connection);
    if (!changed && (await movedWithMount(olds, inputs, STATE_ONLY, read, (rec) => sameConfig(rec, inputs, olds))))
      return { keep: inputs.clientSecretVersion === undefined ? await hashOf(inputs) : undefined };
    const news = withSecret(inputs, changed);
    const secret = !changed ? "keep" : news.clientSecret !== undefined ? "send" : "clear";
    // The hash is made with the mount: a moved config hashes its secret again.
    const kept = !changed && olds.mount === inputs.mount ? { hash: olds.clientSecretHash } : undefined;
    return { news, from: { was: olds, secret, ...(kept !== undefined && { kept }) } satisfies ConfigFrom };
  },
  /**
   * Writes, and when the write's outcome stays unknown, reads the config back: a config that now reports
   * what was sent (and held something else before, so the secret went with it) was written; one that still
   * reports what it held before was not. Then checks the workload identity (see requireWorkloadIdentity).
   */
  async write(news, from: ConfigFrom) {
    const client = secretsClient(news.connection);
    const send = async () => {
      try {
        const body = configBody(news, from.was ?? {}, from.secret);
        await sendWhenRouted(async () => {
          const res = await client.config.write(news.mount, body, { redact: [news.clientSecret] });
          reportWarnings(RESOURCE, configId(news.mount), res.warnings);
        }, client.http.connection.retry);
      } catch (e) {
        throw mountMissingHint(e, news.mount);
      }
    };
    const readBack = {
      fetch: () => fetchConfig(news.mount, news.connection),
      holds: (rec: MethodConfigRecord, i: AuthConfigInputs) => sameConfig(rec, i),
      unreported: (was: AuthConfigInputs, i: AuthConfigInputs) => !readableDiffers(was, i),
    };
    const was = from.was as AuthConfigInputs | undefined;
    await confirmedWrite(
      `${RESOURCE} "${configId(news.mount)}": write`,
      send,
      news,
      was,
      readBack,
      client.http.connection.retry,
    );
    await requireWorkloadIdentity(news);
    const hash = from.kept !== undefined ? from.kept.hash : await hashOf(news);
    return news.clientSecretVersion === undefined ? hash : undefined;
  },
  unfinished: { at: (news) => ({ id: configId(news.mount), learned: undefined }), sentence: () => WRITE_AGAIN },
  refresh: {
    learned: (props) => props.clientSecretHash,
    inputs(inputs, out, props) {
      // The dynamic-provider host passes `read` the outputs only, and they never hold the secret. When the
      // service still holds what state says, the engine keeps the inputs it has (the declared secret with them).
      if (sameOutputs(out, props)) return undefined;
      // Drift: the inputs become what the service holds, so a second refresh shows nothing. The secret cannot
      // be among them; a flag stands in, and the diff reads it as "the secret state knows" (not "removed").
      // Never the hash: the engine would store it in plaintext, as this key held no secret before.
      const stored = props.clientSecretHash !== undefined ? { ...inputs, [SECRET_KEPT]: true } : inputs;
      return stored as Partial<AuthConfigOutputs>;
    },
  },
});
