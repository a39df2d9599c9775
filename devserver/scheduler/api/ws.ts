// Minimal RFC 6455 WebSocket server side for the action endpoint: the opening handshake, masked client
// frames (text, binary, continuation, ping, close), unmasked server text and close frames. Written here
// instead of adding a dependency because the endpoint needs only JSON text frames in both directions.
import { createHash } from "node:crypto";
import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/** Largest client message (all its frames together) accepted by default; the action endpoint only receives small JSON frames. */
const MAX_MESSAGE = 64 * 1024;

/** Close codes used by the action endpoint. */
export const CLOSE_NORMAL = 1000;
export const CLOSE_POLICY_VIOLATION = 1008;
const CLOSE_TOO_BIG = 1009;
/** The close code of a failed message handler. */
const CLOSE_INTERNAL_ERROR = 1011;

/** Returns the Sec-WebSocket-Accept value for a client key. */
function acceptKey(key: string): string {
  return createHash("sha1")
    .update(key + GUID)
    .digest("base64");
}

/** Refuses an upgrade with a plain HTTP error response. */
export function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const reason = STATUS_CODES[status] ?? "Error";
  const body = Buffer.from(message, "utf8");
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${message}`,
  );
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  let header: Buffer;
  if (len < 126) {
    header = Buffer.from([0x80 | opcode, len]);
  } else if (len < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** One accepted WebSocket connection. */
export class WsConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  /** Bytes of the message being assembled, frame headers included (so empty frames count too). */
  private fragmentBytes = 0;
  private fragmentOpcode = 0;
  private closed = false;
  private readonly messageHandlers: ((text: string) => void)[] = [];
  private readonly closeHandlers: (() => void)[] = [];

  /**
   * @param maxMessage largest message (all frames of it, headers included) read before closing with 1009;
   *   changeable later with {@link limitMessages}.
   */
  constructor(
    private readonly socket: Duplex,
    head: Buffer,
    private maxMessage = MAX_MESSAGE,
  ) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("close", () => this.finish());
    socket.on("error", () => this.finish());
    if (head.length > 0) this.onData(head);
  }

  /** Sets the largest message read from now on (for example a small one until the client has authenticated). */
  limitMessages(maxMessage: number): void {
    this.maxMessage = maxMessage;
  }

  /** Registers a handler for complete text (or binary, decoded as UTF-8) messages. */
  onMessage(fn: (text: string) => void): void {
    this.messageHandlers.push(fn);
  }

  /** Registers a handler run once when the connection ends. */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closeHandlers.push(fn);
  }

  /** Returns whether the connection is closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one JSON text frame. */
  sendJson(value: unknown): void {
    if (this.closed) return;
    this.socket.write(frame(0x1, Buffer.from(JSON.stringify(value), "utf8")));
  }

  /** Sends a close frame with a code and reason, then ends the socket. */
  close(code: number, reason = ""): void {
    if (this.closed) return;
    const r = Buffer.from(reason, "utf8").subarray(0, 123);
    const payload = Buffer.alloc(2 + r.length);
    payload.writeUInt16BE(code, 0);
    r.copy(payload, 2);
    this.socket.write(frame(0x8, payload));
    this.socket.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closeHandlers.splice(0)) fn();
  }

  private onData(chunk: Buffer): void {
    // after a close nothing more is read (nor buffered) from the client
    if (this.closed) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      const b0 = this.buffer[0] as number;
      const b1 = this.buffer[1] as number;
      const fin = (b0 & 0x80) !== 0;
      const opcode = b0 & 0x0f;
      const masked = (b1 & 0x80) !== 0;
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.buffer.length < 4) return;
        len = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (this.buffer.length < 10) return;
        const big = this.buffer.readBigUInt64BE(2);
        if (big > BigInt(this.maxMessage)) return this.close(CLOSE_TOO_BIG, "message too big");
        len = Number(big);
        offset = 10;
      }
      if (!masked) return this.close(1002, "client frames must be masked");
      // refused from the header alone, before its payload is waited for, and counted with the frames before it
      if (this.fragmentBytes + offset + 4 + len > this.maxMessage) return this.close(CLOSE_TOO_BIG, "message too big");
      if (this.buffer.length < offset + 4 + len) return;
      const mask = this.buffer.subarray(offset, offset + 4);
      const payload = Buffer.from(this.buffer.subarray(offset + 4, offset + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] as number) ^ (mask[i % 4] as number);
      this.buffer = this.buffer.subarray(offset + 4 + len);
      if (opcode < 0x8) this.fragmentBytes += offset + 4 + len;
      this.handleFrame(fin, opcode, payload);
      if (this.closed) return;
    }
  }

  private handleFrame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === 0x8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE_NORMAL;
      this.close(code === 1005 || code === 1006 ? CLOSE_NORMAL : code);
      return;
    }
    if (opcode === 0x9) {
      this.socket.write(frame(0xa, payload));
      return;
    }
    if (opcode === 0xa) return;
    if ((opcode === 0x1 || opcode === 0x2) && this.fragmentOpcode === 0) {
      this.fragments = [payload];
      this.fragmentOpcode = opcode;
    } else if (opcode === 0x0 && this.fragmentOpcode !== 0) {
      this.fragments.push(payload);
    } else {
      this.close(1002, "unexpected frame");
      return;
    }
    if (!fin) return;
    const text = Buffer.concat(this.fragments).toString("utf8");
    this.fragments = [];
    this.fragmentBytes = 0;
    this.fragmentOpcode = 0;
    // A handler runs inside the socket's data event: a throw there would take the whole server down, so it
    // ends this connection only, as a server whose handler failed does (1011).
    try {
      for (const fn of this.messageHandlers) fn(text);
    } catch {
      this.close(CLOSE_INTERNAL_ERROR, "internal error");
    }
  }
}

/**
 * Completes the opening handshake; returns the connection, or undefined after answering 400 when the
 * request is not a valid version 13 upgrade.
 */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  maxMessage = MAX_MESSAGE,
): WsConnection | undefined {
  const key = req.headers["sec-websocket-key"];
  const version = req.headers["sec-websocket-version"];
  const upgrade = String(req.headers.upgrade ?? "").toLowerCase();
  if (typeof key !== "string" || key === "" || upgrade !== "websocket" || version !== "13") {
    refuseUpgrade(socket, 400, "Bad Request");
    return undefined;
  }
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`,
  );
  return new WsConnection(socket, head, maxMessage);
}
