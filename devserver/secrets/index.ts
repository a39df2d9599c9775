/**
 * Secrets service module of the devserver (secrets-cloud-auth.md; where it does not show something, the real
 * service as reference/secrets-service.md describes it), written independently of the client in provider/.
 *
 * Routes on the secrets listener (token header from the core, `X-Svc-Token` by default):
 * - `GET /v1/sys/auth` (read on `sys/auth`); `GET|POST|DELETE /v1/sys/auth/<path>` (sudo);
 *   `GET|POST /v1/sys/auth/<path>/tune` (sudo); `GET|POST /v1/sys/mounts/auth/<path>/tune` (no sudo);
 *   `POST /v1/sys/remount` (sudo) and `GET /v1/sys/remount/status/<migration id>` (see api/remount.ts).
 * - `GET|POST|DELETE /v1/auth/<mount>/config`; `LIST /v1/auth/<mount>/role` (send `GET ?list=true`);
 *   `GET|POST|DELETE /v1/auth/<mount>/role/<name>`; `POST /v1/auth/<mount>/login` (no token).
 * - `GET /v1/auth/token/lookup-self`, `POST /v1/auth/token/revoke-self`.
 * - ACL policies: `GET|POST|DELETE /v1/sys/policies/acl/<name>`, `LIST /v1/sys/policies/acl`, legacy
 *   `/v1/sys/policy/<name>`; `POST /v1/sys/capabilities-self`.
 *
 * Permissions follow the real ACL model: tokens carry policy names (see `putPolicy`) or direct grants
 * `"<capability>:<path>"`; the root token passes everything.
 *
 * A second loopback listener plays the cloud (see `CloudControls`): the metadata service at
 * `<cloud.url>/metadata/...`, the directory's discovery at `<cloud.url>/<tenant>/.well-known/openid-configuration`
 * and key set at `<cloud.url>/common/discovery/keys`, and an HTTP control API under `<cloud.url>/_control/`
 * (root token required): `POST /_control/token {claims, foreignKey?, alg?, kid?}`, `GET|PUT /_control/instance`,
 * `POST|DELETE /_control/metadata-faults {status, times?, endpoint?, retryAfter?, body?}`.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isLoopbackHost } from "../core/listener";
import { presentedToken } from "../core/request";
import type { ServiceModule } from "../core/module";
import type { ServiceContext } from "../core/types";
import { registerAuthRoutes } from "./api/auth-routes";
import { CloudListener, type MetadataFaultHandle, type MetadataFaultSpec, type MetadataLogEntry } from "./api/cloud";
import { issuerFor, type PublicJwk, type SignOptions } from "./state/directory";
import {
  configureInstance,
  identityTokenClaims,
  selectIdentity,
  type FakeInstance,
  type FakeInstanceInput,
  type IdentitySelector,
} from "./state/instance";
import { SYSTEM_DEFAULT_LEASE_TTL, SYSTEM_MAX_LEASE_TTL, type MountLimits } from "./state/mounts";
import { secretsRelease } from "./state/release";
import { SecretsState } from "./state/state";
import { registerSysRoutes } from "./api/sys-routes";

export type { FakeInstance, FakeInstanceInput } from "./state/instance";
export type { MetadataFaultHandle, MetadataFaultSpec, MetadataLogEntry } from "./api/cloud";
export type { SignOptions } from "./state/directory";

/** Options of the secrets service module. */
export interface SecretsServiceOptions {
  /** Type name of the cloud auth method (default `cloud`; `azure` to mimic the real service). */
  readonly methodType?: string;
  /** Loopback address of the cloud listener (metadata service + directory); default 127.0.0.1. */
  readonly cloudHost?: string;
  /** Port of the cloud listener (default 0: any free port). */
  readonly cloudPort?: number;
  /** Initial fake instance (applied over a fresh default: plain VM, system-assigned identity). */
  readonly instance?: FakeInstanceInput;
  /** Default lease TTL of the service in seconds (default 2764800 = 768h). */
  readonly systemDefaultLeaseTtl?: number;
  /** Max lease TTL of the service in seconds (default 2764800 = 768h). */
  readonly systemMaxLeaseTtl?: number;
  /**
   * Serve `sys/remount` (default true). False plays a release before 1.10: `POST /v1/sys/remount` answers
   * 404 `unsupported path`.
   */
  readonly remount?: boolean;
  /** Milliseconds a remount stays `in-progress` before the move runs (default 0). */
  readonly remountDelayMs?: number;
  /**
   * Accept workload-identity settings (`identity_token_audience`, `identity_token_ttl`) on the method
   * config, as the enterprise edition does (default false: the community edition refuses them with 400).
   */
  readonly workloadIdentity?: boolean;
  /**
   * Play another server than Vault (see state/release.ts): `openbao-2.6.2` is OpenBao 2.6.2 with the
   * openbao-plugins azure plugin (a catalog without plugin versions, workload-identity fields ignored).
   */
  readonly release?: string;
}

/** Options of `CloudControls.mintToken`. */
export interface MintOptions extends SignOptions {
  /** Audience used for the default claims (default `https://management.azure.com/`). */
  readonly resource?: string;
  /** Which of the instance's identities the default claims describe (default: as the metadata service picks). */
  readonly identity?: IdentitySelector;
}

/** Test and tooling controls of the fake cloud (directory, metadata service, instance). */
export interface CloudControls {
  /** Base URL of the cloud listener. */
  readonly url: string;
  /** Base URL of the metadata service (`<url>/metadata/...`); same listener as `url`. */
  readonly metadataUrl: string;
  /** Authority URL of the directory (`<url>/`): discovery at `<authority><tenant>/.well-known/openid-configuration`. */
  readonly authorityUrl: string;
  /** Returns the current fake instance. */
  instance(): FakeInstance;
  /** Changes the fake instance; resolves to the new one. */
  configureInstance(input: FakeInstanceInput): FakeInstance;
  /** Returns the issuer the directory writes for a tenant (`https://sts.windows.net/<tenant>/`). */
  issuer(tenant?: string): string;
  /**
   * Mints a directory token: the claims the metadata service would issue for the instance (audience
   * `options.resource`), overridden by `claims` (a claim set to undefined is removed). Options sign with a
   * foreign key, another algorithm or another `kid`.
   */
  mintToken(claims?: Readonly<Record<string, unknown>>, options?: MintOptions): Promise<string>;
  /** Returns the published key set. */
  jwks(): { keys: PublicJwk[] };
  /** Fails the next metadata requests (see `MetadataFaultSpec`). */
  failMetadata(spec: MetadataFaultSpec): MetadataFaultHandle;
  /** Removes all metadata faults. */
  clearMetadataFaults(): void;
  /** Returns the metadata requests answered so far, oldest first. */
  metadataLog(): readonly MetadataLogEntry[];
  /** Clears the metadata request log. */
  resetMetadataLog(): void;
}

/** Controls of the secrets service module for tests and tooling. */
export interface SecretsControls {
  readonly cloud: CloudControls;
  /** Writes an ACL policy: HCL/JSON text, or a map of path to capabilities. */
  putPolicy(name: string, policy: string | Readonly<Record<string, readonly string[]>>): void;
  /** Returns the method type name the service accepts (`cloud` by default). */
  readonly methodType: string;
}

/** The secrets service module with access to its controls. */
export interface SecretsServiceModule extends ServiceModule {
  /** Resolves to the controls once the cloud listener is up (call after the devserver started). */
  controls(): Promise<SecretsControls>;
}

const byContext = new WeakMap<ServiceContext, SecretsServiceModule>();

/**
 * Resolves to the secrets service controls of a running devserver (`startDevServer()` result or anything
 * with `context("secrets")`). Rejects when the devserver does not host this module.
 */
export function secretsControls(server: { context(service: "secrets"): ServiceContext }): Promise<SecretsControls> {
  const module = byContext.get(server.context("secrets"));
  if (module === undefined) return Promise.reject(new Error("this devserver does not host the secrets service module"));
  return module.controls();
}

function policyText(policy: string | Readonly<Record<string, readonly string[]>>): string {
  if (typeof policy === "string") return policy;
  const path: Record<string, { capabilities: readonly string[] }> = {};
  for (const [p, caps] of Object.entries(policy)) path[p] = { capabilities: caps };
  return JSON.stringify({ path });
}

/**
 * Creates the secrets service module: the auth-method mount table, the cloud auth method (config, roles,
 * login), ACL policies, and a second loopback listener that plays the cloud's metadata service and
 * directory. Read `controls()` / `secretsControls(server)` for the cloud listener's URL and test hooks.
 */
export function createSecretsService(options: SecretsServiceOptions = {}): SecretsServiceModule {
  const cloudHost = options.cloudHost ?? "127.0.0.1";
  // Its token endpoint needs no authentication: off loopback it would hand identity tokens to the network.
  if (!isLoopbackHost(cloudHost)) {
    throw new Error(
      `refusing cloudHost ${JSON.stringify(cloudHost)}, which is not a loopback address: the metadata service's token endpoint needs no token`,
    );
  }
  const limits: MountLimits = {
    methodType: options.methodType ?? "cloud",
    systemDefaultLeaseTtl: options.systemDefaultLeaseTtl ?? SYSTEM_DEFAULT_LEASE_TTL,
    systemMaxLeaseTtl: options.systemMaxLeaseTtl ?? SYSTEM_MAX_LEASE_TTL,
    release: secretsRelease(options.release, options.workloadIdentity === true),
  };
  const state = new SecretsState();
  if (options.instance !== undefined) state.instance = configureInstance(state.instance, options.instance);
  let context: ServiceContext | undefined;
  let listener: CloudListener | undefined;
  let started: Promise<SecretsControls> | undefined;

  const isRootToken = (headers: IncomingHttpHeaders): boolean => {
    if (context === undefined) return false;
    const value = presentedToken(headers, context.headerNames.token.toLowerCase());
    return value !== undefined && context.tokens.lookup(value)?.root === true;
  };

  const buildControls = (cloud: CloudListener): SecretsControls => {
    const cloudControls: CloudControls = {
      url: cloud.url,
      metadataUrl: cloud.url,
      authorityUrl: `${cloud.url}/`,
      instance: () => state.instance,
      configureInstance: (input) => {
        state.instance = configureInstance(state.instance, input);
        context?.markDirty();
        return state.instance;
      },
      issuer: (tenant) => issuerFor(tenant ?? state.instance.tenantId),
      mintToken: async (claims = {}, opts = {}) => {
        const inst = state.instance;
        const picked = selectIdentity(inst, opts.identity ?? {});
        const identity = "error" in picked ? { kind: "system" as const, principalId: "", clientId: "" } : picked;
        const base = identityTokenClaims(
          inst,
          identity,
          opts.resource ?? "https://management.azure.com/",
          Math.floor(Date.now() / 1000),
        );
        return state.directory.sign({ ...base, ...claims }, opts);
      },
      jwks: () => state.directory.jwks(),
      failMetadata: (spec) => cloud.addFault(spec),
      clearMetadataFaults: () => cloud.clearFaults(),
      metadataLog: () => cloud.log,
      resetMetadataLog: () => cloud.resetLog(),
    };
    return {
      cloud: cloudControls,
      methodType: limits.methodType,
      putPolicy: (name, policy) => {
        state.policies.put(name, policyText(policy));
        context?.nextIndex();
      },
    };
  };

  const module: SecretsServiceModule = {
    name: "secrets",
    routes(router, ctx) {
      context = ctx;
      byContext.set(ctx, module);
      const deps = { state, ctx, limits };
      registerSysRoutes(router, deps, { enabled: options.remount !== false, delayMs: options.remountDelayMs ?? 0 });
      registerAuthRoutes(router, deps);
      const cloud = new CloudListener(
        {
          get directory() {
            return state.directory;
          },
          instance: () => state.instance,
          configureInstance: (input) => {
            state.instance = configureInstance(state.instance, input);
            ctx.markDirty();
            return state.instance;
          },
          isRootToken,
        },
        cloudHost,
      );
      listener = cloud;
      started = cloud.listen(cloudHost, options.cloudPort ?? 0).then(() => buildControls(cloud));
      // Surface a listen failure through controls(), not as an unhandled rejection.
      started.catch(() => undefined);
    },
    controls() {
      return started ?? Promise.reject(new Error("the secrets service has not been started (routes() not called yet)"));
    },
    snapshot: () => state.snapshot(),
    restore: (data, warn) => state.restore(data, warn),
    policyCapabilities: (policy) => state.policies.grants(policy),
    close: async () => {
      await listener?.close();
    },
  };
  return module;
}
