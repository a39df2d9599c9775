/**
 * Throwaway certificates for TLS tests: a CA, a server certificate for 127.0.0.1/localhost and a client
 * certificate, made with the machine's openssl into a temp dir. Nothing is committed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  caCert: string;
  caCertPath: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  clientCertPath: string;
  clientKeyPath: string;
  cleanup(): void;
}

function ssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** Makes a CA and a server and client certificate signed by it. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "pss-pki-"));
  ssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=test-ca",
  ]);
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  ssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  ]);
  ssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  ssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "client.key",
    "-out",
    "client.csr",
    "-subj",
    "/CN=test-client",
  ]);
  ssl(dir, [
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "client.pem",
    "-days",
    "2",
    "-extfile",
    "client.ext",
  ]);
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  return {
    dir,
    caCert: read("ca.pem"),
    caCertPath: join(dir, "ca.pem"),
    serverCert: read("server.pem"),
    serverKey: read("server.key"),
    clientCert: read("client.pem"),
    clientKey: read("client.key"),
    clientCertPath: join(dir, "client.pem"),
    clientKeyPath: join(dir, "client.key"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
