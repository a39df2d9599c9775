import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

/** A throwaway certificate set: a CA, a server cert (localhost, 127.0.0.1, ::1) and a client cert, all signed by the CA. */
export interface TestCertificates {
  readonly ca: PemPair;
  readonly server: PemPair;
  readonly client: PemPair;
}

// Minimal DER encoder: just the ASN.1 types an X.509 v3 certificate needs.
function der(tag: number, body: Buffer): Buffer {
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else if (n < 0x100) len = Buffer.from([0x81, n]);
  else len = Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
const seq = (...parts: Buffer[]): Buffer => der(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => der(0x31, Buffer.concat(parts));
const octets = (b: Buffer): Buffer => der(0x04, b);
const bits = (b: Buffer, unused = 0): Buffer => der(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean): Buffer => der(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string): Buffer => der(0x0c, Buffer.from(s, "utf8"));
const explicit = (n: number, inner: Buffer): Buffer => der(0xa0 + n, inner);

function oid(text: string): Buffer {
  const arcs = text.split(".").map(Number);
  const out: number[] = [40 * (arcs[0] ?? 0) + (arcs[1] ?? 0)];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}

function utcTime(d: Date): Buffer {
  const p = (n: number): string => String(n).padStart(2, "0");
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return der(0x17, Buffer.from(s, "ascii"));
}

const name = (cn: string): Buffer => seq(set(seq(oid("2.5.4.3"), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

function keyId(key: KeyObject): Buffer {
  // SHA-1 of the whole SPKI is enough for a key identifier; it only has to be stable and unique.
  return createHash("sha1")
    .update(key.export({ type: "spki", format: "der" }))
    .digest();
}

interface CertInput {
  readonly subject: string;
  readonly publicKey: KeyObject;
  readonly issuer: string;
  readonly issuerKey: KeyObject;
  readonly issuerPublicKey: KeyObject;
  readonly ca: boolean;
  readonly usage: "server" | "client" | "ca";
}

function certificate(input: CertInput): string {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 1) & 0x7f) | 0x01; // positive and minimal
  const now = Date.now();
  const exts: Buffer[] = [
    extension("2.5.29.19", true, input.ca ? seq(bool(true)) : seq()),
    // keyUsage: CA = keyCertSign|cRLSign, leaf = digitalSignature.
    extension("2.5.29.15", true, input.ca ? bits(Buffer.from([0x06]), 1) : bits(Buffer.from([0x80]), 7)),
    extension("2.5.29.14", false, octets(keyId(input.publicKey))),
    extension("2.5.29.35", false, seq(der(0x80, keyId(input.issuerPublicKey)))),
  ];
  if (input.usage === "server") {
    exts.push(extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))));
    const localhost = der(0x82, Buffer.from("localhost", "ascii"));
    const v4 = der(0x87, Buffer.from([127, 0, 0, 1]));
    const v6 = der(0x87, Buffer.concat([Buffer.alloc(15), Buffer.from([1])]));
    exts.push(extension("2.5.29.17", false, seq(localhost, v4, v6)));
  } else if (input.usage === "client") {
    exts.push(extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.2"))));
  }
  const tbs = seq(
    explicit(0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ECDSA_SHA256,
    name(input.issuer),
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 7 * 86_400_000))),
    name(input.subject),
    input.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, seq(...exts)),
  );
  const signature = sign("sha256", tbs, input.issuerKey);
  const cert = seq(tbs, ECDSA_SHA256, bits(signature));
  const b64 = cert.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

const newKey = (): { publicKey: KeyObject; privateKey: KeyObject } =>
  generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const pem = (k: KeyObject): string => k.export({ type: "pkcs8", format: "pem" }).toString();

/**
 * Creates a throwaway CA with a server and a client certificate (ECDSA P-256, valid one week), in memory.
 * Built with node:crypto so tests need no openssl binary and leave no key files behind.
 */
export function createTestCertificates(caName = "devserver test CA"): TestCertificates {
  const ca = newKey();
  const server = newKey();
  const client = newKey();
  const base = { issuer: caName, issuerKey: ca.privateKey, issuerPublicKey: ca.publicKey };
  return {
    ca: {
      cert: certificate({ ...base, subject: caName, publicKey: ca.publicKey, ca: true, usage: "ca" }),
      key: pem(ca.privateKey),
    },
    server: {
      cert: certificate({ ...base, subject: "localhost", publicKey: server.publicKey, ca: false, usage: "server" }),
      key: pem(server.privateKey),
    },
    client: {
      cert: certificate({
        ...base,
        subject: "devserver test client",
        publicKey: client.publicKey,
        ca: false,
        usage: "client",
      }),
      key: pem(client.privateKey),
    },
  };
}
