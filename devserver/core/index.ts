/**
 * Devserver core: hosts the secrets service and the scheduler in one process, each on its own loopback
 * listener (node:http, optionally TLS), and gives service modules routing, auth, errors, blocking queries,
 * persistence, fault injection and a request log.
 *
 * ## Writing a service module
 *
 * ```ts
 * export function createSchedulerService(): ServiceModule {
 *   const jobs = new Map<string, Job>();
 *   return {
 *     name: "scheduler",
 *     routes(r, ctx) {
 *       r.get("/v1/job/:job_id", async (req) => {
 *         const index = await ctx.blockingQuery(req, () => jobs.get(req.params.job_id ?? "")?.ModifyIndex ?? 0);
 *         const job = jobs.get(req.params.job_id ?? "");
 *         if (!job) throw new DevHttpError(404, "job not found");
 *         return { json: job, headers: ctx.queryMeta(index) };
 *       }, { capability: "namespace:read-job" });
 *     },
 *     snapshot: () => [...jobs],
 *     restore: (data) => { ... validate, then fill jobs ... },
 *   };
 * }
 * ```
 *
 * - Routes: `r.get/post/delete/list(pattern, handler, options)` or `r.on(method(s), ...)`. `:name` is one
 *   path segment, decoded after splitting (so `a%2Fb` gives `a/b`); `*name` spans segments (shortest match).
 *   The first registered pattern that matches wins. PUT reaches POST routes, HEAD reaches GET routes, and on
 *   the secrets service `GET ?list=true` reaches LIST routes (node:http cannot parse a literal LIST verb).
 *   A trailing `/` is ignored.
 * - Unknown path: 404 (secrets `{"errors":[]}`, scheduler `404 page not found`). Known path, other method:
 *   405 (secrets `{"errors":[]}`, scheduler `Invalid method`), with an `Allow` header.
 * - Handlers return `{status?, json?, text?, raw?, headers?}`; no body and no status means 204.
 *   Throw `DevHttpError(status, message)`; the core renders it in the service's style (secrets
 *   `{"errors":[message]}`, scheduler `text/plain`). Any other thrown error becomes a 500 with its message.
 * - Body: `req.raw` (Buffer) and `req.json()` (parsed once; undefined for an empty body; 400 on bad JSON).
 *   Bodies over `maxBodyBytes` (server option, or per route) get 413 and the connection is closed.
 * - Auth: the secrets service always checks tokens; the scheduler only with `acl` (default true). Routes
 *   declare `auth: false` (login) and `capability` (any-of, or a function of the request). The token comes
 *   from the configured header or `Authorization: Bearer`. Missing/invalid token: 403 (secrets
 *   `permission denied`; scheduler `ACL token not found` for an unknown token, `Permission denied` with
 *   none). Missing capability: 403 (secrets `1 error occurred:\n\t* permission denied\n\n`; scheduler
 *   `Permission denied`). Inside handlers use `req.can()` / `req.requireCapability()` for extra checks.
 *   Tokens carry capabilities and policies; `ServiceModule.policyCapabilities(policy)` maps policies.
 *   Namespaces: scheduler `?namespace=` (default `default`), secrets namespace header (default "");
 *   a token with `namespaces` is limited to them.
 * - Blocking queries: `ctx.nextIndex()` on every state change; `ctx.blockingQuery(req, indexFn)` honours
 *   `?index=&wait=` (Go durations, capped at 300s; 400 `Invalid index` / `Invalid wait time`);
 *   `ctx.queryMeta(index, nextToken?)` returns the index/known-leader/last-contact/next-token headers under
 *   the configured names.
 * - Persistence (`persistPath`): modules provide `snapshot()`/`restore(data)`; the core stores them with the
 *   index and tokens, writes atomically after state changes (debounced) and on close.
 * - Tests: `server.faults.add({...})`, `server.requestLog`/`resetLog()`, `server.stats()` (accepted
 *   connections per service), `server.createToken(service, spec)`, `server.context(service)`.
 */
export { IndexClock, MAX_WAIT_MS, parseBlockingQuery, parseGoDuration, type BlockingParams } from "./blocking";
export { DevHttpError, multiErrorText, renderError, type ServiceName } from "./errors";
export { FaultInjector, LEADER_CHANGE, type FaultHandle, type FaultSpec } from "./faults";
export { REAL_HEADER_NAMES, SPEC_HEADER_NAMES } from "./names";
export { writeJsonAtomic } from "./persist";
export { createTestCertificates, type PemPair, type TestCertificates } from "./testcerts";
export {
  Router,
  compilePath,
  matchPath,
  type CapabilityRule,
  type Route,
  type RouteHandler,
  type RouteMatch,
  type RouteMethod,
  type RouteOptions,
  type RouteRow,
} from "./router";
export {
  isLoopbackHost,
  startServiceHost,
  type DevServer,
  type DevTlsOptions,
  type RequestLogEntry,
  type ServiceEndpointOptions,
  type ServiceHostOptions,
  type ServiceStats,
} from "./server";
export { TokenStore, tokenAllows, type MintedToken, type TokenRecord, type TokenSpec } from "./tokens";
export type { ServiceModule } from "./module";
export type { DevRequest, DevResponse, ServiceContext, ServiceHeaderNames } from "./types";
