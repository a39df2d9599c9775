import { randomUUID } from "node:crypto";
import { ignoreWarnings, layout, migrateLayout, type RestoreWarn } from "../../core/migrate";
import { PolicyStore } from "./acl";
import { Directory, type DirectoryState } from "./directory";
import { defaultInstance, restoreInstance, type FakeInstance } from "./instance";
import { restoreConfig, type MethodConfig } from "./method-config";
import { restoreMount, tokenMount, type AuthMount } from "./mounts";
import { restoreRole, type Role } from "./roles";

/** Storage of one enabled cloud auth method: its config and roles (keyed by lowercased name). */
export interface MethodData {
  config: MethodConfig | undefined;
  readonly roles: Map<string, Role>;
}

/** The module's persisted layout (see core/migrate.ts): version 1 since the first release. */
const SECRETS_LAYOUT = layout("secrets service state", 1, []);

/** All state of the secrets service module. */
export class SecretsState {
  readonly mounts = new Map<string, AuthMount>();
  /** Keyed by mount accessor, so a disable + re-enable at the same path starts empty. */
  readonly methods = new Map<string, MethodData>();
  readonly policies = new PolicyStore();
  /** Entity ids by `<mount accessor>:<object id>`. */
  readonly entities = new Map<string, string>();
  instance: FakeInstance;
  directory: Directory;

  constructor(instance?: FakeInstance) {
    const token = tokenMount();
    this.mounts.set(token.path, token);
    this.instance = instance ?? defaultInstance();
    this.directory = new Directory();
  }

  /** Returns (creating) the storage of a mount. */
  method(mount: AuthMount): MethodData {
    let m = this.methods.get(mount.accessor);
    if (m === undefined) {
      m = { config: undefined, roles: new Map() };
      this.methods.set(mount.accessor, m);
    }
    return m;
  }

  /** Returns the entity id of an identity logging in through a mount (created on first login). */
  entityFor(mountAccessor: string, objectId: string): string {
    const key = `${mountAccessor}:${objectId}`;
    let id = this.entities.get(key);
    if (id === undefined) {
      id = randomUUID();
      this.entities.set(key, id);
    }
    return id;
  }

  /** Returns JSON-serialisable state. */
  snapshot(): unknown {
    return {
      version: SECRETS_LAYOUT.version,
      mounts: [...this.mounts.values()],
      methods: [...this.methods].map(([accessor, m]) => ({ accessor, config: m.config ?? null, roles: [...m.roles] })),
      policies: this.policies.snapshot(),
      entities: [...this.entities],
      instance: this.instance,
      directory: this.directory.snapshot(),
    };
  }

  /**
   * Restores state written by `snapshot` of this or an older layout (a record written before one of its fields
   * existed gets that field's default); throws for a newer layout; a malformed record is skipped and reported.
   */
  restore(persisted: unknown, warn: RestoreWarn = ignoreWarnings): void {
    const data = migrateLayout(SECRETS_LAYOUT, persisted, warn);
    if (Array.isArray(data.mounts)) {
      this.mounts.clear();
      for (const m of data.mounts) {
        const mount = restoreMount(m);
        if (mount !== undefined) this.mounts.set(mount.path, mount);
        else warn(`secrets: a malformed auth mount was skipped (${describe(m, "path")})`);
      }
      if (!this.mounts.has("token")) this.mounts.set("token", tokenMount());
    }
    if (Array.isArray(data.methods)) {
      this.methods.clear();
      for (const entry of data.methods) {
        if (!isObject(entry) || typeof entry.accessor !== "string") {
          warn("secrets: a malformed auth method's storage was skipped");
          continue;
        }
        const roles = new Map<string, Role>();
        if (Array.isArray(entry.roles)) {
          for (const pair of entry.roles) {
            const role = Array.isArray(pair) && typeof pair[0] === "string" ? restoreRole(pair[1]) : undefined;
            if (role !== undefined) roles.set(pair[0] as string, role);
            else warn(`secrets: a malformed role of mount accessor ${entry.accessor} was skipped`);
          }
        }
        const stored = entry.config ?? undefined;
        const config = stored === undefined ? undefined : restoreConfig(stored);
        if (stored !== undefined && config === undefined)
          warn(`secrets: the malformed config of mount accessor ${entry.accessor} was skipped`);
        this.methods.set(entry.accessor, { config, roles });
      }
    }
    if (isObject(data.policies)) this.policies.restore(data.policies);
    if (Array.isArray(data.entities)) {
      this.entities.clear();
      for (const pair of data.entities) {
        if (Array.isArray(pair) && typeof pair[0] === "string" && typeof pair[1] === "string")
          this.entities.set(pair[0], pair[1]);
      }
    }
    const inst = restoreInstance(data.instance);
    if (inst !== undefined) this.instance = inst;
    if (isObject(data.directory) && typeof data.directory.kid === "string" && isObject(data.directory.privateJwk)) {
      try {
        this.directory = new Directory(data.directory as unknown as DirectoryState);
      } catch {
        // An unreadable key is replaced by the fresh one; tokens minted before the restart stop verifying.
      }
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Names a skipped record by one of its string fields (never a value that could be secret). */
function describe(v: unknown, key: string): string {
  return isObject(v) && typeof v[key] === "string" ? `${key} ${JSON.stringify(v[key])}` : "no path";
}
