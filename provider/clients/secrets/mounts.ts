/**
 * Auth method mounts (`/v1/sys/auth`): enable, find, tune, disable.
 */
import { ApiError, isApiError } from "../../errors";
import type { HttpCore } from "../../http/core";
import {
  EnableRequestSchema,
  MountListSchema,
  TuneRequestSchema,
  TuneResponseSchema,
  WriteResponseSchema,
  type EnableRequest,
  type MountEntry,
  type MountList,
  type TuneRequest,
  type TuneResponse,
} from "../../schemas/secrets";
import { encodeMount, trimMountPath } from "./normalize";
import { parseRequest, warningsOf, type WriteResult } from "./write";

const IN_USE = /path is already in use|existing mount at/i;
const NO_ENGINE = /no auth engine at|no matching mount/i;

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
      const res = await this.http.request({ operation: "enable auth method", method: "POST", path: p, body, schema: WriteResponseSchema });
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
    const res = await this.http.request({ operation: "list auth methods", method: "GET", path: "/v1/sys/auth", schema: MountListSchema });
    return res.value;
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
      const res = await this.http.request({ operation: op, method: "GET", path: `/v1/sys/auth/${encodeMount(path)}/tune`, schema: TuneResponseSchema });
      return res.value;
    } catch (e) {
      if (!isApiError(e, "permission_denied")) throw e;
      const res = await this.http.request({ operation: op, method: "GET", path: `/v1/sys/mounts/auth/${encodeMount(path)}/tune`, schema: TuneResponseSchema });
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
   * Disables the mount at `path`, which also deletes its config and roles and revokes its tokens.
   * Resolves to false when the service said nothing was mounted there (400 or 404); a real service may
   * also answer 204 for that, so true only means the path is free now.
   */
  async disable(path: string): Promise<boolean> {
    try {
      await this.http.request({ operation: "disable auth method", method: "DELETE", path: "/v1/sys/auth/" + encodeMount(path), schema: WriteResponseSchema });
      return true;
    } catch (e) {
      if (isApiError(e, "not_found")) return false;
      if (isApiError(e, "bad_request") && e.serverErrors.some((m) => NO_ENGINE.test(m))) return false;
      throw e;
    }
  }
}
