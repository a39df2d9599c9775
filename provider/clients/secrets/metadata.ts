/**
 * Login from inside a cloud instance: the identity token and the instance facts come from the local
 * instance metadata service, then the method's login runs with them.
 */
import type { ZodType } from "zod";
import { ApiError, isApiError } from "../../errors";
import { sleep, type HttpCore } from "../../http/core";
import {
  MetadataInstanceSchema,
  MetadataTokenSchema,
  type AuthBlock,
  type LoginRequest,
  type MetadataCompute,
  type MetadataInstance,
  type MetadataToken,
} from "../../schemas/secrets";
import { checkJwt, type Login } from "./login";

/** The metadata service's address on every instance. */
export const DEFAULT_METADATA_URL = "http://169.254.169.254";

/** How the metadata service is retried: its documented guidance, bounded. */
export interface MetadataRetryPolicy {
  /** Attempts in all for 404, 429 and 5xx (the guidance: 5, at about 0/2/6/14/30 s). */
  maxAttempts: number;
  /** Wait before retry n is `min(maxDelayMs, baseDelayMs * 2^(n-1))`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 410 is retried until at least this long has passed since the first attempt (the guidance: 70 s). */
  goneRetryMs: number;
}

/** The documented guidance: 5 attempts 2/4/8/16 s apart; a 410 for at least 70 s. */
export const DEFAULT_METADATA_RETRY: Readonly<MetadataRetryPolicy> = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 2_000,
  maxDelayMs: 30_000,
  goneRetryMs: 70_000,
});

/**
 * Returns the wait before the next attempt at the metadata service, or undefined to stop. `failures`
 * counts failed attempts so far; `status` is undefined for a network failure (not retried: the service is
 * local, so it is simply not there).
 */
export function metadataRetryDelay(
  policy: MetadataRetryPolicy,
  failures: number,
  status: number | undefined,
  elapsedMs: number,
): number | undefined {
  if (status === undefined) return undefined;
  const retryable = status === 404 || status === 410 || status === 429 || (status >= 500 && status <= 599);
  if (!retryable) return undefined;
  const wait = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
  if (status === 410 && elapsedMs < policy.goneRetryMs) return wait;
  return failures < policy.maxAttempts ? wait : undefined;
}

/** Which managed identity to ask for when the instance has several (at most one). */
export interface IdentitySelector {
  clientId?: string;
  objectId?: string;
  /** Resource ID of a user-assigned identity (`mi_res_id`). */
  miResId?: string;
}

/** Options of {@link MetadataLogin.login}. */
export interface MetadataLoginOptions extends IdentitySelector {
  /** Mount of the method (default `cloud`). */
  mount?: string;
  role: string;
  /** Resource the token is requested for; it must equal the method's configured `resource`. */
  resource: string;
  /** Expected audience, when it should be checked against something else than `resource`. */
  audience?: string;
  /** Expected tenant of the token (checked before sending when given). */
  tenantId?: string;
  /** Send `resource_id` (the instance's resource ID) instead of `vm_name`/`vmss_name`. */
  useResourceId?: boolean;
  /** api-version of the token endpoint (default 2018-02-01). */
  tokenApiVersion?: string;
  /** api-version of the instance endpoint (default 2021-02-01). */
  instanceApiVersion?: string;
  signal?: AbortSignal;
}

/**
 * Builds the login request from an instance's facts: `vmss_name` when the instance belongs to a scale set,
 * else `vm_name`; `resource_id` instead when asked (the service uses it only when neither name is sent).
 */
export function buildLoginRequest(
  role: string,
  jwt: string,
  compute: MetadataCompute,
  options: { useResourceId?: boolean } = {},
): LoginRequest {
  const req: LoginRequest = {
    role,
    jwt,
    subscription_id: compute.subscriptionId,
    resource_group_name: compute.resourceGroupName,
  };
  if (options.useResourceId === true) {
    if (compute.resourceId !== "") req.resource_id = compute.resourceId;
  } else if (compute.vmScaleSetName !== "") {
    req.vmss_name = compute.vmScaleSetName;
  } else {
    req.vm_name = compute.name;
  }
  return req;
}

/** The instance metadata service, and login with what it returns. */
export class MetadataLogin {
  constructor(
    private readonly core: HttpCore,
    private readonly auth: Login,
    private readonly policy: MetadataRetryPolicy,
  ) {}

  /** Fetches a managed-identity token for `resource`; `access_token` is the JWT (a secret). */
  async token(
    resource: string,
    options: IdentitySelector & { apiVersion?: string; signal?: AbortSignal } = {},
  ): Promise<MetadataToken> {
    return this.get(
      "fetch identity token from the metadata service",
      "/metadata/identity/oauth2/token",
      {
        "api-version": options.apiVersion ?? "2018-02-01",
        resource,
        client_id: options.clientId,
        object_id: options.objectId,
        mi_res_id: options.miResId,
      },
      MetadataTokenSchema,
      options.signal,
    );
  }

  /** Fetches the instance's facts (subscription, resource group, name, scale set, resource ID). */
  async instance(options: { apiVersion?: string; signal?: AbortSignal } = {}): Promise<MetadataInstance> {
    return this.get(
      "read instance metadata",
      "/metadata/instance",
      { "api-version": options.apiVersion ?? "2021-02-01" },
      MetadataInstanceSchema,
      options.signal,
    );
  }

  /**
   * Logs in with the instance's managed identity: reads the instance facts and a token for `resource`,
   * refuses an expired token or one for another audience before sending, then logs in as `role`.
   */
  async login(options: MetadataLoginOptions): Promise<AuthBlock> {
    const instance = await this.instance({
      ...(options.instanceApiVersion ? { apiVersion: options.instanceApiVersion } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const token = await this.token(options.resource, {
      ...(options.tokenApiVersion ? { apiVersion: options.tokenApiVersion } : {}),
      ...(options.clientId ? { clientId: options.clientId } : {}),
      ...(options.objectId ? { objectId: options.objectId } : {}),
      ...(options.miResId ? { miResId: options.miResId } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const check = {
      audience: options.audience ?? options.resource,
      ...(options.tenantId ? { tenantId: options.tenantId } : {}),
    };
    await checkJwt(token.access_token, check);
    const request = buildLoginRequest(options.role, token.access_token, instance.compute, {
      useResourceId: options.useResourceId === true,
    });
    return this.auth.login(options.mount ?? "cloud", request, {
      ...check,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  private async get<T>(
    operation: string,
    path: string,
    query: Record<string, string | undefined>,
    schema: ZodType<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.core.request({
          operation,
          method: "GET",
          path,
          query,
          headers: { Metadata: "true" },
          auth: false,
          schema,
          ...(signal ? { signal } : {}),
        });
        return res.value;
      } catch (e) {
        if (!isApiError(e)) throw e;
        if (e.code === "aborted") throw e;
        const wait = metadataRetryDelay(this.policy, attempt, e.status, Date.now() - started);
        if (wait === undefined) throw metadataError(e, attempt, this.core.connection.origin);
        await sleep(wait, signal);
      }
    }
  }
}

function metadataError(e: ApiError, attempts: number, origin: string): ApiError {
  const hint =
    e.status === undefined
      ? `the instance metadata service at ${origin} did not answer; this only works on a cloud instance (or set metadataUrl)`
      : e.status === 400
        ? "the metadata service refused the request (api-version, resource or the Metadata header)"
        : e.status === 401 || e.status === 403
          ? "the instance has no usable managed identity for this resource"
          : `the instance metadata service at ${origin} kept failing`;
  return e.with({ attempts, hint });
}
