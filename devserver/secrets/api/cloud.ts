import type * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { DevHttpError } from "../../core/errors";
import { checkJsonBody, createGuardedServer } from "../../core/listener";
import type { Directory, SignOptions } from "../state/directory";
import {
  computeMetadata,
  identityTokenClaims,
  selectIdentity,
  type FakeInstance,
  type FakeInstanceInput,
} from "../state/instance";

/**
 * The devserver's cloud side on its own loopback listener: the instance metadata service
 * (`/metadata/identity/oauth2/token`, `/metadata/instance`) and the directory's OIDC discovery and key set
 * (`/<tenant>/.well-known/openid-configuration`, `/common/discovery/keys`), plus an HTTP control API for
 * out-of-process use (`/_control/...`, root token of the secrets service required).
 */

const NEWEST_VERSIONS = ["2023-07-01", "2023-03-01", "2023-01-01"];
const API_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** A metadata-service fault: the next `times` matching requests get `status` (and `body`). */
export interface MetadataFaultSpec {
  readonly status: number;
  /** How many requests to fail (default 1). */
  readonly times?: number;
  /** Which endpoint: `token`, `instance` or `any` (default). */
  readonly endpoint?: "token" | "instance" | "any";
  readonly body?: Readonly<Record<string, unknown>>;
  /** Seconds for a `Retry-After` header. */
  readonly retryAfter?: number;
}

/** A registered metadata fault; `hits` counts the requests it answered. */
export interface MetadataFaultHandle {
  readonly hits: number;
  readonly remaining: number;
  remove(): void;
}

/** One request the metadata listener answered (queries never contain secrets; tokens are not logged). */
export interface MetadataLogEntry {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
  readonly fault?: true;
  /** Value of the `Metadata` header as sent (undefined when absent). */
  readonly metadataHeader?: string;
}

/** What the cloud listener needs from the secrets module. */
export interface CloudWorld {
  readonly directory: Directory;
  instance(): FakeInstance;
  configureInstance(input: FakeInstanceInput): FakeInstance;
  /** Returns whether a presented token is the secrets service's root token. */
  isRootToken(headers: http.IncomingHttpHeaders): boolean;
}

class Fault implements MetadataFaultHandle {
  hits = 0;
  remaining: number;
  constructor(
    readonly spec: MetadataFaultSpec,
    private readonly owner: CloudListener,
  ) {
    this.remaining = spec.times ?? 1;
  }
  remove(): void {
    this.owner.removeFault(this);
  }
}

interface Reply {
  readonly status: number;
  readonly json: unknown;
  readonly headers?: Record<string, string>;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Runs the cloud listener. */
export class CloudListener {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private faults: Fault[] = [];
  private logEntries: MetadataLogEntry[] = [];
  private baseUrl = "";

  constructor(
    private readonly world: CloudWorld,
    host = "127.0.0.1",
  ) {
    this.server = createGuardedServer({
      hostNames: [host],
      renderError: (status, message) => ({
        contentType: "application/json; charset=utf-8",
        body: JSON.stringify({
          error: status === 500 ? "server_error" : "invalid_request",
          error_description: message,
        }),
      }),
      onRequest: (req, res) => this.handle(req, res),
    });
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
  }

  /** Starts listening; resolves to the base URL. */
  listen(host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        const addr = this.server.address() as AddressInfo;
        const shown = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
        this.baseUrl = `http://${shown}:${addr.port}`;
        resolve(this.baseUrl);
      });
    });
  }

  /** Returns the base URL (empty before `listen` resolves). */
  get url(): string {
    return this.baseUrl;
  }

  /** Returns the answered metadata requests, oldest first. */
  get log(): readonly MetadataLogEntry[] {
    return this.logEntries;
  }

  /** Clears the request log. */
  resetLog(): void {
    this.logEntries = [];
  }

  /** Adds a metadata fault. */
  addFault(spec: MetadataFaultSpec): MetadataFaultHandle {
    const f = new Fault(spec, this);
    this.faults.push(f);
    return f;
  }

  /** Removes one fault. */
  removeFault(handle: MetadataFaultHandle): void {
    this.faults = this.faults.filter((f) => f !== handle);
  }

  /** Removes all faults. */
  clearFaults(): void {
    this.faults = [];
  }

  /** Stops the listener. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      for (const s of this.sockets) s.destroy();
    });
  }

  private takeFault(endpoint: "token" | "instance"): Fault | undefined {
    const f = this.faults.find(
      (x) => x.remaining > 0 && (x.spec.endpoint ?? "any") !== (endpoint === "token" ? "instance" : "token"),
    );
    if (f === undefined) return undefined;
    f.remaining -= 1;
    f.hits += 1;
    if (f.remaining <= 0) this.removeFault(f);
    return f;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://cloud.invalid");
    let reply: Reply;
    let fault = false;
    try {
      if (url.pathname.startsWith("/metadata/")) {
        const endpoint = url.pathname.startsWith("/metadata/identity/") ? "token" : "instance";
        const f = this.takeFault(endpoint);
        if (f !== undefined) {
          fault = true;
          reply = {
            status: f.spec.status,
            json: f.spec.body ?? { error: "service_unavailable", error_description: "injected fault" },
            ...(f.spec.retryAfter !== undefined ? { headers: { "retry-after": String(f.spec.retryAfter) } } : {}),
          };
        } else {
          reply = await this.metadata(req, url);
        }
        const header = req.headers.metadata;
        this.logEntries.push({
          method: req.method ?? "GET",
          path: url.pathname,
          query: url.search.replace(/^\?/, ""),
          status: reply.status,
          ...(fault ? { fault: true as const } : {}),
          ...(typeof header === "string" ? { metadataHeader: header } : {}),
        });
      } else if (url.pathname.startsWith("/_control/")) {
        reply = await this.control(req, url);
      } else {
        reply = this.directoryRoute(url);
      }
    } catch (err) {
      reply =
        err instanceof DevHttpError
          ? { status: err.status, json: { error: "invalid_request", error_description: err.message } }
          : {
              status: 500,
              json: { error: "server_error", error_description: err instanceof Error ? err.message : String(err) },
            };
    }
    const body = JSON.stringify(reply.json);
    res.writeHead(reply.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      ...reply.headers,
    });
    res.end(body);
  }

  private async metadata(req: http.IncomingMessage, url: URL): Promise<Reply> {
    if (req.method !== "GET") return { status: 405, json: { error: "Method not allowed" } };
    if (req.headers.metadata !== "true") {
      return {
        status: 400,
        json: { error: "bad_request_102", error_description: "Required metadata header not specified" },
      };
    }
    if (req.headers["x-forwarded-for"] !== undefined) {
      return {
        status: 400,
        json: { error: "bad_request_103", error_description: "A request with X-Forwarded-For header is not allowed" },
      };
    }
    const apiVersion = url.searchParams.get("api-version");
    if (apiVersion === null || apiVersion === "") {
      return {
        status: 400,
        json: {
          error:
            "Bad request. api-version was not specified in the request. For more information refer to aka.ms/azureimds",
          "newest-versions": NEWEST_VERSIONS,
        },
      };
    }
    if (!API_VERSION.test(apiVersion)) {
      return {
        status: 400,
        json: {
          error:
            "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds",
          "newest-versions": NEWEST_VERSIONS,
        },
      };
    }
    const inst = this.world.instance();
    if (url.pathname === "/metadata/identity/oauth2/token") return this.token(inst, url);
    if (url.pathname === "/metadata/instance")
      return { status: 200, json: { compute: computeMetadata(inst, apiVersion), network: { interface: [] } } };
    if (url.pathname === "/metadata/instance/compute") return { status: 200, json: computeMetadata(inst, apiVersion) };
    return { status: 404, json: { error: "Not found" } };
  }

  private async token(inst: FakeInstance, url: URL): Promise<Reply> {
    const resource = url.searchParams.get("resource");
    if (resource === null || resource === "") {
      return {
        status: 400,
        json: { error: "invalid_request", error_description: "Required audience parameter not specified" },
      };
    }
    const q = (k: string): string | undefined => url.searchParams.get(k) ?? undefined;
    const identity = selectIdentity(inst, {
      clientId: q("client_id"),
      objectId: q("object_id"),
      miResId: q("mi_res_id") ?? q("msi_res_id"),
    });
    if ("error" in identity)
      return { status: 400, json: { error: "invalid_request", error_description: identity.error } };
    const now = nowSeconds();
    const claims = identityTokenClaims(inst, identity, resource, now);
    const accessToken = await this.world.directory.sign(claims);
    const exp = Number(claims.exp);
    return {
      status: 200,
      json: {
        access_token: accessToken,
        client_id: identity.clientId,
        expires_in: String(exp - now),
        expires_on: String(exp),
        ext_expires_in: String(exp - now),
        not_before: String(now),
        resource,
        token_type: "Bearer",
      },
    };
  }

  private directoryRoute(url: URL): Reply {
    const parts = url.pathname.split("/").filter((p) => p !== "");
    const keys =
      (parts.length === 2 || parts.length === 3) &&
      parts[parts.length - 2] === "discovery" &&
      parts[parts.length - 1] === "keys";
    if (keys || (parts.length === 4 && parts[1] === "discovery" && parts[2] === "v2.0" && parts[3] === "keys")) {
      return { status: 200, json: this.world.directory.jwks() };
    }
    if (
      parts.length === 3 &&
      parts[1] === ".well-known" &&
      parts[2] === "openid-configuration" &&
      parts[0] !== undefined
    ) {
      return { status: 200, json: this.world.directory.discovery(parts[0], this.baseUrl) };
    }
    return { status: 404, json: { error: "not_found", error_description: `no such path ${url.pathname}` } };
  }

  private async control(req: http.IncomingMessage, url: URL): Promise<Reply> {
    if (!this.world.isRootToken(req.headers)) return { status: 403, json: { errors: ["permission denied"] } };
    checkJsonBody(req);
    const body = await readJson(req);
    if (url.pathname === "/_control/token" && req.method === "POST") {
      const claims = isObject(body.claims) ? body.claims : {};
      const options: SignOptions = {
        ...(body.foreignKey === true ? { foreignKey: true } : {}),
        ...(body.alg === "HS256" || body.alg === "none" || body.alg === "RS256" ? { alg: body.alg } : {}),
        ...(typeof body.kid === "string" ? { kid: body.kid } : {}),
      };
      return { status: 200, json: { token: await this.world.directory.sign(claims, options) } };
    }
    if (url.pathname === "/_control/instance") {
      if (req.method === "GET") return { status: 200, json: this.world.instance() };
      if (req.method === "PUT" || req.method === "POST")
        return { status: 200, json: this.world.configureInstance(body as FakeInstanceInput) };
    }
    if (url.pathname === "/_control/metadata-faults" && req.method === "POST") {
      if (typeof body.status !== "number") return { status: 400, json: { errors: ["status is required"] } };
      const endpoint = body.endpoint === "token" || body.endpoint === "instance" ? body.endpoint : "any";
      this.addFault({
        status: body.status,
        endpoint,
        ...(typeof body.times === "number" ? { times: body.times } : {}),
        ...(typeof body.retryAfter === "number" ? { retryAfter: body.retryAfter } : {}),
        ...(isObject(body.body) ? { body: body.body } : {}),
      });
      return { status: 200, json: { pending: this.faults.length } };
    }
    if (url.pathname === "/_control/metadata-faults" && req.method === "DELETE") {
      this.clearFaults();
      return { status: 200, json: { pending: 0 } };
    }
    return { status: 404, json: { errors: [] } };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 1024 * 1024) chunks.push(c);
    });
    req.on("end", () => {
      try {
        const parsed: unknown = chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString("utf8"));
        resolve(isObject(parsed) ? parsed : {});
      } catch {
        resolve({});
      }
    });
    req.on("error", () => resolve({}));
  });
}
