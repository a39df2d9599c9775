/**
 * Secrets never leave in errors: a client secret, a JWT and service tokens are planted where the service
 * echoes them back, and every error message, its JSON, its inspection (cause included) and stderr are
 * searched for them.
 */
import { inspect } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { setStackConfig } from "../../helpers/stack-config";
import { authConfig } from "../../../provider/resources/auth-config";
import { capturingStderr, withSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type { AuthConfigInputs, AuthConfigOutputs } from "../../helpers/resource-types";

const CLIENT_SECRET = "planted-client-secret-4b1d9";
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
let env: SecretsEnv;

withSecretsEnv("cloud", (started) => (env = started));
beforeEach(() => {
  env.dev.faults.clear();
  setStackConfig({ secretsAddress: env.dev.urls.secrets, secretsToken: env.dev.rootTokens.secrets });
});

/** Every text a user or a log could see of an error. */
function surfaces(err: unknown): string[] {
  const e = err as Error & { cause?: unknown };
  return [
    String(e.message),
    String(e.stack),
    JSON.stringify(e),
    inspect(e, { depth: Infinity, showHidden: true }),
    inspect(e.cause, { depth: Infinity }),
  ];
}

function expectClean(err: unknown, planted: readonly string[]): void {
  expect(err).toBeInstanceOf(Error);
  for (const text of surfaces(err)) for (const p of planted) expect(text).not.toContain(p);
}

async function failing(fn: () => Promise<unknown>): Promise<unknown> {
  return fn().then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
}

describe("redaction", () => {
  it("keeps the client secret out of AuthConfig errors, even when the service echoes it", async () => {
    env.dev.faults.add({
      service: "secrets",
      method: "POST",
      path: "/v1/auth/cloud/config",
      status: 400,
      body: { errors: [`bad client_secret "${CLIENT_SECRET}"`] },
    });
    const checked = await authConfig.check(
      {},
      { tenantId: TENANT, resource: "https://r/", clientSecret: CLIENT_SECRET },
    );
    const { value: err, lines } = await capturingStderr(() =>
      failing(() => authConfig.create(checked.inputs as AuthConfigInputs)),
    );
    expectClean(err, [CLIENT_SECRET]);
    expect((err as Error).message).toMatch(/<redacted>/);
    expect(lines.join("\n")).not.toContain(CLIENT_SECRET);
  });

  it("keeps the client secret out of outputs, read results and update errors, sent or not", async () => {
    const checked = await authConfig.check(
      {},
      { tenantId: TENANT, resource: "https://r/", clientSecret: CLIENT_SECRET },
    );
    const created = await authConfig.create(checked.inputs as AuthConfigInputs);
    const read = await authConfig.read(created.id, created.outs as AuthConfigOutputs);
    expect(JSON.stringify([created, read])).not.toContain(CLIENT_SECRET);
    const olds = created.outs as AuthConfigOutputs;
    // A new secret is sent; an unchanged one is not, but a service could still echo the stored value.
    for (const news of [
      { ...(checked.inputs as AuthConfigInputs), clientSecret: `${CLIENT_SECRET}-2` },
      { ...(checked.inputs as AuthConfigInputs), resource: "https://r2/" },
    ]) {
      const secret = news.clientSecret ?? "";
      env.dev.faults.add({
        service: "secrets",
        method: "POST",
        path: "/v1/auth/cloud/config",
        status: 500,
        body: { errors: [`client_secret=${secret}`] },
      });
      const err = await failing(() => authConfig.update(created.id, olds, news));
      expectClean(err, [secret]);
    }
  });

  it("keeps the JWT out of login errors, even when the service echoes it", async () => {
    const jwt = await env.controls.cloud.mintToken();
    env.dev.faults.add({
      service: "secrets",
      path: "/v1/auth/cloud/login",
      status: 500,
      body: { errors: [`cannot use token ${jwt}`] },
    });
    const err = await failing(() => env.client.auth.login("cloud", { role: "web", jwt }));
    expectClean(err, [jwt, jwt.split(".")[1] ?? jwt]);
  });

  it("keeps a refused JWT out of the pre-check's errors", async () => {
    const jwt = await env.controls.cloud.mintToken({ exp: 1 });
    const err = await failing(() => env.client.auth.login("cloud", { role: "web", jwt }));
    expectClean(err, [jwt, jwt.split(".")[1] ?? jwt]);
  });

  it("keeps the service token out of errors, from the client and from the providers", async () => {
    const token = "hvs.planted-service-token-77aa";
    env.dev.faults.add({
      service: "secrets",
      path: "/v1/sys/auth",
      status: 500,
      times: 10,
      body: { errors: [`token ${token} is not valid`] },
    });
    const err = await failing(() => env.newClient({ token, retry: { maxAttempts: 1 } }).mounts.list());
    expectClean(err, [token]);
    setStackConfig({ secretsAddress: env.dev.urls.secrets, secretsToken: token });
    const providerErr = await failing(() =>
      authConfig.read("auth/cloud/config", { mount: "cloud" } as AuthConfigOutputs),
    );
    expectClean(providerErr, [token]);
  });

  it("keeps an issued client token out of errors made with it", async () => {
    const issued = env.dev.createToken("secrets", { policies: [] });
    const err = await failing(() =>
      env.newClient({ token: issued }).mounts.enable("x", { type: env.controls.methodType }),
    );
    expectClean(err, [issued]);
  });
});
