/**
 * The AuthMount, AuthConfig and AuthRole classes under Pulumi mocks: type tokens, declared outputs, the
 * client secret kept secret in inputs and outputs, and never in the serialized provider.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { AuthConfig } from "../../sdk/generated/auth-config";
import { AuthMount } from "../../sdk/generated/auth-mount";
import { AuthRole } from "../../sdk/generated/auth-role";
import { installMocks, outputValue, type MockRecorder } from "../helpers/mocks";

const SECRET = "planted-client-secret-8c1f";

const sdk = { AuthMount, AuthConfig, AuthRole };
let rec: MockRecorder;

beforeAll(async () => {
  rec = await installMocks((args) => {
    const { __provider: _p, ...rest } = args.inputs as Record<string, unknown>;
    const state: Record<string, unknown> = { ...rest, schemaVersion: 1 };
    if (args.type.endsWith(":AuthMount")) state.accessor = "auth_cloud_0123abcd";
    if (args.type.endsWith(":AuthConfig")) {
      delete state.clientSecret;
      state.clientSecretHash = "scrypt$16384$8$1$c2FsdA$aGFzaA";
    }
    return state;
  });
});

const value = outputValue;
function secretness<T>(o: pulumi.Output<T>): Promise<boolean> {
  return pulumi.isSecret(o);
}

describe("AuthMount", () => {
  it("registers under its own type token and exposes the accessor", async () => {
    const m = new sdk.AuthMount("m", { description: "prod", tune: { defaultLeaseTtl: "1h" } });
    expect(await value(m.accessor)).toBe("auth_cloud_0123abcd");
    expect(await value(m.description)).toBe("prod");
    const r = rec.registered.find((x) => x.name === "m");
    expect(r?.type).toBe("pulumi-nodejs:dynamic/pulumi-secrets-scheduler:AuthMount");
    expect(typeof r?.inputs.__provider).toBe("string");
  });
});

describe("AuthConfig", () => {
  it("sends the client secret as a secret and asks for the hash output to be secret", async () => {
    const c = new sdk.AuthConfig(
      "c",
      {
        tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47",
        resource: "https://management.azure.com/",
        clientSecret: SECRET,
      },
      { additionalSecretOutputs: ["clientId"] },
    );
    expect(await value(c.tenantId)).toBe("72f988bf-86f1-41af-91ab-2d7cd011db47");
    expect(await secretness(c.tenantId)).toBe(false);
    expect(rec.secretOutputs.get("c")).toEqual(["clientId", "clientSecret", "clientSecretHash"]);
    const r = rec.registered.find((x) => x.name === "c");
    expect(r?.type).toBe("pulumi-nodejs:dynamic/pulumi-secrets-scheduler:AuthConfig");
    // Mocks show secret inputs wrapped with Pulumi's secret signature.
    expect(r?.inputs.clientSecret).toMatchObject({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: SECRET,
    });
    const text = String(r?.inputs.__provider);
    expect(text).toContain("pulumi-secrets-scheduler/provider");
    expect(text).not.toContain(SECRET);
  });
});

describe("AuthRole", () => {
  it("declares every output, set or not", async () => {
    const role = new sdk.AuthRole("r", { name: "web", boundServicePrincipalIds: ["sp"] });
    expect(pulumi.Output.isInstance(role.boundGroupIds)).toBe(true);
    expect(pulumi.Output.isInstance(role.tokenPolicies)).toBe(true);
    expect(await value(role.boundServicePrincipalIds)).toEqual(["sp"]);
    expect(rec.registered.find((x) => x.name === "r")?.type).toBe(
      "pulumi-nodejs:dynamic/pulumi-secrets-scheduler:AuthRole",
    );
  });
});

describe("new inputs", () => {
  it("AuthMount passes pluginVersion and disableRemount and declares them as outputs", async () => {
    const m = new sdk.AuthMount("m22", { path: "p22", pluginVersion: "v0.21.0", disableRemount: true });
    expect(await value(m.pluginVersion)).toBe("v0.21.0");
    expect(await value(m.disableRemount)).toBe(true);
    const r = rec.registered.find((x) => x.name === "m22");
    expect(r?.inputs).toMatchObject({ pluginVersion: "v0.21.0", disableRemount: true });
  });

  it("AuthConfig's write-only mode registers no secret at all, only the version and where to read it", async () => {
    const c = new sdk.AuthConfig("c22", {
      tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47",
      resource: "https://management.azure.com/",
      clientSecretVersion: 3,
      clientSecretEnv: "AZURE_CLIENT_SECRET",
      identityTokenTtl: "30m",
    });
    expect(await value(c.clientSecretVersion)).toBe(3);
    expect(await value(c.clientSecretEnv)).toBe("AZURE_CLIENT_SECRET");
    expect(await value(c.identityTokenTtl)).toBe("30m");
    const r = rec.registered.find((x) => x.name === "c22");
    expect(r?.inputs).toMatchObject({ clientSecretVersion: 3, clientSecretEnv: "AZURE_CLIENT_SECRET" });
    expect(r?.inputs).not.toHaveProperty("clientSecret");
  });
});
