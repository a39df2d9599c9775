/**
 * One behaviour for a key a resource does not have (a typo in a JavaScript program, or a cast in
 * TypeScript): every SDK class registers it, and the provider's `check` refuses it, naming the key. The
 * classes run under Pulumi mocks; what they registered goes to each kind's `check` (with the state
 * migrations the provider entry wraps it in), as the engine hands it over.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ProviderKind } from "../../provider";
import { authConfig } from "../../provider/resources/auth-config";
import { authMount } from "../../provider/resources/auth-mount";
import { authRole } from "../../provider/resources/auth-role";
import type { ProviderImpl } from "../../provider/resources/common";
import { job } from "../../provider/resources/job";
import { jobVersionTag } from "../../provider/resources/job-version-tag";
import { migrating } from "../../provider/resources/migrate";
import * as sdk from "../../sdk";
import { installMocks, outputValue, type MockRecorder } from "../helpers/mocks";

let rec: MockRecorder;

/** Each kind's provider, as the provider entry (provider/index.ts) serves it; typed: every kind is here. */
const providers: { readonly [K in ProviderKind]: ProviderImpl } = {
  authMount: migrating("authMount", authMount),
  authConfig: migrating("authConfig", authConfig),
  authRole: migrating("authRole", authRole),
  jobVersionTag: migrating("jobVersionTag", jobVersionTag),
  job: migrating("job", job),
};

beforeAll(async () => {
  rec = await installMocks((args) => ({ ...args.inputs, jobId: "web", version: 3 }));
});

/** Each class with arguments `check` accepts, and a misspelt key added. */
const CASES: Array<{ kind: ProviderKind; make: (name: string, typo: Record<string, unknown>) => { urn: unknown } }> = [
  { kind: "authMount", make: (n, typo) => new sdk.AuthMount(n, { description: "d", ...typo }) },
  {
    kind: "authConfig",
    make: (n, typo) =>
      new sdk.AuthConfig(n, {
        tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47",
        resource: "https://management.azure.com/",
        ...typo,
      }),
  },
  { kind: "authRole", make: (n, typo) => new sdk.AuthRole(n, { name: "web", boundGroupIds: ["g"], ...typo }) },
  { kind: "jobVersionTag", make: (n, typo) => new sdk.JobVersionTag(n, { jobId: "web", name: "v1", ...typo }) },
  { kind: "job", make: (n, typo) => new sdk.Job(n, { jobspec: 'job "web" {}', ...typo }) },
];

describe("a key the resource does not have", () => {
  it("every resource kind has a case here", () => {
    expect(CASES.map((c) => c.kind).sort()).toEqual(Object.keys(providers).sort());
  });

  it.each(CASES)("$kind: the class registers it and check refuses it by name", async ({ kind, make }) => {
    const name = `typo-${kind}`;
    const r = make(name, { descripton: "typo" });
    await outputValue(r.urn as never);
    const registered = rec.registered.find((x) => x.name === name);
    expect(registered?.inputs).toHaveProperty("descripton", "typo");
    const { __provider: _p, ...inputs } = registered?.inputs ?? {};

    const refused = await providers[kind].check({}, inputs);
    expect(refused.failures).toEqual([{ property: "descripton", reason: expect.stringContaining('"descripton"') }]);

    // Without it, the same inputs pass.
    const { descripton: _d, ...known } = inputs;
    expect((await providers[kind].check({}, known)).failures ?? []).toEqual([]);
  });
});
