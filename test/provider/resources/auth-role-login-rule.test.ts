/**
 * AuthRole.check and the login rule of newer plugins: a role with neither boundServicePrincipalIds
 * nor boundGroupIds (or both ["*"]) is refused when the mount runs a plugin that enforces the rule, warned
 * about otherwise, and an unchanged role sends no request.
 */
import { describe, expect, it } from "vitest";
import { authRole } from "../../../provider/resources/auth-role";
import { capturingStderr, withSecretsEnv, type SecretsEnv } from "./auth-helpers";

let env: SecretsEnv;
withSecretsEnv("lr", (started) => (env = started));

describe("the login rule at check", () => {
  it("compares the plugin versions a mount list reports from 0.21.0 on", async () => {
    // The devserver reports one version per release profile: the mount list answers the others once each.
    const found = await env.client.mounts.find("lr");
    expect(found).toBeDefined();
    const listing = (version: string) => {
      const mount = { ...found, running_plugin_version: version };
      env.dev.faults.add({
        service: "secrets",
        method: "GET",
        path: "/v1/sys/auth",
        times: 1,
        status: 200,
        body: { "lr/": mount, data: { "lr/": mount } },
      });
    };
    const news = { mount: "lr", name: "r", boundSubscriptionIds: ["s"] };
    for (const [version, refused] of [
      ["v0.24.0+builtin", true],
      ["v0.21.0", true],
      ["0.21.0", true],
      ["0.20.9", false],
      ["v0.20.12", false],
      ["v1.0.0", true],
      ["builtin", false],
    ] as const) {
      listing(version);
      const { value, lines } = await capturingStderr(() => authRole.check({}, news));
      expect(value.failures?.length ?? 0, version).toBe(refused ? 1 : 0);
      if (refused) expect(value.failures?.[0]?.reason, version).toContain(`runs plugin ${version},`);
      else expect(lines.join("\n"), version).toMatch(/refused by plugins 0\.21\.0 and later/);
    }
  });

  it("refuses a role without a principal or group bound when the mount's plugin enforces the rule (one mount-list read)", async () => {
    const running = (await env.client.mounts.find("lr"))?.running_plugin_version;
    expect(running).toBe("v0.24.0+builtin");
    env.dev.resetLog();
    const res = await authRole.check({}, { mount: "lr", name: "r", boundSubscriptionIds: ["s"] });
    expect(res.failures).toEqual([
      {
        property: "boundServicePrincipalIds",
        reason: expect.stringMatching(
          /neither boundServicePrincipalIds nor boundGroupIds.*runs plugin v0\.24\.0\+builtin, which refuses every login/,
        ),
      },
    ]);
    expect(env.requests()).toEqual(["GET /v1/sys/auth"]);
    const stars = await authRole.check(
      {},
      { mount: "lr", name: "r", boundServicePrincipalIds: ["*"], boundGroupIds: ["*"] },
    );
    expect(stars.failures?.[0]?.reason).toMatch(/both \["\*"\]/);
  });

  it("only warns when the mount's plugin is not known (mount not enabled yet, or unknown at preview)", async () => {
    const { value, lines } = await capturingStderr(() =>
      authRole.check({}, { mount: "not-there", name: "r", boundSubscriptionIds: ["s"] }),
    );
    expect(value.failures).toEqual([]);
    expect(lines.join("\n")).toMatch(/every login with it is refused by plugins 0\.21\.0 and later/);
  });

  it("an unchanged role (a preview of one already applied by an earlier release) sends nothing and only warns", async () => {
    const stored = { mount: "lr", name: "r", boundSubscriptionIds: ["s"] };
    env.dev.resetLog();
    const { value } = await capturingStderr(() => authRole.check(stored, stored));
    expect(value.failures).toEqual([]);
    expect(env.requests()).toEqual([]);
  });

  it("a role that follows the rule sends nothing", async () => {
    env.dev.resetLog();
    const res = await authRole.check({}, { mount: "lr", name: "r", boundGroupIds: ["g"] });
    expect(res.failures).toEqual([]);
    expect(env.requests()).toEqual([]);
  });
});
