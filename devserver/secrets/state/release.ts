/**
 * Which real server the secrets service plays (the `release` option). By default it plays Vault with its
 * built-in cloud auth plugin. `openbao-2.6.2` plays OpenBao 2.6.2 with the azure plugin of openbao-plugins
 * (auth-azure-v0.21.0) registered, unversioned, from a plugin directory, as recorded in
 * test/fixtures/recorded/openbao-2.6.2/:
 * - the plugin catalog holds only that unversioned plugin: an enable or tune naming any plugin version
 *   answers 400 `plugin not found in the catalog: <type>, version=<v>`;
 * - a mount reports the external plugin: `running_plugin_version` "" and its binary's `running_sha256`;
 * - the method config has no workload-identity or rotation fields: they (and any other unknown field) are
 *   ignored without a warning and never read back.
 */
import { createHash } from "node:crypto";

/** How the method config treats `identity_token_audience` and `identity_token_ttl`. */
type WorkloadIdentitySupport = "accepted" | "refused" | "ignored";

/** What differs between the servers the secrets service can play. */
export interface SecretsRelease {
  /** The name the release was asked for (undefined: the default, Vault). */
  readonly name: string | undefined;
  /** False: the catalog holds only the unversioned plugin, so any requested version is not found. */
  readonly anyPluginVersion: boolean;
  /** Appended to the "not a valid semantic version" text (the server's version parser's own words). */
  readonly malformedVersionDetail: (version: string) => string;
  /** `running_plugin_version` of a cloud auth mount. */
  readonly runningPluginVersion: string;
  /** `running_sha256` of a cloud auth mount ("" for a built-in plugin). */
  readonly runningSha256: string;
  /** The workload-identity fields: accepted, refused (community edition) or ignored (no such fields). */
  readonly workloadIdentity: WorkloadIdentitySupport;
  /** Whether a config write warns about fields the method does not know (OpenBao's plugin answers 204). */
  readonly warnsUnknownFields: boolean;
}

/** The releases the devserver can play besides the default. */
const SECRETS_RELEASES = ["openbao-2.6.2"] as const;

/**
 * Returns the profile of a release: undefined plays Vault (workload identity refused unless
 * `workloadIdentity` asks for the enterprise edition); `openbao-2.6.2` plays OpenBao as described above.
 */
export function secretsRelease(release: string | undefined, workloadIdentity = false): SecretsRelease {
  if (release === undefined) {
    return {
      name: undefined,
      anyPluginVersion: true,
      malformedVersionDetail: () => "",
      runningPluginVersion: "v0.24.0+builtin",
      runningSha256: "",
      workloadIdentity: workloadIdentity ? "accepted" : "refused",
      warnsUnknownFields: true,
    };
  }
  if (release === "openbao-2.6.2") {
    if (workloadIdentity) throw new TypeError("workloadIdentity cannot be set with release openbao-2.6.2");
    return {
      name: release,
      anyPluginVersion: false,
      malformedVersionDetail: (v) => `: malformed version: ${v}`,
      runningPluginVersion: "",
      // Stands in for the sha256 of the plugin binary (any 64 hex digits: the devserver runs no binary).
      runningSha256: createHash("sha256").update("devserver azure plugin").digest("hex"),
      workloadIdentity: "ignored",
      warnsUnknownFields: false,
    };
  }
  throw new TypeError(`secrets release must be one of ${SECRETS_RELEASES.join(", ")} (or left out), got "${release}"`);
}
