/**
 * The AuthConfig's fields (see ../definition.ts): one line per field; the SDK class (the secret fields
 * included), `check`, the settings the diff compares and docs/reference/auth-config.md all come from here.
 */
import { z } from "zod";
import { durationSeconds } from "../../values";
import {
  CLOUD_ENVIRONMENTS,
  CONFIG_DEFAULTS,
  type ConfigReadSchema,
  type ConfigWriteSchema,
} from "../../schemas/secrets";
import { mountAccessorField, mountPathSchema, wholeNumber } from "../auth-common";
import { defineResource, field, type WireNames, type WiredBy } from "../definition";

// The directory's IDs are GUIDs; the service takes them with or without the dashes.
const UUID = /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$/;
const uuid = z.string().regex(UUID, "must be a UUID (8-4-4-4-12 hexadecimal digits, or the 32 digits without dashes)");
const duration = z.union([z.number().int().nonnegative(), z.string()]).refine((v) => {
  const s = durationSeconds(v);
  return s !== undefined && s >= 0;
}, 'must be a non-negative duration: seconds, or a string such as "4s" or "4380h"');

const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/**
 * True for an absolute URI: a token audience the directory issues tokens for is an http(s) URL or an
 * application ID URI such as `api://<application id>`.
 */
function isAbsoluteUri(s: string): boolean {
  if (!URI_SCHEME.test(s)) return false;
  try {
    const u = new URL(s);
    // "host:port"-looking text parses with the host as scheme; a URL scheme needs "//" or an opaque path.
    return u.protocol.length > 1 && (s.slice(u.protocol.length).startsWith("//") || u.protocol === "urn:");
  } catch {
    return false;
  }
}

/** The service's identity token lifetime when none is set: 1h. */
const IDENTITY_TOKEN_TTL = 3600;

/** The AuthConfig: every field, in the order the SDK and the reference page list them. */
export const authConfigDefinition = defineResource({
  name: "AuthConfig",
  module: "auth-config",
  doc: "The configuration of an auth method mount of the secrets service.",
  argsDoc: "Arguments of an {@link AuthConfig}.",
  id: "auth/<mount>/config",
  replaceOrder: "create-first",
  notes:
    "The service never returns the client secret. With `clientSecret` the state keeps a salted scrypt hash of it (the secret output `clientSecretHash`), and the secret is sent on create and when the program's secret no longer matches the hash; Pulumi keeps the input itself, encrypted, in the state's inputs. With `clientSecretVersion` the secret is read at apply time from `clientSecretEnv` or `clientSecretConfigKey` and reaches the state in no form; it is sent on create and when the version changes. A secret rotated on the service makes the program's copy stale, and applying it again undoes the rotation. Every write sends `maxRetries`, `retryDelay`, `maxRetryDelay` and `rootPasswordTtl` (their defaults when unset), since the service resets an omitted one; see [Secrets in state](../secrets-and-security.md#secrets-in-state).",
  fields: {
    mount: field.string({
      doc:
        "Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the config, " +
        "unless `mountAccessor` shows the mount moved with it (`sys/remount`): then it is an update that writes nothing.",
      kind: "source",
      rule: mountPathSchema('must be the path of an auth mount, such as "cloud"'),
      required: true,
      default: "cloud",
      replaceOnChange: true,
      change: "replaces; updates (nothing written) when the mount moved, see `mountAccessor`",
    }),
    mountAccessor: mountAccessorField(),
    tenantId: field.string({
      doc: "Directory tenant whose tokens are accepted (a UUID, with or without dashes).",
      rule: uuid,
      required: true,
      wire: "tenant_id",
    }),
    resource: field.string({
      doc:
        "Resource the managed-identity tokens are requested for: an absolute URI, such as an http(s) URL or an " +
        "application ID URI (`api://<application id>`). It must equal the tokens' audience exactly, trailing " +
        "slash included: a mismatch shows only as a failing login.",
      rule: z
        .string()
        .refine(
          isAbsoluteUri,
          'must be an absolute URI such as "https://management.azure.com/" or "api://<application id>"; it must equal the login tokens\' audience exactly, trailing slash included',
        ),
      required: true,
      wire: "resource",
    }),
    clientId: field.string({
      doc: "Client ID of the directory application (a UUID).",
      rule: uuid,
      wire: "client_id",
      unsetMeans: "",
      whenUnset: "clear-if-set",
    }),
    clientSecret: field.string({
      doc:
        "Client secret of the directory application. Always handled as a Pulumi secret; the outputs keep only a " +
        "salted hash of it, and it is sent on create and when it changes. Pulumi keeps this input, encrypted, in " +
        "the state; use `clientSecretVersion` for a secret the state never holds. The service never returns it, " +
        "so a secret rotated on the service makes this value stale (applying it again undoes the rotation).",
      rule: z.string().min(1, "must not be empty; leave it out to send no client secret"),
      kind: "setting",
      secret: true,
      sdkOutput: false,
      change: "updates (sends the secret)",
    }),
    clientSecretVersion: field.number({
      doc:
        "Write-only client secret: a number you bump when the secret should be sent again. The secret is read " +
        "when `up` applies the resource, from `clientSecretEnv` or `clientSecretConfigKey`, and never reaches " +
        "the state (no input, no output, no hash): it is sent on create and when this number changes, so a " +
        "changed secret under the same number is not noticed. Excludes `clientSecret`.",
      rule: wholeNumber(),
      change: "updates (sends the secret)",
    }),
    clientSecretEnv: field.string({
      doc:
        "With `clientSecretVersion`: the environment variable of the `pulumi` command that holds the secret " +
        "(the provider runs with the command's environment).",
      rule: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name (letters, digits and '_')"),
      change: "updates (writes the config again, without the secret)",
    }),
    clientSecretConfigKey: field.string({
      doc:
        "With `clientSecretVersion`: the stack config key (`<namespace>:<name>`) that holds the secret, set with " +
        "`pulumi config set --secret <namespace>:<name>`; kept encrypted in the stack's config file, not the state.",
      rule: z.string().regex(/^[^:\s]+:[^\s]+$/, 'must be a stack config key such as "myproject:clientSecret"'),
      change: "updates (writes the config again, without the secret)",
    }),
    identityTokenAudience: field.string({
      doc:
        "Workload identity (servers that support it, such as the enterprise edition): the audience of the " +
        "identity token the plugin presents instead of a client secret. Excludes a client secret.",
      rule: z.string().min(1, "must not be empty; leave it out for none"),
      wire: "identity_token_audience",
      unsetMeans: "",
      whenUnset: "clear-if-set",
    }),
    identityTokenTtl: field.duration({
      doc: "Workload identity: lifetime of the plugin's identity token, seconds or a duration (default 1h).",
      rule: duration,
      wire: "identity_token_ttl",
      unsetMeans: IDENTITY_TOKEN_TTL,
      whenUnset: "clear-if-set",
    }),
    environment: field.string({
      doc: "`AzurePublicCloud`, `AzureUSGovernmentCloud` or `AzureChinaCloud` (any case).",
      rule: z
        .string()
        .refine(
          (e) => CLOUD_ENVIRONMENTS.some((x) => x.toLowerCase() === e.toLowerCase()),
          `must be one of ${CLOUD_ENVIRONMENTS.join(", ")}`,
        ),
      wire: "environment",
      unsetMeans: "",
      whenUnset: "clear-if-set",
      canonical: (v) => v.toLowerCase(),
    }),
    maxRetries: field.number({
      doc: "Retries of the method's calls to the cloud APIs (default 3; always sent, since omitting it resets it).",
      rule: wholeNumber(),
      wire: "max_retries",
      unsetMeans: CONFIG_DEFAULTS.maxRetries,
    }),
    retryDelay: field.duration({
      doc: "First retry delay: seconds or a duration (default 4 s).",
      rule: duration,
      wire: "retry_delay",
      unsetMeans: CONFIG_DEFAULTS.retryDelaySeconds,
    }),
    maxRetryDelay: field.duration({
      doc: "Longest retry delay: seconds or a duration (default 60 s).",
      rule: duration,
      wire: "max_retry_delay",
      unsetMeans: CONFIG_DEFAULTS.maxRetryDelaySeconds,
    }),
    rootPasswordTtl: field.duration({
      doc: "Lifetime of rotated root passwords: seconds or a duration (default 4380h).",
      rule: duration,
      wire: "root_password_ttl",
      unsetMeans: CONFIG_DEFAULTS.rootPasswordTtlSeconds,
    }),
    adopt: field.boolean({
      doc: "Take over an existing configuration instead of failing (it is overwritten with these settings).",
    }),
    connection: field.connection("secrets", "writes"),
    clientSecretHash: field.string({
      doc: "Salted scrypt hash of the client secret (a secret output), used only to notice a change; absent when no secret was given.",
      kind: "output",
      secret: true,
    }),
    incomplete: field.boolean({
      doc: "Set when the last write's outcome is unknown: the next `up` writes again (secret included).",
      kind: "output",
      sdkOutput: false,
    }),
    schemaVersion: field.number({ doc: "The version of the state's shape.", kind: "output", required: true }),
  },
});

/** The config record's wire schemas, written by hand, name every setting above (one they lack fails the typecheck). */
type _Wire = WiredBy<[typeof ConfigWriteSchema, typeof ConfigReadSchema], WireNames<typeof authConfigDefinition>>;
