import type { DevRequest, DevResponse } from "./types";

/**
 * Methods a route can declare. `LIST` is the secrets service's list verb; clients reach it with `GET ?list=true`
 * (node:http's parser rejects a literal LIST request line with 400, as the service's own client never sends one).
 */
export type RouteMethod = "GET" | "POST" | "PUT" | "DELETE" | "LIST" | "PATCH" | "HEAD";

/** Handles one matched request; throw `DevHttpError` for failures. */
export type RouteHandler = (req: DevRequest) => DevResponse | Promise<DevResponse>;

/**
 * Capabilities of which the token needs at least one. A function computes them per request (for example
 * from the body); returning `undefined` or `[]` means no capability is needed.
 */
export type CapabilityRule = string | readonly string[] | ((req: DevRequest) => string | readonly string[] | undefined);

/** Per-route options. */
export interface RouteOptions {
  /** Whether a token is required (default true). Secrets login routes set false. */
  readonly auth?: boolean;
  /** Capability check run by the core before the handler (any-of). */
  readonly capability?: CapabilityRule;
  /** Overrides the server-wide body size limit for this route. */
  readonly maxBodyBytes?: number;
  /** Accept a body of any content type (default: JSON or no declared type; others get 415). */
  readonly rawBody?: boolean;
}

/**
 * One row of a route table: a method (or several), a path pattern, the handler (given the table's
 * dependencies) and the route's options.
 */
export interface RouteRow<D> extends RouteOptions {
  readonly method: RouteMethod | readonly RouteMethod[];
  readonly path: string;
  readonly handler: (deps: D, req: DevRequest) => DevResponse | Promise<DevResponse>;
}

/** A registered route with its compiled matcher. */
export interface Route extends RouteOptions {
  readonly method: RouteMethod;
  readonly pattern: string;
  readonly handler: RouteHandler;
}

interface CompiledPath {
  readonly regex: RegExp;
  /** Parameter names in capture order; `true` marks a splat (`*name`) that spans segments. */
  readonly names: readonly (readonly [string, boolean])[];
}

interface PathEntry {
  readonly path: CompiledPath;
  readonly pattern: string;
  readonly byMethod: Map<string, Route>;
}

/** Outcome of a lookup: a route with decoded params, a path that exists under other methods, or nothing. */
export type RouteMatch =
  | { readonly kind: "found"; readonly route: Route; readonly params: Record<string, string> }
  | { readonly kind: "method-not-allowed"; readonly allowed: readonly string[] }
  | { readonly kind: "not-found" };

const ESCAPE = /[.*+?^${}()|[\]\\]/g;

/**
 * Compiles a path pattern: `:name` matches one segment, `*name` one or more segments (shortest match; the first registered pattern that matches wins).
 * Matching runs against the raw (still percent-encoded) path so an encoded `/` (%2F) stays inside its segment.
 */
export function compilePath(pattern: string): CompiledPath {
  const names: (readonly [string, boolean])[] = [];
  const source = pattern
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) {
        names.push([segment.slice(1), false]);
        return "([^/]+)";
      }
      if (segment.startsWith("*")) {
        names.push([segment.slice(1), true]);
        return "(.+?)";
      }
      return segment.replace(ESCAPE, "\\$&");
    })
    .join("/");
  return { regex: new RegExp(`^${source}$`), names };
}

/** Decodes one percent-encoded segment; malformed encodings are kept as sent. */
function decodeSegment(raw: string): string {
  if (raw.indexOf("%") === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Returns the decoded params of `rawPath` if it matches, else undefined. */
export function matchPath(path: CompiledPath, rawPath: string): Record<string, string> | undefined {
  const m = path.regex.exec(rawPath);
  if (m === null) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < path.names.length; i++) {
    const entry = path.names[i];
    const raw = m[i + 1];
    if (entry === undefined || raw === undefined) continue;
    const [name, splat] = entry;
    params[name] = splat ? raw.split("/").map(decodeSegment).join("/") : decodeSegment(raw);
  }
  return params;
}

/**
 * Collects a service's routes. Patterns are compiled once at registration; a path pattern registered under
 * several methods shares one matcher, so a lookup costs one regex test per distinct pattern.
 */
export class Router {
  private readonly entries: PathEntry[] = [];
  private readonly byPattern = new Map<string, PathEntry>();

  /** Registers a handler for a method (or several) and a path pattern. */
  on(
    method: RouteMethod | readonly RouteMethod[],
    pattern: string,
    handler: RouteHandler,
    options: RouteOptions = {},
  ): this {
    let entry = this.byPattern.get(pattern);
    if (entry === undefined) {
      entry = { path: compilePath(pattern), pattern, byMethod: new Map() };
      this.byPattern.set(pattern, entry);
      this.entries.push(entry);
    }
    for (const m of typeof method === "string" ? [method] : method) {
      if (entry.byMethod.has(m)) throw new TypeError(`route ${m} ${pattern} is registered twice`);
      entry.byMethod.set(m, { ...options, method: m, pattern, handler });
    }
    return this;
  }

  /**
   * Registers the rows of a route table in order (the order decides between patterns that match the same
   * path, and the order of methods a 405 lists).
   */
  table<D>(deps: D, rows: readonly RouteRow<D>[]): this {
    for (const { method, path, handler, ...options } of rows)
      this.on(method, path, (req) => handler(deps, req), options);
    return this;
  }

  /** Registers a GET route. */
  get(pattern: string, handler: RouteHandler, options?: RouteOptions): this {
    return this.on("GET", pattern, handler, options);
  }

  /** Registers a POST route; PUT requests reach it too (both services treat them alike). */
  post(pattern: string, handler: RouteHandler, options?: RouteOptions): this {
    return this.on("POST", pattern, handler, options);
  }

  /** Registers a DELETE route. */
  delete(pattern: string, handler: RouteHandler, options?: RouteOptions): this {
    return this.on("DELETE", pattern, handler, options);
  }

  /** Registers a LIST route (secrets service; reached by `LIST` or `GET ?list=true`). */
  list(pattern: string, handler: RouteHandler, options?: RouteOptions): this {
    return this.on("LIST", pattern, handler, options);
  }

  /** Returns the registered routes (for diagnostics and tests). */
  routes(): Route[] {
    const out: Route[] = [];
    for (const e of this.entries) for (const r of e.byMethod.values()) out.push(r);
    return out;
  }

  /** Finds the route for a method and raw path; PUT falls back to POST and HEAD to GET. */
  match(method: string, rawPath: string): RouteMatch {
    let allowed: string[] | undefined;
    for (const entry of this.entries) {
      const params = matchPath(entry.path, rawPath);
      if (params === undefined) continue;
      const route =
        entry.byMethod.get(method) ??
        (method === "PUT" ? entry.byMethod.get("POST") : undefined) ??
        (method === "HEAD" ? entry.byMethod.get("GET") : undefined);
      if (route !== undefined) return { kind: "found", route, params };
      allowed = (allowed ?? []).concat([...entry.byMethod.keys()]);
    }
    return allowed === undefined ? { kind: "not-found" } : { kind: "method-not-allowed", allowed };
  }
}
