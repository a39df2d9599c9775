import { randomUUID } from "node:crypto";
import { PolicyStore } from "./acl";
import { Directory, type DirectoryState } from "./directory";
import { defaultInstance, restoreInstance, type FakeInstance } from "./instance";
import { restoreConfig, type MethodConfig } from "./method-config";
import { tokenMount, type AuthMount } from "./mounts";
import { restoreRole, type Role } from "./roles";

/** Storage of one enabled cloud auth method: its config and roles (keyed by lowercased name). */
export interface MethodData {
  config: MethodConfig | undefined;
  readonly roles: Map<string, Role>;
}

/** Version of the module's persisted layout. */
const SNAPSHOT_VERSION = 1;

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
      version: SNAPSHOT_VERSION,
      mounts: [...this.mounts.values()],
      methods: [...this.methods].map(([accessor, m]) => ({ accessor, config: m.config ?? null, roles: [...m.roles] })),
      policies: this.policies.snapshot(),
      entities: [...this.entities],
      instance: this.instance,
      directory: this.directory.snapshot(),
    };
  }

  /** Restores state written by `snapshot`; throws for an unknown layout, skips malformed entries. */
  restore(data: unknown): void {
    if (!isObject(data) || data.version !== SNAPSHOT_VERSION) {
      throw new Error(`secrets service state has an unknown layout (expected version ${SNAPSHOT_VERSION})`);
    }
    if (Array.isArray(data.mounts)) {
      this.mounts.clear();
      for (const m of data.mounts) if (isMount(m)) this.mounts.set(m.path, m);
      if (!this.mounts.has("token")) this.mounts.set("token", tokenMount());
    }
    if (Array.isArray(data.methods)) {
      this.methods.clear();
      for (const entry of data.methods) {
        if (!isObject(entry) || typeof entry.accessor !== "string") continue;
        const roles = new Map<string, Role>();
        if (Array.isArray(entry.roles)) {
          for (const pair of entry.roles) {
            if (!Array.isArray(pair) || typeof pair[0] !== "string") continue;
            const role = restoreRole(pair[1]);
            if (role !== undefined) roles.set(pair[0], role);
          }
        }
        this.methods.set(entry.accessor, { config: restoreConfig(entry.config), roles });
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

function isMount(v: unknown): v is AuthMount {
  return (
    isObject(v) &&
    typeof v.path === "string" &&
    typeof v.type === "string" &&
    typeof v.accessor === "string" &&
    isObject(v.config) &&
    typeof v.config.default_lease_ttl === "number" &&
    typeof v.config.max_lease_ttl === "number"
  );
}
