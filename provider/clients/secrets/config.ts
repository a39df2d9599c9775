/**
 * The method's configuration record (`/v1/auth/<mount>/config`): write, read, delete.
 */
import { isApiError } from "../../errors";
import type { HttpCore } from "../../http/core";
import {
  ConfigReadSchema,
  ConfigWriteSchema,
  WriteResponseSchema,
  type ConfigRead,
  type ConfigWrite,
} from "../../schemas/secrets";
import { encodeMount } from "./normalize";
import { isUnrouted, parseRequest, warningsOf, type UnroutedOption, type WriteResult } from "./write";

/** The configuration as read back, with durations converted to seconds. `client_secret` is never returned. */
export interface MethodConfigRecord {
  tenantId: string;
  resource: string;
  clientId: string;
  environment: string;
  /** Seconds. */
  rootPasswordTtl?: number;
  maxRetries?: number;
  /** Seconds (the service reports nanoseconds). */
  retryDelay?: number;
  /** Seconds (the service reports nanoseconds). */
  maxRetryDelay?: number;
  /** The record as the service sent it. */
  raw: ConfigRead;
}

const NS_PER_SECOND = 1e9;

/** The configuration of one auth method mount. */
export class MethodConfig {
  constructor(private readonly http: HttpCore) {}

  /**
   * Writes the configuration. Omitted `root_password_ttl`, `max_retries`, `retry_delay` and
   * `max_retry_delay` reset to their defaults on the service, so send them every time. `redact` names more
   * strings to keep out of errors (a stored secret this write does not send).
   */
  async write(
    mount: string,
    config: ConfigWrite,
    options: { redact?: ReadonlyArray<string | undefined> } = {},
  ): Promise<WriteResult> {
    const body = parseRequest(ConfigWriteSchema, config, "write auth method config");
    const res = await this.http.request({
      operation: "write auth method config",
      method: "POST",
      path: `/v1/auth/${encodeMount(mount)}/config`,
      body,
      schema: WriteResponseSchema,
      secrets: [config.client_secret, ...(options.redact ?? [])],
      idempotent: true,
    });
    return { warnings: warningsOf(res.value) };
  }

  /**
   * Reads the configuration; resolves to undefined when none is written, and on a 404 `no handler for route`
   * (the mount gone, or a standby whose mount table lags: see {@link isUnrouted}) unless `unroutedThrows`.
   */
  async read(mount: string, options: UnroutedOption = {}): Promise<MethodConfigRecord | undefined> {
    try {
      const res = await this.http.request({
        operation: "read auth method config",
        method: "GET",
        path: `/v1/auth/${encodeMount(mount)}/config`,
        schema: ConfigReadSchema.optional(),
      });
      const c = res.value;
      if (c === undefined) return undefined;
      return {
        tenantId: c.tenant_id,
        resource: c.resource,
        clientId: c.client_id,
        environment: c.environment,
        ...(c.root_password_ttl !== undefined ? { rootPasswordTtl: c.root_password_ttl } : {}),
        ...(c.max_retries !== undefined ? { maxRetries: c.max_retries } : {}),
        ...(c.retry_delay !== undefined ? { retryDelay: Math.round(c.retry_delay / NS_PER_SECOND) } : {}),
        ...(c.max_retry_delay !== undefined ? { maxRetryDelay: Math.round(c.max_retry_delay / NS_PER_SECOND) } : {}),
        raw: c,
      };
    } catch (e) {
      if (isApiError(e, "not_found") && !(options.unroutedThrows === true && isUnrouted(e))) return undefined;
      throw e;
    }
  }

  /**
   * Deletes the configuration; resolves to false on a 404 (nothing to delete: the mount gone, or a standby
   * whose mount table lags answered, see {@link isUnrouted}). With `unroutedThrows`, a 404 `no handler for
   * route` rejects instead.
   */
  async delete(mount: string, options: UnroutedOption = {}): Promise<boolean> {
    try {
      await this.http.request({
        operation: "delete auth method config",
        method: "DELETE",
        path: `/v1/auth/${encodeMount(mount)}/config`,
        schema: WriteResponseSchema,
        // Deleting twice leaves the same: nothing at the path.
        idempotent: true,
      });
      return true;
    } catch (e) {
      if (isApiError(e, "not_found") && !(options.unroutedThrows === true && isUnrouted(e))) return false;
      throw e;
    }
  }
}
