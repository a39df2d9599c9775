/**
 * Auth method mounts (`/v1/sys/auth`): enable, find, tune, disable.
 */
import { randomUUID } from "node:crypto";
import { ApiError, isApiError } from "../../errors";
import type { HttpCore } from "../../http/core";
import {
  EnableRequestSchema,
  MountListSchema,
  RemountRequestSchema,
  RemountResponseSchema,
  RemountStatusSchema,
  TuneRequestSchema,
  TuneResponseSchema,
  WriteResponseSchema,
  type EnableRequest,
  type MountEntry,
  type MountList,
  type RemountStatus,
  type TuneRequest,
  type TuneResponse,
} from "../../schemas/secrets";
import { LeaderStatusSchema } from "../../schemas/leader";
import { encodeMount, trimMountPath } from "./normalize";
import { parseRequest, warningsOf, type WriteResult } from "./write";

const IN_USE = /path is already in use|existing mount at/i;
const NO_ENGINE = /no auth engine at|no matching mount/i;

/** What a remount's status reports: `in-progress`, then `success` or `failure`. */
export type RemountState = "in-progress" | "success" | "failure";

/** The migration a remount started, and what its status said last. */
export interface RemountResult {
  migrationId: string;
  /** `success` or `failure` once it ended; `in-progress` when waiting gave up first. */
  status: RemountState | string;
  warnings: string[];
}

/** True when a remount failed because the server has no `sys/remount` (a release before 1.10). */
export function isRemountUnsupported(e: unknown): e is ApiError {
  return isApiError(e, "unsupported");
}

/** A mount found in the mount list, with its path (no slashes). */
export interface FoundMount extends MountEntry {
  path: string;
}

/** True when `e` says an enable failed because something is already mounted at the path. */
export function isMountInUse(e: unknown): e is ApiError {
  return isApiError(e, "conflict") && e.serverErrors.some((m) => IN_USE.test(m));
}

/** Auth method mounts. */
export class AuthMounts {
  constructor(private readonly http: HttpCore) {}

  /**
   * Enables an auth method at `path`. Throws an ApiError with code `conflict` (see {@link isMountInUse})
   * when the path is taken: the service answers 400 or 409 with `path is already in use at <p>/`.
   */
  async enable(path: string, request: EnableRequest): Promise<WriteResult> {
    const body = parseRequest(EnableRequestSchema, request, "enable auth method");
    const p = "/v1/sys/auth/" + encodeMount(path);
    try {
      const res = await this.http.request({
        operation: "enable auth method",
        method: "POST",
        path: p,
        body,
        schema: WriteResponseSchema,
      });
      return { warnings: warningsOf(res.value) };
    } catch (e) {
      if (isApiError(e, "bad_request", "conflict") && e.serverErrors.some((m) => IN_USE.test(m))) {
        throw e.with({ code: "conflict", hint: `an auth method is already enabled at "${trimMountPath(path)}/"` });
      }
      throw e;
    }
  }

  /** Lists every auth mount, keyed `<path>/` as the service does. Needs no elevated rights. */
  async list(): Promise<MountList> {
    const res = await this.http.request({
      operation: "list auth methods",
      method: "GET",
      path: "/v1/sys/auth",
      schema: MountListSchema,
    });
    return res.value;
  }

  /**
   * True when the service runs as a cluster (`GET /v1/sys/leader` says `ha_enabled`; no token is sent): a
   * standby may then answer reads from a mount table that lags the active node's.
   */
  async clustered(): Promise<boolean> {
    const res = await this.http.request({
      operation: "read the leader status",
      method: "GET",
      path: "/v1/sys/leader",
      schema: LeaderStatusSchema,
      auth: false,
    });
    return res.value.ha_enabled === true;
  }

  /** Finds the mount at `path` through the mount list; resolves to undefined when nothing is mounted there. */
  async find(path: string): Promise<FoundMount | undefined> {
    const p = trimMountPath(path);
    const list = await this.list();
    const entry = list[p + "/"];
    return entry === undefined ? undefined : { ...entry, path: p };
  }

  /**
   * Reads the effective tune settings of a mount (TTLs in seconds, system defaults filled in). Falls back to
   * `/v1/sys/mounts/auth/<path>/tune`, which needs no sudo, when the first path is denied.
   */
  async readTune(path: string): Promise<TuneResponse> {
    const op = "read auth method tune";
    try {
      const res = await this.http.request({
        operation: op,
        method: "GET",
        path: `/v1/sys/auth/${encodeMount(path)}/tune`,
        schema: TuneResponseSchema,
      });
      return res.value;
    } catch (e) {
      if (!isApiError(e, "permission_denied")) throw e;
      const res = await this.http.request({
        operation: op,
        method: "GET",
        path: `/v1/sys/mounts/auth/${encodeMount(path)}/tune`,
        schema: TuneResponseSchema,
      });
      return res.value;
    }
  }

  /** Tunes a mount; only the fields present are changed. */
  async tune(path: string, request: TuneRequest): Promise<WriteResult> {
    const body = parseRequest(TuneRequestSchema, request, "tune auth method");
    const res = await this.http.request({
      operation: "tune auth method",
      method: "POST",
      path: `/v1/sys/auth/${encodeMount(path)}/tune`,
      body,
      schema: WriteResponseSchema,
      idempotent: true,
    });
    return { warnings: warningsOf(res.value) };
  }

  /**
   * Moves the auth method at `from` to `to` (`POST /v1/sys/remount`, servers 1.10 and later): its accessor,
   * config and roles move with it, and the tokens it issued are revoked. The move runs after the answer;
   * resolves to its migration ID. A server without the endpoint answers 404 (or 405): that becomes an
   * ApiError with code `unsupported` (see {@link isRemountUnsupported}). Never retried once sent.
   */
  async remount(from: string, to: string): Promise<{ migrationId: string; warnings: string[] }> {
    const body = parseRequest(
      RemountRequestSchema,
      { from: `auth/${trimMountPath(from)}`, to: `auth/${trimMountPath(to)}` },
      "remount auth method",
    );
    try {
      const res = await this.http.request({
        operation: "remount auth method",
        method: "POST",
        path: "/v1/sys/remount",
        body,
        schema: RemountResponseSchema,
      });
      return { migrationId: res.value.data.migration_id, warnings: warningsOf(res.value) };
    } catch (e) {
      if (isApiError(e, "not_found") || (isApiError(e, "bad_request") && e.status === 405)) {
        throw e.with({
          code: "unsupported",
          hint: "this server has no sys/remount (it needs release 1.10 or later, or OpenBao); nothing was moved",
        });
      }
      if (isApiError(e, "bad_request", "conflict") && e.serverErrors.some((m) => /already in use/i.test(m))) {
        throw e.with({ code: "conflict", hint: `something is already mounted at "${trimMountPath(to)}/"` });
      }
      throw e;
    }
  }

  /** Reads a remount's status; resolves to undefined when the server does not know the ID (404). */
  async remountStatus(migrationId: string): Promise<RemountStatus | undefined> {
    try {
      const res = await this.http.request({
        operation: "read remount status",
        method: "GET",
        path: `/v1/sys/remount/status/${encodeURIComponent(migrationId)}`,
        schema: RemountStatusSchema,
      });
      return res.value;
    } catch (e) {
      if (isApiError(e, "not_found")) return undefined;
      throw e;
    }
  }

  /**
   * Tells whether the server has `sys/remount`, from one read of the status of an ID it cannot know: a
   * release with remount answers 404 with no error text, one without answers 404 `unsupported path` (or
   * 405). Resolves to undefined when the answer says neither (denied, unreachable, anything else).
   */
  async hasRemount(): Promise<boolean | undefined> {
    try {
      await this.http.request({
        operation: "probe remount",
        method: "GET",
        path: `/v1/sys/remount/status/${randomUUID()}`,
        schema: RemountStatusSchema.optional(),
      });
      return true;
    } catch (e) {
      if (isApiError(e, "bad_request") && e.status === 405) return false;
      if (!isApiError(e, "not_found")) return undefined;
      if (e.serverErrors.length === 0) return true;
      return e.serverErrors.some((m) => /unsupported path/i.test(m)) ? false : undefined;
    }
  }

  /**
   * Remounts, then polls the status (every `pollMs`, doubling up to 2 s) until it is `success` or `failure`,
   * or until `timeoutMs` passed. Resolves to the last status seen; an ID the server forgot reads as
   * `unknown`, so the caller can look at the mount list.
   */
  async remountAndWait(
    from: string,
    to: string,
    options: { pollMs?: number; timeoutMs?: number } = {},
  ): Promise<RemountResult> {
    const { migrationId, warnings } = await this.remount(from, to);
    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    let wait = options.pollMs ?? 50;
    for (;;) {
      const s = await this.remountStatus(migrationId);
      const status = s === undefined ? "unknown" : s.migration_info.status;
      if (status !== "in-progress" || Date.now() >= deadline) return { migrationId, status, warnings };
      await new Promise((r) => setTimeout(r, Math.min(wait, Math.max(0, deadline - Date.now()))));
      wait = Math.min(wait * 2, 2000);
    }
  }

  /**
   * Disables the mount at `path`, which also deletes its config and roles and revokes its tokens.
   * Resolves to false when the service said nothing was mounted there (400 or 404); a real service may
   * also answer 204 for that, so true only means the path is free now.
   */
  async disable(path: string): Promise<boolean> {
    try {
      await this.http.request({
        operation: "disable auth method",
        method: "DELETE",
        path: "/v1/sys/auth/" + encodeMount(path),
        schema: WriteResponseSchema,
        // Deleting twice leaves the same: nothing at the path.
        idempotent: true,
      });
      return true;
    } catch (e) {
      if (isApiError(e, "not_found")) return false;
      if (isApiError(e, "bad_request") && e.serverErrors.some((m) => NO_ENGINE.test(m))) return false;
      throw e;
    }
  }
}
