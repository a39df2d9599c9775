/**
 * Roles of an auth method mount (`/v1/auth/<mount>/role/<name>`): write, read, list, delete.
 * The service stores names lowercased, so lookups are case-insensitive.
 */
import { isApiError } from "../../errors";
import type { HttpCore } from "../../http/core";
import {
  RoleListSchema,
  RoleReadSchema,
  RoleWriteSchema,
  WriteResponseSchema,
  type RoleRead,
  type RoleWrite,
} from "../../schemas/secrets";
import { encodeSegment } from "../../http/path";
import { encodeMount } from "./normalize";
import { isUnrouted, parseRequest, warningsOf, type UnroutedOption, type WriteResult } from "./write";

/** Roles of one or more mounts. */
export class Roles {
  constructor(private readonly http: HttpCore) {}

  /**
   * Writes a role. The service merges: omitted keys keep their stored value and an explicit `[]` clears a
   * list, so send every field to make the stored role equal the request.
   */
  async write(mount: string, name: string, role: RoleWrite): Promise<WriteResult> {
    const body = parseRequest(RoleWriteSchema, role, "write role");
    const res = await this.http.request({
      operation: "write role",
      method: "POST",
      path: rolePath(mount, name),
      body,
      schema: WriteResponseSchema,
      idempotent: true,
    });
    return { warnings: warningsOf(res.value) };
  }

  /**
   * Reads a role; resolves to undefined when it does not exist, and on a 404 `no handler for route` (its
   * mount gone, or a standby whose mount table lags: see {@link isUnrouted}) unless `unroutedThrows`.
   */
  async read(mount: string, name: string, options: UnroutedOption = {}): Promise<RoleRead | undefined> {
    try {
      const res = await this.http.request({
        operation: "read role",
        method: "GET",
        path: rolePath(mount, name),
        schema: RoleReadSchema.optional(),
      });
      return res.value;
    } catch (e) {
      if (isApiError(e, "not_found") && !(options.unroutedThrows === true && isUnrouted(e))) return undefined;
      throw e;
    }
  }

  /**
   * Lists role names (lowercase); an empty list when there are none (the service answers 404 then). With
   * `unroutedThrows`, a 404 `no handler for route` (see {@link isUnrouted}) rejects instead.
   */
  async list(mount: string, options: UnroutedOption = {}): Promise<string[]> {
    try {
      const res = await this.http.request({
        operation: "list roles",
        method: "GET",
        path: `/v1/auth/${encodeMount(mount)}/role`,
        query: { list: "true" },
        schema: RoleListSchema.optional(),
      });
      return res.value?.keys ?? [];
    } catch (e) {
      if (isApiError(e, "not_found") && !(options.unroutedThrows === true && isUnrouted(e))) return [];
      throw e;
    }
  }

  /**
   * Deletes a role (a missing role on a live mount is a 204); resolves to false on a 404, which means the
   * mount is gone or a standby whose mount table lags answered (see {@link isUnrouted}). With
   * `unroutedThrows`, a 404 `no handler for route` rejects instead.
   */
  async delete(mount: string, name: string, options: UnroutedOption = {}): Promise<boolean> {
    try {
      await this.http.request({
        operation: "delete role",
        method: "DELETE",
        path: rolePath(mount, name),
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

function rolePath(mount: string, name: string): string {
  return `/v1/auth/${encodeMount(mount)}/role/${encodeSegment(name, "the role name")}`;
}
