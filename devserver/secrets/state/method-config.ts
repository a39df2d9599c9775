import { DevHttpError } from "../../core/errors";
import { restoreRecord } from "../../core/migrate";
import type { SecretsRelease } from "./release";
import { has, readBool, readDuration, readInt, readString, unknownFieldsWarning } from "./values";

/**
 * The cloud auth method's configuration record (`auth/<mount>/config`) with the real write semantics: the
 * identity fields keep their stored value when omitted, while root_password_ttl, max_retries, retry_delay and
 * max_retry_delay fall back to their defaults whenever a write omits them. client_secret is never read back.
 */

/** Stored configuration (durations in seconds). */
export interface MethodConfig {
  tenant_id: string;
  resource: string;
  environment: string;
  client_id: string;
  client_secret: string;
  root_password_ttl: number;
  max_retries: number;
  retry_delay: number;
  max_retry_delay: number;
  identity_token_audience: string;
  identity_token_ttl: number;
  rotation_schedule: string;
  rotation_window: number;
  rotation_period: number;
  disable_automated_rotation: boolean;
}

const DEFAULT_ROOT_PASSWORD_TTL = 4380 * 3600;
const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_RETRY_DELAY = 4;
const DEFAULT_MAX_RETRY_DELAY = 60;
const DEFAULT_IDENTITY_TOKEN_TTL = 3600;
const ENVIRONMENTS = new Set(["AZURECHINACLOUD", "AZUREPUBLICCLOUD", "AZUREUSGOVERNMENTCLOUD"]);
const NS_PER_SECOND = 1_000_000_000;

/** The fields every plugin played has; Vault's plugin also has the workload-identity and rotation ones. */
const BASE_FIELDS = [
  "tenant_id",
  "resource",
  "environment",
  "client_id",
  "client_secret",
  "root_password_ttl",
  "max_retries",
  "retry_delay",
  "max_retry_delay",
] as const;
const VAULT_ONLY_FIELDS = [
  "identity_token_audience",
  "identity_token_ttl",
  "rotation_schedule",
  "rotation_window",
  "rotation_period",
  "disable_automated_rotation",
] as const;
const KNOWN_FIELDS: ReadonlySet<string> = new Set([...BASE_FIELDS, ...VAULT_ONLY_FIELDS]);

function emptyConfig(): MethodConfig {
  return {
    tenant_id: "",
    resource: "",
    environment: "",
    client_id: "",
    client_secret: "",
    root_password_ttl: DEFAULT_ROOT_PASSWORD_TTL,
    max_retries: DEFAULT_MAX_RETRIES,
    retry_delay: DEFAULT_RETRY_DELAY,
    max_retry_delay: DEFAULT_MAX_RETRY_DELAY,
    identity_token_audience: "",
    identity_token_ttl: DEFAULT_IDENTITY_TOKEN_TTL,
    rotation_schedule: "",
    rotation_window: 0,
    rotation_period: 0,
    disable_automated_rotation: false,
  };
}

/**
 * Checks what login and a write both need (tenant, resource, environment), in the real order. These are
 * plain errors in the real service, hence 500.
 */
export function settingsError(c: MethodConfig): string | undefined {
  if (c.tenant_id === "") return "tenant_id is required";
  if (c.resource === "") return "resource is required";
  if (c.environment !== "" && !ENVIRONMENTS.has(c.environment.toUpperCase())) {
    return `err: no cloud configuration matching the name ${JSON.stringify(c.environment.toUpperCase())}`;
  }
  return undefined;
}

/**
 * Applies a config write to the stored record; resolves to the new record and any warnings. A plugin without
 * the workload-identity fields (`release.workloadIdentity` "ignored") leaves them and the rotation fields out
 * as unknown, without a word.
 */
export function writeConfig(
  existing: MethodConfig | undefined,
  input: Readonly<Record<string, unknown>>,
  release: Pick<SecretsRelease, "workloadIdentity" | "warnsUnknownFields">,
): { config: MethodConfig; warnings: string[] } {
  const hasVaultFields = release.workloadIdentity !== "ignored";
  const body = hasVaultFields
    ? input
    : Object.fromEntries(Object.entries(input).filter(([k]) => !(VAULT_ONLY_FIELDS as readonly string[]).includes(k)));
  const c: MethodConfig = { ...(existing ?? emptyConfig()) };
  const str = (
    k:
      | "tenant_id"
      | "resource"
      | "environment"
      | "client_id"
      | "client_secret"
      | "identity_token_audience"
      | "rotation_schedule",
  ): void => {
    if (has(body, k)) c[k] = readString(k, body[k]);
  };
  str("tenant_id");
  str("resource");
  str("environment");
  str("client_id");
  str("client_secret");

  c.root_password_ttl = has(body, "root_password_ttl")
    ? readDuration("root_password_ttl", body.root_password_ttl)
    : DEFAULT_ROOT_PASSWORD_TTL;
  c.max_retries = has(body, "max_retries") ? readInt("max_retries", body.max_retries) : DEFAULT_MAX_RETRIES;
  c.max_retry_delay = has(body, "max_retry_delay")
    ? readDuration("max_retry_delay", body.max_retry_delay)
    : DEFAULT_MAX_RETRY_DELAY;
  c.retry_delay = has(body, "retry_delay") ? readDuration("retry_delay", body.retry_delay) : DEFAULT_RETRY_DELAY;

  str("identity_token_audience");
  if (has(body, "identity_token_ttl"))
    c.identity_token_ttl = readDuration("identity_token_ttl", body.identity_token_ttl);
  str("rotation_schedule");
  if (has(body, "rotation_window")) c.rotation_window = readDuration("rotation_window", body.rotation_window);
  if (has(body, "rotation_period")) c.rotation_period = readDuration("rotation_period", body.rotation_period);
  if (has(body, "disable_automated_rotation")) {
    c.disable_automated_rotation = readBool("disable_automated_rotation", body.disable_automated_rotation);
  }

  if (c.identity_token_audience !== "" && c.client_secret !== "") {
    throw new DevHttpError(400, "only one of 'client_secret' or 'identity_token_audience' can be set");
  }
  if (c.identity_token_audience !== "" && release.workloadIdentity === "refused") {
    // Workload identity federation needs the enterprise edition; by default the devserver plays the community one.
    throw new DevHttpError(400, "plugin workload identity not supported in Vault community edition");
  }
  const problem = settingsError(c);
  if (problem !== undefined) throw new DevHttpError(500, problem);
  return { config: c, warnings: release.warnsUnknownFields ? unknownFieldsWarning(body, KNOWN_FIELDS) : [] };
}

/**
 * Returns the config as a read shows it: no client_secret, retry delays in nanoseconds; a plugin without
 * workload identity shows neither those fields nor the rotation ones.
 */
export function readConfig(
  c: MethodConfig,
  release: Pick<SecretsRelease, "workloadIdentity">,
): Record<string, unknown> {
  const all: Record<string, unknown> = {
    tenant_id: c.tenant_id,
    resource: c.resource,
    environment: c.environment,
    client_id: c.client_id,
    root_password_ttl: c.root_password_ttl,
    retry_delay: c.retry_delay * NS_PER_SECOND,
    max_retry_delay: c.max_retry_delay * NS_PER_SECOND,
    max_retries: c.max_retries,
    identity_token_audience: c.identity_token_audience,
    identity_token_ttl: c.identity_token_ttl,
    rotation_schedule: c.rotation_schedule,
    rotation_window: c.rotation_window,
    rotation_period: c.rotation_period,
    disable_automated_rotation: c.disable_automated_rotation,
  };
  if (release.workloadIdentity !== "ignored") return all;
  for (const k of VAULT_ONLY_FIELDS) delete all[k];
  return all;
}

/**
 * Restores a persisted config: a field it lacks (written before the field existed) gets its default;
 * undefined when a field it holds has the wrong type.
 */
export function restoreConfig(data: unknown): MethodConfig | undefined {
  return restoreRecord(emptyConfig(), data);
}
