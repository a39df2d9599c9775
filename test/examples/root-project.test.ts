/**
 * The repository's own Pulumi project: the root Pulumi.yaml runs examples/root/index.ts, which
 * is the quickstart's program but for the jobspec's path, from a directory inside this package (no
 * package.json of its own), so Node resolves `pulumi-secrets-scheduler` by the package's self-reference.
 * `npm run example -- root` (run by .ci/run) deploys it through the real CLI; this checks the layout that
 * makes that work without a CLI or a build.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(__dirname, "..", "..");
const read = (p: string): string => readFileSync(join(ROOT, p), "utf8");
const HEADER_END = "// ---- examples/quickstart/index.ts ----\n";

/** The top-level `key: value` scalars of a small YAML file (all Pulumi.yaml needs here). */
function topLevel(yaml: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of yaml.split("\n")) {
    const m = /^([A-Za-z]+):\s*(\S.*)?$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2].trim();
  }
  return out;
}

describe("the root Pulumi project", () => {
  const project = topLevel(read("Pulumi.yaml"));

  it("runs examples/root/index.ts as the quickstart's project, in TypeScript", () => {
    expect(project.main).toBe("examples/root/index.ts");
    expect(project.name).toBe(topLevel(read("examples/quickstart/Pulumi.yaml")).name);
    expect(read("Pulumi.yaml")).toMatch(/runtime:\n\s+name: nodejs\n\s+options:\n\s+typescript: true/);
  });

  it("is the quickstart's program line for line, but for the jobspec's path", () => {
    const root = read("examples/root/index.ts");
    const at = root.indexOf(HEADER_END);
    expect(at).toBeGreaterThan(0);
    const body = root.slice(at + HEADER_END.length);
    const quickstart = read("examples/quickstart/index.ts");
    const same = quickstart.replace(
      'path.join(__dirname, "web.nomad.hcl")',
      'path.join(__dirname, "..", "quickstart", "web.nomad.hcl")',
    );
    expect(same).not.toBe(quickstart);
    expect(body).toBe(same);
    expect(existsSync(join(ROOT, "examples", "quickstart", "web.nomad.hcl"))).toBe(true);
  });

  it("finds the library by self-reference: no package.json between the program and the package's", () => {
    const pkg = JSON.parse(read("package.json")) as { name: string; exports: Record<string, unknown> };
    expect(pkg.name).toBe("pulumi-secrets-scheduler");
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining([".", "./provider"]));
    for (let d = join(ROOT, dirname(project.main ?? "")); d !== ROOT; d = dirname(d)) {
      expect(existsSync(join(d, "package.json")), `${d} has no package.json`).toBe(false);
    }
    // ts-node reads the program directory's tsconfig (else its defaults, whose resolution ignores `exports`).
    const tsconfig = JSON.parse(read("examples/root/tsconfig.json")) as {
      compilerOptions: { moduleResolution: string };
    };
    expect(tsconfig.compilerOptions.moduleResolution).toMatch(/^(node16|nodenext|bundler)$/i);
  });
});
