/**
 * The typed client of the secrets service's cloud-identity auth method: mounts, method config, roles,
 * login, and login through the instance metadata service, all over one HTTP core.
 */
import { definedDeep } from "../../defined";
import { HttpCore } from "../../http/core";
import type { ConnectionOptions } from "../../http/settings";
import { MethodConfig } from "./config";
import { Login } from "./login";
import { DEFAULT_METADATA_RETRY, DEFAULT_METADATA_URL, MetadataLogin, type MetadataRetryPolicy } from "./metadata";
import { AuthMounts } from "./mounts";
import { Roles } from "./roles";

export { MethodConfig, type MethodConfigRecord } from "./config";
export { Login, checkJwt, type JwtCheckOptions, type LoginOptions } from "./login";
export {
  DEFAULT_METADATA_RETRY,
  DEFAULT_METADATA_URL,
  MetadataLogin,
  buildLoginRequest,
  metadataRetryDelay,
  type IdentitySelector,
  type MetadataLoginOptions,
  type MetadataRetryPolicy,
} from "./metadata";
export {
  AuthMounts,
  isMountInUse,
  isRemountUnsupported,
  type FoundMount,
  type RemountResult,
  type RemountState,
} from "./mounts";
export { Roles } from "./roles";
export type { WriteResult } from "./write";
export type {
  AuthBlock,
  ConfigRead,
  ConfigWrite,
  EnableRequest,
  LoginRequest,
  MetadataCompute,
  MetadataInstance,
  MetadataToken,
  MountEntry,
  MountList,
  RemountStatus,
  RoleRead,
  RoleWrite,
  TuneRequest,
  TuneResponse,
} from "../../schemas/secrets";

/** Options of a {@link SecretsClient}: the connection, plus where the instance metadata service is. */
export interface SecretsClientOptions extends ConnectionOptions {
  /** Base URL of the instance metadata service (default `http://169.254.169.254`). */
  metadataUrl?: string;
  /** Retry policy overrides for the metadata service. */
  metadataRetry?: Partial<MetadataRetryPolicy>;
  /** Timeout of one metadata request in ms (default 10 s). */
  metadataTimeoutMs?: number;
}

/** A client of the secrets service's cloud-identity auth method. */
export class SecretsClient {
  /** The HTTP core every call of this client goes through. */
  readonly http: HttpCore;
  /** Auth method mounts (`/v1/sys/auth`). */
  readonly mounts: AuthMounts;
  /** The method's configuration (`/v1/auth/<mount>/config`). */
  readonly config: MethodConfig;
  /** Roles (`/v1/auth/<mount>/role/<name>`). */
  readonly roles: Roles;
  /** Login with a token in hand (`/v1/auth/<mount>/login`). */
  readonly auth: Login;
  private readonly options: SecretsClientOptions;
  private metadataLogin: MetadataLogin | undefined;

  /** Creates a client; unset connection options fall back to the environment (SECRETS_ADDR, SECRETS_TOKEN, ...). */
  constructor(options: SecretsClientOptions = {}) {
    this.options = options;
    this.http = new HttpCore("secrets", options);
    this.mounts = new AuthMounts(this.http);
    this.config = new MethodConfig(this.http);
    this.roles = new Roles(this.http);
    this.auth = new Login(this.http);
  }

  /**
   * Login through the instance metadata service. Its connection is made on first use, from
   * `metadataUrl` only: no token, namespace or TLS setting of the service connection is sent to it.
   */
  get metadata(): MetadataLogin {
    if (this.metadataLogin === undefined) {
      const o = this.options;
      const core = new HttpCore("secrets", {
        address: o.metadataUrl ?? DEFAULT_METADATA_URL,
        env: {},
        timeoutMs: o.metadataTimeoutMs ?? 10_000,
        retry: { maxAttempts: 1 },
        ...(o.hooks ? { hooks: o.hooks } : {}),
      });
      this.metadataLogin = new MetadataLogin(core, this.auth, {
        ...DEFAULT_METADATA_RETRY,
        ...definedDeep(o.metadataRetry ?? {}),
      });
    }
    return this.metadataLogin;
  }
}
