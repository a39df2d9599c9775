import { request } from "node:http";
import { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WsConnection } from "../../../../devserver/scheduler/api/ws";
import { startScheduler, type Harness } from "../http";

describe("the opening handshake", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startScheduler();
  });
  afterAll(async () => {
    await h.close();
  });

  it("answers RFC 6455's example key with its example accept value", async () => {
    // The action endpoint completes the handshake before it authorizes (a refusal is a close frame after it).
    const accept = await new Promise<string | string[] | undefined>((resolve, reject) => {
      const req = request(`${h.base}/v1/job/any/action`, {
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
          "Sec-WebSocket-Version": "13",
        },
      });
      req.on("upgrade", (res, socket) => {
        socket.destroy();
        resolve(res.headers["sec-websocket-accept"]);
      });
      req.on("response", (res) => reject(new Error(`no upgrade: ${String(res.statusCode)}`)));
      req.on("error", reject);
      req.end();
    });
    expect(accept).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  });
});

/** A socket that keeps what the server writes; what the client sends is pushed with `receive`. */
class FakeSocket extends Duplex {
  readonly written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    this.written.push(Buffer.from(chunk));
    done();
  }
  receive(b: Buffer): void {
    this.emit("data", b);
  }
}

/** A masked client text frame (mask of zeros: the payload goes as is). */
function clientText(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}

describe("WsConnection", () => {
  it("a message handler that throws closes that connection with 1011, and the throw goes no further", () => {
    const socket = new FakeSocket();
    const conn = new WsConnection(socket, Buffer.alloc(0));
    conn.onMessage(() => {
      throw new Error("handler bug");
    });
    expect(() => socket.receive(clientText('{"version":1}'))).not.toThrow();
    expect(conn.isClosed).toBe(true);
    const close = socket.written.find((b) => ((b[0] as number) & 0x0f) === 0x8);
    // 1011: the server met a condition that kept it from fulfilling the request (RFC 6455, 7.4.1).
    expect(close?.readUInt16BE(2)).toBe(1011);
  });
});
