/**
 * The "what to do" ends of the core's error messages. Each names the setting the user really has to
 * change, where its value came from (option, stack config key or environment variable), and, for the
 * providers, the Pulumi command that makes a changed stack config take effect.
 */
import type { ServiceName } from "../errors";
import { howToSet, settingSource, type ResolvedConnection } from "./settings";

const LABEL: Record<ServiceName, string> = { secrets: "secrets service", scheduler: "scheduler" };

type Conn = Pick<ResolvedConnection, "service" | "origin" | "optionsFrom" | "origins" | "token" | "anonymous">;

/** Node's codes of a server certificate that could not be verified. */
const CERT_CODES = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_CHAIN_TOO_LONG",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * Tells whether a network failure is a TLS certificate problem: the server's certificate failed
 * verification, or the server refused ours during the handshake. Repeating it cannot help.
 */
export function isCertificateFailure(code: string): boolean {
  return CERT_CODES.has(code) || /^ERR_SSL_.*(CERTIFICATE|BAD_CERT|UNKNOWN_CA|HANDSHAKE_FAILURE)/.test(code);
}

/** The hint of a certificate failure: it is a certificate problem, and which settings fix it. */
export function certificateHint(c: Conn, code: string): string {
  const label = LABEL[c.service];
  if (code.startsWith("ERR_SSL_")) {
    return (
      `the ${label} at ${c.origin} refused the TLS handshake (${code}): a certificate problem, not a connection one. ` +
      `If it requires mutual TLS, give a client certificate and key it trusts (${settingSource(c, "clientCert")}; ` +
      `${settingSource(c, "clientKey")})`
    );
  }
  const ca =
    c.origins.caCert !== undefined
      ? `the CA bundle from ${settingSource(c, "caCert")}`
      : "the system's trusted CAs (no CA bundle is set)";
  const fixCa = `set ${howToSet(c.service, "caCert", c.optionsFrom)} to the CA that signed the ${label}'s certificate (PEM text or a file path)`;
  let what = `the ${label}'s certificate at ${c.origin} could not be verified against ${ca} (${code}): a certificate problem, not a connection one; ${fixCa}`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || code === "HOSTNAME_MISMATCH") {
    what =
      `the ${label}'s certificate does not name the host of ${c.origin} (${code}): a certificate problem, not a connection one; ` +
      `use an address whose host the certificate names, or set ${howToSet(c.service, "tlsServerName", c.optionsFrom)} to a name it carries`;
  } else if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    what = `the ${label}'s certificate at ${c.origin} is ${code === "CERT_HAS_EXPIRED" ? "expired" : "not valid yet"} (${code}): renew it on the server (or check this machine's clock)`;
  }
  return what;
}

/** The hint of a connection that could not be made or was lost. */
export function transportHint(c: Conn, code: string): string {
  return `could not reach ${c.origin} (${code}); check the address (from ${settingSource(c, "address")}) and that the ${LABEL[c.service]} is running`;
}

/** The hint of a request the HTTP library refused to send (a header value or name, or the path, it cannot carry). */
export function invalidRequestHint(): string {
  return "the request was refused before it was sent: a header or the path holds a character HTTP cannot carry (a line break or another control character); check the connection settings and inputs";
}

/** The hint of a connection lost after the request was sent: the service may have acted on a write. */
export function lostAfterSendHint(c: Conn, code: string, write: boolean): string {
  return (
    `the connection to ${c.origin} was lost after the request was sent (${code})` +
    (write ? `; the ${LABEL[c.service]} may or may not have applied it` : "")
  );
}

/** The hint of an attempt that got no response in time: the setting that raises the limit. */
export function timeoutHint(c: Conn, timeoutMs: number): string {
  return `no response within ${timeoutMs} ms; raise ${howToSet(c.service, "timeoutMs", c.optionsFrom)} or check that the ${LABEL[c.service]} is healthy`;
}

/**
 * The hint of a 401/403: which token setting to fill in or check, and, when the token came from stack
 * config, that `refresh` and `destroy` use the copy stored in the state at the last `up`.
 */
export function permissionHint(c: Conn): string {
  const label = LABEL[c.service];
  if (c.token === undefined) {
    const why = c.anonymous
      ? `no token was sent (${settingSource(c, "anonymous")} asks for none)`
      : "no token was sent (none is set)";
    return `${why}; set ${howToSet(c.service, "token", c.optionsFrom)} to a ${label} token that grants this operation`;
  }
  const from = settingSource(c, "token");
  const check = `check that the ${label} token (from ${from}) is valid and grants this operation`;
  if (c.origins.token !== "stack-config") return check;
  return (
    `${check}. If you rotated it: Pulumi stores the stack config in the state of the default provider, and ` +
    "`pulumi refresh` and `pulumi destroy` use that stored copy (it wins over the environment); run `pulumi up` first, " +
    'or `pulumi refresh --run-program` / `pulumi destroy --run-program` (see "Rotating a token" in the docs, docs/configuration.md)'
  );
}
