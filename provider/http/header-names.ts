/**
 * The names of the headers the HTTP core sends and reads: the spec's, the same for both services (the
 * default), and the real services' own (headerStyle "real"). A connection starts from one set and may
 * override single names (./settings.ts).
 */
import type { ServiceName } from "../errors";

/** Names of the headers the core sends and reads; each can be overridden to talk to a real cluster. */
export interface HeaderNames {
  /** Carries the service token. */
  token: string;
  /** Carries the secrets-service namespace, when one is set. */
  namespace: string;
  /** Paging continuation token of list responses. */
  nextToken: string;
  /** Blocking-query index of read responses. */
  index: string;
  knownLeader: string;
  lastContact: string;
  /** Secrets service: marks a request as coming from a client library (`true`); empty for none. */
  requestMarker: string;
}

/** The spec's header names, the default for both services. */
export const SPEC_HEADERS: Readonly<HeaderNames> = Object.freeze({
  token: "X-Svc-Token",
  namespace: "X-Svc-Namespace",
  nextToken: "X-Svc-NextToken",
  index: "X-Svc-Index",
  knownLeader: "X-Svc-KnownLeader",
  lastContact: "X-Svc-LastContact",
  requestMarker: "X-Svc-Request",
});

/** The real services' header names (headerStyle "real"). */
export const REAL_HEADERS: Readonly<Record<ServiceName, Readonly<HeaderNames>>> = Object.freeze({
  secrets: Object.freeze({
    token: "X-Vault-Token",
    namespace: "X-Vault-Namespace",
    nextToken: "X-Vault-NextToken",
    index: "X-Vault-Index",
    knownLeader: "X-Vault-KnownLeader",
    lastContact: "X-Vault-LastContact",
    // The real CLI and SDK always send it, and a proxy configured with require_request_header demands it.
    requestMarker: "X-Vault-Request",
  }),
  scheduler: Object.freeze({
    token: "X-Nomad-Token",
    namespace: "X-Nomad-Namespace",
    nextToken: "X-Nomad-NextToken",
    index: "X-Nomad-Index",
    knownLeader: "X-Nomad-KnownLeader",
    lastContact: "X-Nomad-LastContact",
    requestMarker: "",
  }),
});

/** Which set of header names to start from. */
export type HeaderStyle = "spec" | "real";
