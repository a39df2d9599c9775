/**
 * The program side, under `pulumi.runtime.setMocks` in a plain Node child with the library installed:
 * what the SDK classes register. Secret inputs must reach the engine wrapped as secrets, and every output
 * derived from secret material must be listed in `additionalSecretOutputs` (the engine marks those secret
 * in state; the mock monitor does not apply that list itself, so the request is what can be asserted).
 * Two resources of one type must carry the same `__provider` text as serialize.cjs produced.
 */
import { describe, expect, it } from "vitest";
import { runChild } from "../harness/child";
import { KINDS, type EngineContext, type Kind } from "../harness/context";
import { isSecretWrapped, type Props } from "../harness/host";
import { CLIENT_ID, TENANT_ID, webJobspec } from "./scenarios";

interface ProgramSpec {
  cls: string;
  name: string;
  args: Props;
  secretArgs?: string[];
  state?: Props;
}

interface ProgramOutput {
  registrations: { type: string; name: string; additionalSecretOutputs: string[] }[];
  seen: Record<string, { type: string; inputs: Props }>;
  outputs: Record<string, Record<string, { secret: boolean; value: unknown }>>;
}

/** Per class: the kind, sample args, the args passed as secrets, and outputs derived from secrets. */
const CLASSES: readonly {
  cls: string;
  kind: Kind;
  args: Props;
  secretArgs: string[];
  derivedSecrets: string[];
  state?: Props;
}[] = [
  { cls: "AuthMount", kind: "auth-mount", args: { path: "cloud" }, secretArgs: [], derivedSecrets: [] },
  {
    cls: "AuthConfig",
    kind: "auth-config",
    args: {
      mount: "cloud",
      tenantId: TENANT_ID,
      resource: "https://management.example/",
      clientId: CLIENT_ID,
      clientSecret: "program-secret-value",
    },
    secretArgs: ["clientSecret"],
    derivedSecrets: ["clientSecretHash"],
    state: { clientSecretHash: "scrypt$16384$8$1$c2FsdA$aGFzaA" },
  },
  {
    cls: "AuthRole",
    kind: "auth-role",
    args: { mount: "cloud", name: "web", tokenPolicies: ["web"] },
    secretArgs: [],
    derivedSecrets: [],
  },
  { cls: "Job", kind: "job", args: { jobspec: webJobspec("web") }, secretArgs: [], derivedSecrets: [] },
  {
    cls: "JobVersionTag",
    kind: "job-version-tag",
    args: { jobId: "web", name: "stable" },
    secretArgs: [],
    derivedSecrets: [],
  },
];

/** Registers the program tests. */
export function programSuite(get: () => EngineContext): void {
  describe("program under setMocks (child process, installed package)", () => {
    let result: ProgramOutput | undefined;
    const run = async (): Promise<ProgramOutput> => {
      if (result === undefined) {
        const specs: ProgramSpec[] = CLASSES.flatMap((c) =>
          ["a", "b"].map((suffix) => ({
            cls: c.cls,
            name: `${c.kind}-${suffix}`,
            args: c.args,
            secretArgs: c.secretArgs,
            ...(c.state ? { state: c.state } : {}),
          })),
        );
        const { value } = await runChild<ProgramOutput>(get().projects[0], "program.cjs", [], {
          input: JSON.stringify(specs),
        });
        result = value;
      }
      return result;
    };

    it("registers each class under its own type token", async () => {
      const out = await run();
      for (const c of CLASSES) {
        expect(out.seen[`${c.kind}-a`]?.type).toBe(`pulumi-nodejs:dynamic/pulumi-secrets-scheduler:${c.cls}`);
      }
    });

    it("stores the same __provider text for every resource of a type, equal to the serialized shim", async () => {
      const out = await run();
      const ctx = get();
      for (const kind of KINDS) {
        const a = out.seen[`${kind}-a`]?.inputs.__provider;
        const b = out.seen[`${kind}-b`]?.inputs.__provider;
        expect(a).toBe(ctx.provider(kind));
        expect(b).toBe(a);
      }
    });

    it.each(CLASSES.filter((c) => c.secretArgs.length > 0).map((c) => [c.cls, c] as const))(
      "%s: secret inputs reach the engine wrapped, and their outputs stay secret",
      async (_cls, c) => {
        const out = await run();
        const name = `${c.kind}-a`;
        for (const arg of c.secretArgs) {
          expect(isSecretWrapped(out.seen[name]?.inputs[arg]), `${arg} input`).toBe(true);
          // The output of the same name, where the class declares one, resolves as a secret.
          const o = out.outputs[name]?.[arg];
          if (o !== undefined) expect(o.secret, `${arg} output`).toBe(true);
        }
        // No secret may travel in plaintext beside the wrapper (e.g. copied into another input).
        const plain = JSON.stringify({
          ...out.seen[name]?.inputs,
          ...Object.fromEntries(c.secretArgs.map((a) => [a, null])),
        });
        for (const arg of c.secretArgs) expect(plain).not.toContain(String(c.args[arg]));
      },
    );

    it.each(CLASSES.map((c) => [c.cls, c] as const))(
      "%s: secret inputs and derived secret outputs are in additionalSecretOutputs",
      async (_cls, c) => {
        const out = await run();
        const reg = out.registrations.find((r) => r.name === `${c.kind}-a`);
        expect(reg).toBeDefined();
        for (const o of [...c.secretArgs, ...c.derivedSecrets]) expect(reg?.additionalSecretOutputs, o).toContain(o);
      },
    );

    it("puts no secret into any __provider text", async () => {
      const out = await run();
      for (const { inputs } of Object.values(out.seen))
        expect(String(inputs.__provider)).not.toContain("program-secret-value");
    });
  });
}
