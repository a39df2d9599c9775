// Every listener of the devserver (the two services and the cloud side) is made here, so that what reaches
// a handler has passed the same checks and nothing a handler throws, synchronously or not, can end the
// process: a request target that does not parse, a Host or Origin that is not one of the server's own
// names (DNS rebinding, cross-site pages) and a failed handler are answered here, and a WebSocket upgrade
// gets the same checks and an error listener on its socket before its handler runs. Requests the HTTP
// parser itself refuses get Node's own 400 (its default `clientError` behaviour).
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import type { Duplex } from "node:stream";
import { DevHttpError, type RenderedError } from "./errors";

/** Returns whether `host` is a loopback address (127.0.0.0/8, ::1, IPv4-mapped 127.x, or `localhost`). */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(host);
  const addr = mapped ? (mapped[1] as string) : host;
  const family = net.isIP(addr);
  if (family === 4) return addr.split(".")[0] === "127";
  if (family === 6) return LOOPBACK_V6.check(addr, "ipv6");
  return false;
}

const LOOPBACK_V6 = new net.BlockList();
LOOPBACK_V6.addAddress("::1", "ipv6");

/** How one listener answers and which names it serves as. */
export interface GuardedListenerOptions {
  /** TLS settings: serve HTTPS when given. */
  readonly tls?: https.ServerOptions;
  /**
   * Names (or addresses) clients may put in `Host` and `Origin` besides the loopback ones (`localhost`,
   * 127.x, `[::1]`): the address the listener binds and the names it was told to serve as.
   */
  readonly hostNames?: readonly string[];
  /** Renders an error reply in the listener's own style. */
  renderError(status: number, message: string): RenderedError;
  /** Handles a request that passed the checks; may throw or reject. */
  onRequest(req: http.IncomingMessage, res: http.ServerResponse): void | Promise<void>;
  /** Handles an upgrade that passed the checks; returns false (or throws) to have it refused with 400. */
  onUpgrade?(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

/** A request refused before its handler: status and message. */
interface Refusal {
  readonly status: number;
  readonly message: string;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** Returns the hostname of a `Host` header value (`name`, `name:port`, `[v6]:port`), lower-cased; undefined when malformed. */
function hostOfHeader(value: string): string | undefined {
  if (value === "") return undefined;
  try {
    const u = new URL(`http://${value}`);
    if (u.username !== "" || u.password !== "" || u.pathname !== "/" || u.search !== "" || u.hash !== "")
      return undefined;
    return u.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function bare(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * Returns a predicate telling whether a hostname (as `URL` shows it) is one the listener answers to: a
 * loopback one, a name under `.localhost` (reserved for loopback, RFC 6761: no outside resolver may answer
 * for it, so it cannot be a rebound name; clients such as curl and browsers send it to loopback without DNS),
 * or one of `names`.
 */
function allowedHosts(names: readonly string[] = []): (hostname: string) => boolean {
  const extra = new Set(names.map((n) => bare(hostOfHeader(net.isIPv6(n) ? `[${n}]` : n) ?? n.toLowerCase())));
  return (hostname) => {
    const h = bare(hostname.toLowerCase()).replace(/\.$/, ""); // `name.` is the same name, fully qualified
    return isLoopbackHost(h) || h.endsWith(".localhost") || extra.has(h);
  };
}

/**
 * Checks what every listener checks before a handler sees a request: a request target that parses
 * (origin form, absolute form, or `*`), a `Host` naming this server, and no `Origin` of another site.
 */
function refusal(req: http.IncomingMessage, allowed: (hostname: string) => boolean): Refusal | undefined {
  const target = req.url ?? "";
  if (target !== "*" && !target.startsWith("/") && !ABSOLUTE_FORM.test(target)) {
    return { status: 400, message: "invalid URI for request" };
  }
  try {
    new URL(target === "*" ? "/" : target, "http://devserver.invalid");
  } catch {
    return { status: 400, message: "invalid URI for request" };
  }
  const host = req.headers.host;
  if (host !== undefined) {
    const name = hostOfHeader(host);
    if (name === undefined) return { status: 400, message: "malformed Host header" };
    if (!allowed(name)) {
      return {
        status: 403,
        message: `Host ${JSON.stringify(name)} is not a name of this devserver (it answers to loopback names and the names it was told to serve as)`,
      };
    }
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let name: string | undefined;
    try {
      const u = new URL(origin);
      name = u.protocol === "http:" || u.protocol === "https:" ? u.hostname : undefined;
    } catch {
      name = undefined;
    }
    if (name === undefined || !allowed(name)) {
      return { status: 403, message: "requests from other origins (web pages) are refused" };
    }
  }
  return undefined;
}

const JSON_TYPE = /^application\/(?:[A-Za-z0-9.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Refuses (415) a request body whose declared type is not JSON: browsers send forms and text across sites
 * without asking first, JSON only after a preflight the devserver never grants. A body without a type is
 * accepted (the real clients send none). `raw` routes take any type.
 */
export function checkJsonBody(req: http.IncomingMessage, raw = false): void {
  if (raw) return;
  const hasBody =
    req.headers["transfer-encoding"] !== undefined ||
    (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
  const type = req.headers["content-type"];
  if (!hasBody || type === undefined || type.trim() === "" || JSON_TYPE.test(type.trim())) return;
  throw new DevHttpError(415, `Content-Type ${JSON.stringify(type)} is not accepted: send JSON (application/json)`);
}

function statusLine(status: number): string {
  return `${status} ${http.STATUS_CODES[status] ?? "Error"}`;
}

/** Answers on a raw socket (upgrade path) and closes it; destroys it when something was written already. */
function refuseSocket(socket: Duplex, rendered: RenderedError | undefined, status: number): void {
  if (((socket as Partial<net.Socket>).bytesWritten ?? 0) > 0) {
    socket.destroy();
    return;
  }
  const body = Buffer.from(rendered?.body ?? "", "utf8");
  socket.end(
    `HTTP/1.1 ${statusLine(status)}\r\nConnection: close\r\n` +
      (rendered !== undefined ? `Content-Type: ${rendered.contentType}\r\n` : "") +
      `Content-Length: ${body.length}\r\n\r\n${body.toString("utf8")}`,
  );
}

/**
 * Creates an HTTP (or HTTPS) server whose requests and upgrades pass {@link refusal} first and whose
 * handler failures are answered (DevHttpError: its status; anything else: 500 without its message), never
 * thrown out of an event.
 */
export function createGuardedServer(options: GuardedListenerOptions): http.Server {
  const allowed = allowedHosts(options.hostNames);
  const reply = (res: http.ServerResponse, status: number, message: string): void => {
    const rendered = options.renderError(status, message);
    const body = Buffer.from(rendered.body, "utf8");
    res.writeHead(status, { "content-type": rendered.contentType, "content-length": body.length });
    res.end(body);
  };
  const failed = (res: http.ServerResponse, err: unknown): void => {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    // An unexpected error's text may quote what the request carried: keep it out of the reply.
    if (err instanceof DevHttpError) reply(res, err.status, err.message);
    else reply(res, 500, "internal error");
  };
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    try {
      const refused = refusal(req, allowed);
      if (refused !== undefined) {
        // the body of a refused request is never read: do not reuse the connection
        res.shouldKeepAlive = false;
        reply(res, refused.status, refused.message);
        return;
      }
      const pending = options.onRequest(req, res);
      if (pending !== undefined) pending.catch((err: unknown) => failed(res, err));
    } catch (err) {
      failed(res, err);
    }
  };
  const server = options.tls ? https.createServer(options.tls, onRequest) : http.createServer(onRequest);
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node takes its own listeners off an upgraded socket: without one, a reset would be an uncaught error.
    socket.on("error", () => socket.destroy());
    const refused = refusal(req, allowed);
    if (refused !== undefined) {
      refuseSocket(socket, options.renderError(refused.status, refused.message), refused.status);
      return;
    }
    let accepted: boolean;
    try {
      accepted = options.onUpgrade?.(req, socket, head) ?? false;
    } catch {
      accepted = false;
    }
    if (!accepted && !socket.destroyed && socket.writable) refuseSocket(socket, undefined, 400);
  });
  return server;
}
