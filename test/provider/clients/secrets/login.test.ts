/** The client-side rules of login: token pre-checks, the metadata retry guidance, the request built. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_METADATA_RETRY,
  buildLoginRequest,
  checkJwt,
  metadataRetryDelay,
} from "../../../../provider/clients/secrets";
import { UsageError } from "../../../../provider/errors";

const key = new TextEncoder().encode("k".repeat(32));
const now = Math.floor(Date.now() / 1000);
async function jwt(claims: Record<string, unknown>): Promise<string> {
  // jose is ESM-only; the tests compile as CommonJS like the library.
  const { SignJWT } = await import("jose");
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(key);
}

describe("checkJwt", () => {
  it("returns the claims of a valid token for the configured resource", async () => {
    const t = await jwt({ aud: "https://management.azure.com/", exp: now + 600, tid: "t1", oid: "o1" });
    await expect(checkJwt(t, { audience: "https://management.azure.com/", tenantId: "t1" })).resolves.toMatchObject({
      oid: "o1",
    });
  });

  it.each([
    { name: "expired", claims: { aud: "https://r/", exp: now - 1 }, opts: { audience: "https://r/" }, msg: /expired/ },
    {
      name: "not valid yet",
      claims: { aud: "https://r/", exp: now + 600, nbf: now + 300 },
      opts: {},
      msg: /not valid before/,
    },
    {
      name: "audience without the trailing slash",
      claims: { aud: "https://r", exp: now + 600 },
      opts: { audience: "https://r/" },
      msg: /trailing slash/,
    },
    {
      name: "audience with an extra trailing slash",
      claims: { aud: "https://r/", exp: now + 600 },
      opts: { audience: "https://r" },
      msg: /must match exactly/,
    },
    {
      name: "another tenant",
      claims: { aud: "https://r/", exp: now + 600, tid: "t2" },
      opts: { tenantId: "t1" },
      msg: /tenant t2/,
    },
  ])("refuses a token that is $name, without quoting it", async ({ claims, opts, msg }) => {
    const t = await jwt(claims);
    const err = await checkJwt(t, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(msg);
    expect((err as Error).message).not.toContain(t);
  });

  it("refuses something that is not a JWT", async () => {
    await expect(checkJwt("not.a.jwt")).rejects.toThrow(/not a well-formed JWT/);
  });
});

describe("metadataRetryDelay", () => {
  const p = DEFAULT_METADATA_RETRY;
  it.each([
    { status: 404, retried: true },
    { status: 410, retried: true },
    { status: 429, retried: true },
    { status: 500, retried: true },
    { status: 503, retried: true },
    { status: 400, retried: false },
    { status: 401, retried: false },
    { status: 403, retried: false },
    { status: undefined, retried: false },
  ])("status $status: retried=$retried", ({ status, retried }) => {
    expect(metadataRetryDelay(p, 1, status, 0) !== undefined).toBe(retried);
  });

  it("follows the documented 0/2/6/14/30 s schedule and stops after 5 attempts", () => {
    expect([1, 2, 3, 4].map((n) => metadataRetryDelay(p, n, 503, 0))).toEqual([2000, 4000, 8000, 16000]);
    expect(metadataRetryDelay(p, 5, 503, 0)).toBeUndefined();
  });

  it("keeps retrying a 410 until 70 s have passed, then stops", () => {
    expect(metadataRetryDelay(p, 9, 410, 69_000)).toBe(30_000);
    expect(metadataRetryDelay(p, 9, 410, 70_000)).toBeUndefined();
  });
});

describe("buildLoginRequest", () => {
  const compute = {
    subscriptionId: "sub",
    resourceGroupName: "rg",
    name: "vm1",
    vmScaleSetName: "",
    resourceId: "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1",
  };
  it("sends vm_name for a plain VM", () => {
    expect(buildLoginRequest("web", "J", compute)).toEqual({
      role: "web",
      jwt: "J",
      subscription_id: "sub",
      resource_group_name: "rg",
      vm_name: "vm1",
    });
  });
  it("sends vmss_name for a scale-set instance, not vm_name", () => {
    expect(buildLoginRequest("web", "J", { ...compute, name: "ss_3", vmScaleSetName: "ss" })).toEqual({
      role: "web",
      jwt: "J",
      subscription_id: "sub",
      resource_group_name: "rg",
      vmss_name: "ss",
    });
  });
  it("sends resource_id instead of the names when asked", () => {
    const req = buildLoginRequest("web", "J", compute, { useResourceId: true });
    expect(req.resource_id).toBe(compute.resourceId);
    expect(req.vm_name).toBeUndefined();
  });
});
