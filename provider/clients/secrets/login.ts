/**
 * Login with a cloud identity token (`POST /v1/auth/<mount>/login`, sent without a service token), and the
 * checks of the token's claims that can fail before anything is sent.
 */
import { ApiError, UsageError, isApiError } from "../../errors";
import type { HttpCore } from "../../http/core";
import {
  CloudJwtClaimsSchema,
  LoginRequestSchema,
  LoginResponseSchema,
  type AuthBlock,
  type CloudJwtClaims,
  type LoginRequest,
} from "../../schemas/secrets";
import { encodeMount } from "./normalize";
import { parseRequest } from "./write";
import { PARSE_OPTIONS } from "../../schemas/parse-options";

/** What to check in the token before sending it. */
export interface JwtCheckOptions {
  /** The method's configured `resource`: the token's `aud` must equal it exactly, trailing slash included. */
  audience?: string;
  /** The method's configured tenant: the token's `tid` must equal it. */
  tenantId?: string;
  /** Clock in epoch ms (tests). */
  now?: () => number;
}

/** Options of a login. */
export interface LoginOptions extends JwtCheckOptions {
  signal?: AbortSignal;
}

/**
 * Reads a JWT's claims without verifying its signature (the service does that) and refuses it when it is
 * expired, not yet valid, or meant for another audience or tenant; returns the claims. Messages never
 * include the token.
 */
export async function checkJwt(jwt: string, options: JwtCheckOptions = {}): Promise<CloudJwtClaims> {
  // jose is ESM-only; a dynamic import keeps this module CommonJS (Node 20 cannot require an ES module).
  const { decodeJwt } = await import("jose");
  let raw: unknown;
  try {
    raw = decodeJwt(jwt);
  } catch {
    throw new UsageError("log in: the jwt is not a well-formed JWT (three base64url parts with a JSON payload)");
  }
  const parsed = CloudJwtClaimsSchema.safeParse(raw, PARSE_OPTIONS);
  if (!parsed.success)
    throw new UsageError(
      "log in: the jwt's claims do not have the expected types (aud, iss, exp, nbf, tid, oid, groups)",
    );
  const claims = parsed.data;
  const nowS = (options.now ?? Date.now)() / 1000;
  if (claims.exp !== undefined && claims.exp <= nowS) {
    throw new UsageError(`log in: the jwt expired at ${new Date(claims.exp * 1000).toISOString()}; fetch a new token`);
  }
  if (claims.nbf !== undefined && claims.nbf > nowS) {
    throw new UsageError(
      `log in: the jwt is not valid before ${new Date(claims.nbf * 1000).toISOString()}; check the clock`,
    );
  }
  if (options.audience !== undefined) {
    const aud = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.includes(options.audience)) {
      throw new UsageError(
        `log in: the jwt's audience ${JSON.stringify(aud.length === 1 ? aud[0] : aud)} differs from the configured resource ` +
          `${JSON.stringify(options.audience)}; they must match exactly, trailing slash included`,
      );
    }
  }
  if (options.tenantId !== undefined && claims.tid !== undefined && claims.tid !== options.tenantId) {
    throw new UsageError(
      `log in: the jwt was issued for tenant ${claims.tid}, not the configured tenant ${options.tenantId}`,
    );
  }
  return claims;
}

/** Logs in to auth method mounts. */
export class Login {
  constructor(private readonly http: HttpCore) {}

  /**
   * Logs in with a role and a cloud identity token; resolves to the `auth` block whose `client_token` is the
   * issued service token (a secret: never log it). The token's expiry, and its audience and tenant when
   * given, are checked first, so a doomed login fails without a request.
   */
  async login(mount: string, request: LoginRequest, options: LoginOptions = {}): Promise<AuthBlock> {
    const body = parseRequest(LoginRequestSchema, request, "log in");
    await checkJwt(body.jwt, options);
    try {
      const res = await this.http.request({
        operation: "log in",
        method: "POST",
        path: `/v1/auth/${encodeMount(mount)}/login`,
        body,
        auth: false,
        schema: LoginResponseSchema,
        secrets: [body.jwt],
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return res.value.auth;
    } catch (e) {
      throw isApiError(e) ? withLoginHint(e) : e;
    }
  }
}

const HINTS: ReadonlyArray<[RegExp, string]> = [
  [/audience/i, "the method's `resource` must equal the token's audience exactly, trailing slash included"],
  [
    /issued by a different provider|issuer|tenant/i,
    "the token was issued by another tenant than the method's `tenant_id`",
  ],
  [/expired|not valid yet|nbf|before/i, "fetch a new token and check the clocks"],
  [/signature|verify/i, "the token was not signed by the cloud directory's published keys"],
  [/service principal not authorized|groups not authorized/i, "bind the identity's object id or group in the role"],
  [
    /client_id and client_secret|credential/i,
    "roles with subscription, resource group, location or scale-set bounds need the method's clientId and clientSecret (or a managed identity of the service)",
  ],
  [
    /(subscription_id|resource_group_name|vm_name|vmss_name)[^.]*required|required[^.]*(subscription_id|resource_group_name|vm_name|vmss_name)/i,
    "send subscription_id, resource_group_name and vm_name or vmss_name (from the instance metadata)",
  ],
];

function withLoginHint(e: ApiError): ApiError {
  const text = e.serverErrors.join(" ");
  const hint = HINTS.find(([re]) => re.test(text))?.[1];
  if (hint === undefined) return e;
  return e.with({ hint });
}
