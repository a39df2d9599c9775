import type { ServiceName } from "./errors";
import type { ServiceHeaderNames } from "./types";

/** Header names the specs use (secrets-cloud-auth.md, "Authentication", and the names table of shared/README.md). */
export const SPEC_HEADER_NAMES: Readonly<ServiceHeaderNames> = Object.freeze({
  token: "X-Svc-Token",
  namespace: "X-Svc-Namespace",
  index: "X-Svc-Index",
  knownLeader: "X-Svc-KnownLeader",
  lastContact: "X-Svc-LastContact",
  nextToken: "X-Svc-NextToken",
});

/**
 * Header names of the real services (reference/secrets-service.md §2, reference/scheduler.md §3.1), to run the
 * devserver as a stand-in for them.
 */
export const REAL_HEADER_NAMES: Readonly<Record<ServiceName, Readonly<ServiceHeaderNames>>> = Object.freeze({
  secrets: Object.freeze({
    token: "X-Vault-Token",
    namespace: "X-Vault-Namespace",
    index: "X-Vault-Index",
    knownLeader: "X-Vault-KnownLeader",
    lastContact: "X-Vault-LastContact",
    nextToken: "X-Vault-NextToken",
  }),
  scheduler: Object.freeze({
    token: "X-Nomad-Token",
    namespace: "X-Nomad-Namespace",
    index: "X-Nomad-Index",
    knownLeader: "X-Nomad-KnownLeader",
    lastContact: "X-Nomad-LastContact",
    nextToken: "X-Nomad-NextToken",
  }),
});
