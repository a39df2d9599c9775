/**
 * A preview of an unchanged program sends no request for any auth resource: after `up`, the
 * engine's preview calls check(stored inputs, program) and diff(state, checked inputs); the devserver's
 * request log counts what reached the service.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authConfig as config } from "../../../provider/resources/auth-config";
import { authMount as mountImpl } from "../../../provider/resources/auth-mount";
import { authRole as role } from "../../../provider/resources/auth-role";
import type { ProviderImpl } from "../../../provider/resources/common";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

// Driven as the engine does, with untyped property bags.
const authMount = mountImpl as unknown as ProviderImpl;
const authConfig = config as unknown as ProviderImpl;
const authRole = role as unknown as ProviderImpl;

let env: SecretsEnv;
beforeAll(async () => {
  env = await startSecretsEnv();
});
afterAll(async () => {
  await env.close();
});

const TENANT = "00000000-0000-4000-8000-00000000aaaa";
const CLIENT = "00000000-0000-4000-8000-00000000bbbb";

/** `pulumi up` of a new resource as the engine runs it: check, then create; returns what state holds. */
async function up(impl: ProviderImpl, program: Record<string, unknown>) {
  const checked = await impl.check({}, program);
  expect(checked.failures ?? []).toEqual([]);
  const created = await impl.create(checked.inputs as Record<string, unknown>);
  return {
    id: created.id,
    inputs: checked.inputs as Record<string, unknown>,
    outs: created.outs as Record<string, unknown>,
  };
}

/** A preview as the engine runs it: check against the stored inputs, then diff against the state. */
async function preview(
  impl: ProviderImpl,
  state: { id: string; inputs: Record<string, unknown>; outs: Record<string, unknown> },
  program: Record<string, unknown>,
) {
  const checked = await impl.check(state.inputs, program);
  expect(checked.failures ?? []).toEqual([]);
  return impl.diff(state.id, state.outs, checked.inputs as Record<string, unknown>);
}

describe("a no-change preview sends no request", () => {
  it("for an AuthMount, an AuthConfig and an AuthRole, right after their create and again after a refresh", async () => {
    const type = env.controls.methodType;
    const mountProgram = { path: "quiet", type, description: "d", tune: { defaultLeaseTtl: "1h" } };
    const configProgram = {
      mount: "quiet",
      tenantId: TENANT,
      resource: "https://management.example/",
      clientId: CLIENT,
      clientSecret: "s3cr3t-quiet",
    };
    const roleProgram = { mount: "quiet", name: "web", tokenPolicies: ["web"], boundServicePrincipalIds: ["sp-1"] };
    const mount = await up(authMount, mountProgram);
    const configState = await up(authConfig, configProgram);
    const roleState = await up(authRole, roleProgram);

    env.dev.resetLog();
    const { value: diffs } = await capturingStderr(async () => [
      await preview(authMount, mount, mountProgram),
      await preview(authConfig, configState, configProgram),
      await preview(authRole, roleState, roleProgram),
    ]);
    expect(diffs.map((d) => d.changes)).toEqual([false, false, false]);
    expect(env.requests()).toEqual([]);

    // After a refresh (which reads) the stored inputs come from Read; the preview after it is quiet too.
    const refreshed = await Promise.all(
      (
        [
          [authMount, mount],
          [authConfig, configState],
          [authRole, roleState],
        ] as const
      ).map(async ([impl, s]) => {
        const r = await impl.read(s.id, s.outs);
        return {
          id: s.id,
          inputs: (r.inputs ?? s.inputs) as Record<string, unknown>,
          outs: r.props as Record<string, unknown>,
        };
      }),
    );
    env.dev.resetLog();
    const again = [
      await preview(authMount, refreshed[0]!, mountProgram),
      await preview(authConfig, refreshed[1]!, configProgram),
      await preview(authRole, refreshed[2]!, roleProgram),
    ];
    expect(again.map((d) => d.changes)).toEqual([false, false, false]);
    expect(env.requests()).toEqual([]);
  });

  it("a preview that changes the mount still learns its accessor (one request), so the plan shows it known", async () => {
    const type = env.controls.methodType;
    const mount = await up(authMount, { path: "quiet2", type });
    env.dev.resetLog();
    const checked = await authMount.check(mount.inputs, { path: "quiet2", type, description: "changed" });
    expect(checked.inputs).toMatchObject({ accessor: mount.outs.accessor });
    expect(env.requests()).toEqual(["GET /v1/sys/auth"]);
  });
});
