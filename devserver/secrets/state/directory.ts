import { createHash, generateKeyPair, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { goQuote, goQuoteList, goTime } from "./values";

/**
 * The fake cloud directory: an RS256 signing key of its own, the OIDC discovery document and key set it
 * publishes, token minting with arbitrary claims (also with a foreign key or another algorithm, for
 * refusal tests), and verification that follows the real login's OIDC checks and their error texts.
 */

type Jose = typeof import("jose", { with: { "resolution-mode": "import" } });
let joseModule: Promise<Jose> | undefined;
// jose is ESM-only; a dynamic import keeps this CommonJS module loadable.
function jose(): Promise<Jose> {
  if (joseModule === undefined) joseModule = import("jose");
  return joseModule;
}

/** A JSON Web Key as published in the key set. */
export interface PublicJwk {
  readonly kty: string;
  readonly use: string;
  readonly kid: string;
  readonly x5t: string;
  readonly n: string;
  readonly e: string;
  readonly alg: string;
}

/** Options of `Directory.sign`. */
export interface SignOptions {
  /** Sign with a key the directory does not publish (the signature cannot verify). */
  readonly foreignKey?: boolean;
  /** `RS256` (default), `HS256` (shared secret) or `none` (unsigned). */
  readonly alg?: "RS256" | "HS256" | "none";
  /** Override the `kid` header. */
  readonly kid?: string;
}

/** A verification failure with the message the real login returns (as a 500). */
export class TokenVerificationError extends Error {
  override readonly name = "TokenVerificationError";
}

/** Claims the login reads from a verified token. */
export type TokenClaims = Readonly<Record<string, unknown>>;

/** Serialised form of the directory key, kept with the devserver state. */
export interface DirectoryState {
  readonly kid: string;
  readonly privateJwk: Record<string, unknown>;
}

/** Default token lifetime of the directory's managed-identity tokens (24 hours, not configurable). */
export const TOKEN_LIFETIME_SECONDS = 86_400;
/** Leeway the OIDC library allows on `nbf` before the method's own strict check. */
const NBF_LEEWAY_SECONDS = 300;

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString("base64url");
}

/** Returns the issuer the directory writes into tokens of a tenant. */
export function issuerFor(tenant: string): string {
  return `https://sts.windows.net/${tenant}/`;
}

/** Holds the directory's signing key and mints / verifies tokens. */
export class Directory {
  private privateKey: KeyObject;
  private kidValue: string;
  private foreign: Promise<KeyObject> | undefined;

  constructor(state?: DirectoryState) {
    if (state !== undefined) {
      this.privateKey = createPrivateKey({ key: state.privateJwk as import("node:crypto").JsonWebKey, format: "jwk" });
      this.kidValue = state.kid;
    } else {
      this.privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
      this.kidValue = randomBytes(15).toString("base64url");
    }
  }

  /** Returns the `kid` of the published key. */
  get kid(): string {
    return this.kidValue;
  }

  /** Returns the published key set (`{keys: [...]}`). */
  jwks(): { keys: PublicJwk[] } {
    const jwk = createPublicKey(this.privateKey).export({ format: "jwk" });
    const der = createPublicKey(this.privateKey).export({ format: "der", type: "spki" });
    return {
      keys: [
        {
          kty: "RSA",
          use: "sig",
          kid: this.kidValue,
          x5t: createHash("sha1").update(der).digest("base64url"),
          n: String(jwk.n),
          e: String(jwk.e),
          alg: "RS256",
        },
      ],
    };
  }

  /** Returns the OIDC discovery document of a tenant; `baseUrl` is where the key set is served. */
  discovery(tenant: string, baseUrl: string): Record<string, unknown> {
    return {
      token_endpoint: `${baseUrl}/${tenant}/oauth2/token`,
      token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
      jwks_uri: `${baseUrl}/common/discovery/keys`,
      response_modes_supported: ["query", "fragment", "form_post"],
      subject_types_supported: ["pairwise"],
      id_token_signing_alg_values_supported: ["RS256"],
      response_types_supported: ["code", "id_token", "code id_token", "token id_token", "token"],
      scopes_supported: ["openid"],
      issuer: issuerFor(tenant),
      authorization_endpoint: `${baseUrl}/${tenant}/oauth2/authorize`,
      claims_supported: [
        "sub",
        "iss",
        "aud",
        "exp",
        "iat",
        "nbf",
        "oid",
        "tid",
        "appid",
        "groups",
        "xms_mirid",
        "xms_az_rid",
      ],
    };
  }

  /** Signs a token with the given claims (claims set to undefined are left out). */
  async sign(claims: Readonly<Record<string, unknown>>, options: SignOptions = {}): Promise<string> {
    const payload: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(claims)) if (v !== undefined) payload[k] = v;
    const alg = options.alg ?? "RS256";
    if (alg === "none") {
      return `${b64url(JSON.stringify({ typ: "JWT", alg: "none" }))}.${b64url(JSON.stringify(payload))}.`;
    }
    const j = await jose();
    if (alg === "HS256") {
      return new j.CompactSign(Buffer.from(JSON.stringify(payload)))
        .setProtectedHeader({ typ: "JWT", alg: "HS256", ...(options.kid !== undefined ? { kid: options.kid } : {}) })
        .sign(randomBytes(32));
    }
    const key = options.foreignKey === true ? await this.foreignKey() : this.privateKey;
    return new j.CompactSign(Buffer.from(JSON.stringify(payload)))
      .setProtectedHeader({
        typ: "JWT",
        alg: "RS256",
        kid: options.kid ?? this.kidValue,
        x5t: this.jwks().keys[0]?.x5t ?? "",
      })
      .sign(await j.importJWK(key.export({ format: "jwk" }) as Record<string, string>, "RS256"));
  }

  private foreignKey(): Promise<KeyObject> {
    if (this.foreign === undefined) {
      this.foreign = new Promise((resolve, reject) => {
        generateKeyPair("rsa", { modulusLength: 2048 }, (err, _pub, priv) => (err ? reject(err) : resolve(priv)));
      });
    }
    return this.foreign;
  }

  /**
   * Verifies a token the way the login does: claims first (issuer, audience exact, expiry, not-before with
   * the library's leeway), then algorithm and signature against the published key set. Throws
   * `TokenVerificationError` with the real wording.
   */
  async verify(
    token: string,
    expected: { readonly issuer: string; readonly audience: string },
    nowSeconds: number,
  ): Promise<TokenClaims> {
    const parts = token.split(".");
    if (parts.length !== 3) {
      throw new TokenVerificationError(`oidc: malformed jwt: malformed jwt, expected 3 parts got ${parts.length}`);
    }
    let claims: Record<string, unknown>;
    try {
      const decoded: unknown = JSON.parse(Buffer.from(parts[1] ?? "", "base64url").toString("utf8"));
      if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded))
        throw new Error("payload is not a JSON object");
      claims = decoded as Record<string, unknown>;
    } catch {
      // The parser's own message quotes the input; a token fragment must not reach the error text.
      throw new TokenVerificationError(
        "oidc: failed to unmarshal claims: invalid character looking for beginning of value",
      );
    }
    const iss = typeof claims.iss === "string" ? claims.iss : "";
    if (iss !== expected.issuer) {
      throw new TokenVerificationError(
        `oidc: id token issued by a different provider, expected ${goQuote(expected.issuer)} got ${goQuote(iss)}`,
      );
    }
    const aud =
      typeof claims.aud === "string"
        ? [claims.aud]
        : Array.isArray(claims.aud)
          ? claims.aud.filter((a): a is string => typeof a === "string")
          : [];
    if (!aud.includes(expected.audience)) {
      throw new TokenVerificationError(`oidc: expected audience ${goQuote(expected.audience)} got ${goQuoteList(aud)}`);
    }
    const exp = typeof claims.exp === "number" ? claims.exp : undefined;
    if (exp === undefined || exp < nowSeconds) {
      throw new TokenVerificationError(
        `oidc: token is expired (Token Expiry: ${exp === undefined ? "0001-01-01 00:00:00 +0000 UTC" : goTime(exp)})`,
      );
    }
    if (typeof claims.nbf === "number" && nowSeconds + NBF_LEEWAY_SECONDS < claims.nbf) {
      throw new TokenVerificationError(
        `oidc: current time ${goTime(nowSeconds)} before the nbf (not before) time: ${goTime(claims.nbf)}`,
      );
    }
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
    } catch {
      throw new TokenVerificationError("oidc: malformed jwt: invalid character looking for beginning of value");
    }
    const alg = typeof header.alg === "string" ? header.alg : "";
    if (alg !== "RS256") {
      throw new TokenVerificationError(
        `oidc: id token signed with unsupported algorithm, expected ["RS256"] got ${goQuote(alg)}`,
      );
    }
    const j = await jose();
    try {
      await j.compactVerify(
        token,
        j.createLocalJWKSet(this.jwks() as unknown as Parameters<Jose["createLocalJWKSet"]>[0]),
      );
    } catch {
      throw new TokenVerificationError("failed to verify signature: failed to verify id token signature");
    }
    return claims;
  }

  /** Returns the key for persistence. */
  snapshot(): DirectoryState {
    return { kid: this.kidValue, privateJwk: this.privateKey.export({ format: "jwk" }) as Record<string, unknown> };
  }
}
