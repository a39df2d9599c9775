/**
 * Malformed requests on every listener of the devserver (secrets, scheduler, the cloud metadata and
 * directory port, and the WebSocket upgrade path): each is answered (a bad request target with 400) or
 * the connection dropped, nothing escapes as an unhandled rejection or exception, and every port still
 * answers a good request afterwards. Sent over raw sockets, since an HTTP client would refuse to send most
 * of them.
 */
import fc from "fast-check";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretsControls, startDevServer, type StartedDevServer } from "../../../devserver";

type Port = "secrets" | "scheduler" | "cloud";

let server: StartedDevServer;
const ports = {} as Record<Port, { host: string; port: number }>;
const escaped: unknown[] = [];
const onEscape = (err: unknown): void => {
  escaped.push(err);
};

beforeAll(async () => {
  process.on("unhandledRejection", onEscape);
  process.on("uncaughtException", onEscape);
  server = await startDevServer();
  const cloud = (await secretsControls(server)).cloud;
  for (const [name, url] of [
    ["secrets", server.urls.secrets],
    ["scheduler", server.urls.scheduler],
    ["cloud", cloud.url],
  ] as const) {
    const u = new URL(url);
    ports[name] = { host: u.hostname, port: Number(u.port) };
  }
});

afterAll(async () => {
  await server.close();
  process.off("unhandledRejection", onEscape);
  process.off("uncaughtException", onEscape);
});

/**
 * Writes raw bytes on a new connection, half-closes it and resolves to what came back once the status line
 * is in, the server closes, or (a bound for upgrades held open, not a check) 2 s pass.
 */
function send(to: Port, bytes: string | Buffer): Promise<string> {
  const { host, port } = ports[to];
  return new Promise((resolve) => {
    let out = "";
    const sock = net.connect(port, host, () => {
      sock.end(bytes);
    });
    const finish = (): void => {
      clearTimeout(bound);
      sock.destroy();
      resolve(out);
    };
    const bound = setTimeout(finish, 2000);
    sock.on("data", (d: Buffer) => {
      out += d.toString("latin1");
      if (out.includes("\r\n\r\n")) finish();
    });
    sock.on("error", finish);
    sock.on("close", finish);
  });
}

function statusOf(reply: string): number | undefined {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(reply);
  return m ? Number(m[1]) : undefined;
}

const ALL: readonly Port[] = ["secrets", "scheduler", "cloud"];

/** Targets that do not parse as a request URI; each must get 400 on every port, as a request and as an upgrade. */
const BAD_TARGETS = ["//[", "//[::1", "//a@[", "http://[", "http://%zz/", "nopath", "//x:99999/", "\\\\evil/"];

describe("malformed request targets", () => {
  for (const to of ALL) {
    it(`${to}: answers 400 to each and stays up`, async () => {
      for (const target of BAD_TARGETS) {
        const plain = await send(to, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        const upgrade = await send(
          to,
          `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        );
        expect([target, statusOf(plain), statusOf(upgrade)]).toEqual([target, 400, 400]);
      }
      expect(escaped).toEqual([]);
    });
  }

  it("an upgrade whose handler throws on its path (bad percent-encoding) is refused with 400", async () => {
    const reply = await send(
      "scheduler",
      "GET /v1/job/%E0%A4%A/action?namespace=default HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n" +
        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    expect(statusOf(reply)).toBe(400);
  });
});

const methods = fc.constantFrom(
  "GET",
  "POST",
  "PUT",
  "DELETE",
  "LIST",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "G T",
  "",
  "\u0000",
);
const targetChars = fc.constantFrom(..."/[]%?#@:;=&*\\ abcv1zZ09.-_~\u00ff\t".split(""));
const targets = fc.oneof(
  fc.constantFrom(
    "//[",
    "/v1/jobs?namespace=%",
    "/v1/job/%zz/action",
    "/v1/job/a/action?ws_handshake=%zz",
    "/v1/sys/auth?list=true",
    "/metadata/identity/oauth2/token?api-version=%",
    "/_control/instance",
    "/common/discovery/keys",
    "*",
  ),
  fc.string({ unit: targetChars, maxLength: 40 }),
  fc.string({ unit: targetChars, maxLength: 40 }).map((s) => `/${s}`),
);
const versions = fc.constantFrom("HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "", "HTTP/9");
const headerValue = fc.oneof(
  fc.constantFrom("", "-1", "abc", "99999999999999999999", "0", "5", "chunked", "gzip, chunked", "websocket", "true"),
  fc.string({ maxLength: 30 }),
);
const header = fc.oneof(
  fc.tuple(
    fc.constantFrom(
      "Host",
      "Content-Length",
      "Transfer-Encoding",
      "Content-Type",
      "Connection",
      "Upgrade",
      "Origin",
      "Metadata",
      "X-Svc-Token",
      "Authorization",
      "Sec-WebSocket-Key",
      "Sec-WebSocket-Version",
      "X-Forwarded-For",
      "Expect",
    ),
    headerValue,
  ),
  fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 20 })),
);
const bodies = fc.oneof(
  fc.constant(""),
  fc.constantFrom('{"Job":', "{}", "[]", "null", "0\r\n\r\n", "5\r\nab", "zz\r\n", '{"JobHCL":"job \\"x\\" {"}'),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString("latin1")),
);
const requests = fc
  .record({
    method: methods,
    target: targets,
    version: versions,
    headers: fc.array(header, { maxLength: 6 }),
    upgrade: fc.boolean(),
    body: bodies,
  })
  .map(({ method, target, version, headers, upgrade, body }) => {
    const lines = [`${method} ${target} ${version}`.trimEnd(), "Host: 127.0.0.1"];
    if (upgrade) lines.push("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13");
    for (const [name, value] of headers) lines.push(`${name}: ${value}`);
    return Buffer.from(`${lines.join("\r\n")}\r\n\r\n${body}`, "latin1");
  });

/** A request each port answers when it is healthy. */
async function healthy(to: Port): Promise<number | undefined> {
  const path =
    to === "secrets" ? "/v1/sys/auth" : to === "scheduler" ? "/v1/jobs" : "/metadata/instance?api-version=2021-02-01";
  const token =
    to === "secrets" ? server.rootTokens.secrets : to === "scheduler" ? server.rootTokens.scheduler : undefined;
  const reply = await send(
    to,
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
      (token !== undefined ? `X-Svc-Token: ${token}\r\n` : "Metadata: true\r\n") +
      "\r\n",
  );
  return statusOf(reply);
}

describe("a corpus of malformed request lines, headers and bodies", () => {
  for (const to of ALL) {
    it(`${to}: every request is answered or dropped, and the port answers a good request afterwards`, async () => {
      await fc.assert(
        fc.asyncProperty(requests, async (bytes) => {
          const reply = await send(to, bytes);
          // an answer is a well-formed status line (or none: the connection was dropped or held open)
          if (reply !== "") expect(reply).toMatch(/^HTTP\/1\.1 \d{3} /);
          const status = statusOf(reply);
          // a handler that fails on what it was sent answers 500: none may
          if (status !== undefined) expect(status).not.toBe(500);
        }),
        { numRuns: 150 },
      );
      expect(escaped).toEqual([]);
      expect(await healthy(to)).toBe(200);
    });
  }

  it("scheduler: an accepted action WebSocket fed arbitrary frame bytes stays contained", async () => {
    const frames = fc.oneof(
      fc.uint8Array({ maxLength: 80 }),
      // masked text frames with arbitrary payloads (what a client sends), some of them handshakes
      fc
        .tuple(fc.constantFrom(0x81, 0x01, 0x80, 0x88, 0x89, 0x8a, 0x82), fc.string({ maxLength: 60 }))
        .map(([b0, text]) => {
          const payload = Buffer.from(text, "utf8");
          return Buffer.concat([
            Buffer.from([b0, 0x80 | payload.length, 1, 2, 3, 4]),
            payload.map((b, i) => b ^ [1, 2, 3, 4][i % 4]!),
          ]);
        }),
    );
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(frames, { maxLength: 4 }), async (handshake, parts) => {
        const head =
          `GET /v1/job/web/action?action=a&group=g&task=t${handshake ? "&ws_handshake=true" : ""} HTTP/1.1\r\n` +
          `Host: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Svc-Token: ${server.rootTokens.scheduler}\r\n\r\n`;
        const reply = await send("scheduler", Buffer.concat([Buffer.from(head, "latin1"), ...parts]));
        if (reply !== "") expect(reply).toMatch(/^HTTP\/1\.1 \d{3} /);
      }),
      { numRuns: 60 },
    );
    expect(escaped).toEqual([]);
    expect(await healthy("scheduler")).toBe(200);
  });

  it("every port still answers once all of it was sent", async () => {
    expect(escaped).toEqual([]);
    expect(await Promise.all(ALL.map(healthy))).toEqual([200, 200, 200]);
  });
});
