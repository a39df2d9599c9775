import { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { CLOSE_INTERNAL_ERROR, WsConnection, acceptKey } from "../../../../devserver/scheduler/api/ws";

describe("acceptKey", () => {
  it("computes the RFC 6455 accept key", () => {
    expect(acceptKey("dGhlIHNhbXBsZSBub25jZQ==")).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
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
    expect(close?.readUInt16BE(2)).toBe(CLOSE_INTERNAL_ERROR);
  });
});
