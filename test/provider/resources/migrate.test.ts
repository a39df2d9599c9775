/**
 * State migrations (provider/resources/migrate.ts), as the provider entry hands state to a kind's provider
 * (test/helpers/migrated-state.ts): state as releases wrote it, recorded, comes out in the current layout; current state is left as it is; a layout from a newer release is refused with what to do.
 * The recorded state: the engine fixture sets (test/engine/fixtures: `release-0.1.0` and `release-0.2.0`
 * recorded by those releases, `state-v1` before the first), and an AuthConfig that release 0.1.0 refreshed
 * after drift through the Pulumi CLI (its quickstart, the server's max_retries changed outside).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../../../provider/errors";
import { authConfig } from "../../../provider/resources/auth-config";
import type { ProviderKind } from "../../../provider";
import { SCHEMA_VERSION, migrating } from "../../../provider/resources/migrate";
import { migratedInputs, migratedOutputs } from "../../helpers/migrated-state";
import { startSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type { AuthConfigOutputs } from "../../helpers/resource-types";

const FIXTURES = join(__dirname, "..", "..", "engine", "fixtures");
const SETS = ["state-v1", "release-0.1.0", "release-0.2.0"] as const;
const KINDS: Record<string, ProviderKind> = {
  "auth-mount": "authMount",
  "auth-config": "authConfig",
  "auth-role": "authRole",
  job: "job",
  "job-version-tag": "jobVersionTag",
};

type Props = Record<string, unknown>;

function fixture(set: string, file: string): { id: string; inputs: Props; outputs: Props } {
  return JSON.parse(readFileSync(join(FIXTURES, set, `${file}.json`), "utf8")) as {
    id: string;
    inputs: Props;
    outputs: Props;
  };
}

/** Release 0.1.0's state of the quickstart's AuthConfig after a refresh that found drift (secrets unwrapped). */
const DRIFTED_0_1_0 = {
  id: "auth/cloud/config",
  inputs: {
    clientId: "66666666-7777-4888-9999-000000000000",
    clientSecretHash: "scrypt$16384$8$1$YV9_q15gEChxeQUTjf2Apw$jgmWoiX4kmBQSO8Pvb9eixw6HT6EV3BRALUsmVAiIXY",
    maxRetries: 7,
    mount: "cloud",
    resource: "https://management.azure.com/",
    tenantId: "11111111-2222-4333-8444-555555555555",
  },
  outputs: {
    clientId: "66666666-7777-4888-9999-000000000000",
    clientSecretHash: "scrypt$16384$8$1$YV9_q15gEChxeQUTjf2Apw$jgmWoiX4kmBQSO8Pvb9eixw6HT6EV3BRALUsmVAiIXY",
    maxRetries: 7,
    mount: "cloud",
    resource: "https://management.azure.com/",
    schemaVersion: 1,
    tenantId: "11111111-2222-4333-8444-555555555555",
  },
};
/** The quickstart's client secret (examples/quickstart/flow.json), whose hash the state above holds. */
const QUICKSTART_SECRET = "quickstart-demo-client-secret";

describe("migrateOutputs on recorded state", () => {
  for (const set of SETS) {
    for (const [file, kind] of Object.entries(KINDS)) {
      it(`${set} ${kind}: the current layout, nothing else changed`, async () => {
        const { outputs } = fixture(set, file);
        expect(outputs.schemaVersion).toBe(1);
        const migrated = await migratedOutputs(kind, outputs);
        expect(migrated.schemaVersion).toBe(SCHEMA_VERSION);
        // What the steps remove or rewrite; every other value stays.
        const removed = ["jobspec", "job", "variables", "allocationIds", "groups"];
        for (const [k, v] of Object.entries(outputs)) {
          if (k === "schemaVersion") continue;
          if (kind === "job" && removed.includes(k)) expect(migrated, k).not.toHaveProperty(k);
          else if (kind === "job" && k === "inputsHash")
            expect(migrated[k]).toBe(/^hmac-sha256\$/.test(String(v)) ? v : "");
          else expect(migrated[k], k).toEqual(v);
        }
        // Migrating again changes nothing: the result is the current layout.
        expect(await migratedOutputs(kind, migrated)).toBe(migrated);
      });
    }
  }

  it("a Job from before 0.1.0 loses its echoed sources, allocations and unsalted hash", async () => {
    const { outputs } = fixture("state-v1", "job");
    expect(outputs).toHaveProperty("jobspec");
    expect(outputs.inputsHash).toMatch(/^[0-9a-f]{32}$/);
    const migrated = await migratedOutputs("job", outputs);
    for (const k of ["jobspec", "allocationIds", "groups"]) expect(migrated).not.toHaveProperty(k);
    expect(migrated.inputsHash).toBe("");
  });

  it("leaves empty outputs (an import's read) as they are", async () => {
    const empty = {};
    expect(await migratedOutputs("job", empty)).toBe(empty);
  });

  it("refuses a layout from a newer release, naming the resource and what to do", async () => {
    const future = { ...fixture("release-0.2.0", "job").outputs, schemaVersion: SCHEMA_VERSION + 1 };
    await expect(migratedOutputs("job", future, "fixture-web@default")).rejects.toThrow(UsageError);
    await expect(migratedOutputs("job", future, "fixture-web@default")).rejects.toThrow(
      /job resource "fixture-web@default" .*newer release.*Upgrade pulumi-secrets-scheduler/,
    );
    for (const bad of [0, 1.5, "1"])
      await expect(migratedOutputs("job", { schemaVersion: bad })).rejects.toThrow(/no release wrote/);
  });

  it("the wrapped provider rejects (never throws at the call) on such state", async () => {
    const future = { ...DRIFTED_0_1_0.outputs, schemaVersion: SCHEMA_VERSION + 1 } as AuthConfigOutputs;
    const provider = migrating("authConfig", authConfig);
    await expect(provider.read(DRIFTED_0_1_0.id, future)).rejects.toThrow(UsageError);
    await expect(provider.delete(DRIFTED_0_1_0.id, future)).rejects.toThrow(/newer release/);
  });
});

describe("migrateInputs", () => {
  it("turns the secret's hash 0.1.0 stored in inputs after drift into the flag", async () => {
    const migrated = await migratedInputs("authConfig", DRIFTED_0_1_0.inputs);
    expect(migrated).not.toHaveProperty("clientSecretHash");
    expect(migrated).toEqual({ ...DRIFTED_0_1_0.inputs, clientSecretHash: undefined, clientSecretKept: true });
  });

  it("leaves the inputs every recorded release stored for its program as they are, but a Job's bookkeeping names", async () => {
    for (const set of SETS)
      for (const [file, kind] of Object.entries(KINDS)) {
        const { inputs } = fixture(set, file);
        if (kind !== "job") {
          expect(await migratedInputs(kind, inputs), `${set} ${kind}`).toBe(inputs);
          continue;
        }
        // What `check` added, and the SDK's list of secret sources, under names previews leave out.
        const { resolvedKeys, secretInputs, ...rest } = inputs;
        const renamed = {
          ...rest,
          ...(resolvedKeys !== undefined ? { __resolvedKeys: resolvedKeys } : {}),
          ...(secretInputs !== undefined ? { __secretInputs: secretInputs } : {}),
        };
        expect(await migratedInputs(kind, inputs), `${set} ${kind}`).toEqual(renamed);
        expect(await migratedInputs(kind, renamed), `${set} ${kind} (current)`).toBe(renamed);
      }
  });

  it("keeps which values of a version 1 Job came from secrets as its secretMask (a variable's value, else all)", async () => {
    const base = { jobId: "web", normalizedJob: "{}", schemaVersion: 1 };
    const one = await migratedOutputs("job", {
      ...base,
      variables: { db_password: "pw-1234", image: "nginx" },
      secretInputs: ["variables.db_password"],
    });
    expect(one).toMatchObject({ secretMask: { config: true, values: ["pw-1234"] } });
    expect(one).not.toHaveProperty("variables");
    expect(one).not.toHaveProperty("secretInputs");
    const whole = await migratedOutputs("job", { ...base, variables: 'pw = "x"', secretInputs: ["variables"] });
    expect(whole).toMatchObject({ secretMask: { all: true } });
    expect(await migratedOutputs("job", { ...base, secretInputs: ["jobspec"] })).toMatchObject({
      secretMask: { all: true },
    });
    expect(await migratedOutputs("job", base)).not.toHaveProperty("secretMask");
  });
});

describe("an AuthConfig 0.1.0 refreshed after drift, with this release", () => {
  let env: SecretsEnv;
  beforeAll(async () => {
    env = await startSecretsEnv();
    await env.client.mounts.enable("cloud", { type: env.controls.methodType });
    // The server as that state describes it: the quickstart's config, max_retries changed outside.
    const created = await authConfig.create({ ...DRIFTED_0_1_0.inputs, clientSecret: QUICKSTART_SECRET } as never);
    expect(created.id).toBe(DRIFTED_0_1_0.id);
  });
  afterAll(async () => {
    await env?.close();
  });
  const provider = migrating("authConfig", authConfig);
  const olds = DRIFTED_0_1_0.outputs as AuthConfigOutputs;
  const stored = DRIFTED_0_1_0.inputs as never;

  it("a refresh is quiet: read finds what state holds, and the engine's diff against the stored inputs shows nothing", async () => {
    const read = await provider.read(DRIFTED_0_1_0.id, olds);
    expect(read.props).toEqual({ ...olds, schemaVersion: SCHEMA_VERSION });
    expect(read.inputs).toBeUndefined();
    expect(await provider.diff(DRIFTED_0_1_0.id, olds, stored)).toEqual({ changes: false });
  });

  it("the program shows the drift as a change, and the update and delete work", async () => {
    // The quickstart program: its client secret, no max_retries.
    const { clientSecretHash: _h, maxRetries: _r, ...program } = DRIFTED_0_1_0.inputs;
    const checked = await provider.check(stored, { ...program, clientSecret: QUICKSTART_SECRET });
    expect(checked.failures ?? []).toEqual([]);
    const news = checked.inputs as never;
    expect((await provider.diff(DRIFTED_0_1_0.id, olds, news)).changes).toBe(true);
    const up = await provider.update(DRIFTED_0_1_0.id, olds, news);
    expect(up.outs).toMatchObject({ schemaVersion: SCHEMA_VERSION, clientSecretHash: olds.clientSecretHash });
    expect(up.outs).not.toHaveProperty("maxRetries");
    await provider.delete(DRIFTED_0_1_0.id, olds);
    expect(await env.client.config.read("cloud")).toBeUndefined();
  });
});
