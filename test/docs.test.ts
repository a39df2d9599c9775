/**
 * The README and the guides under docs/ link to each other: every relative link names a file that exists,
 * every `#anchor` a heading of the file it points into (GitHub's anchors), every guide is reachable
 * from the README, and every reference page under docs/reference/ from docs/resources.md.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(__dirname, "..");

/** The text outside fenced code blocks and inline code spans (links there are not links). */
function prose(md: string): string {
  return md
    .replace(/^(\s*)```[^\n]*\n[\s\S]*?^\1```\s*$/gm, "")
    .replace(/^ {4}.*$/gm, "")
    .replace(/`[^`\n]*`/g, "``");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^(\s*)```[^\n]*\n[\s\S]*?^\1```\s*$/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (m[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The broken relative links of one Markdown file, as `file: target (why)`. */
function brokenLinks(file: string, md: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const m of prose(md).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [path = "", anchor] = target.split("#", 2);
    const into = path === "" ? file : relative(ROOT, join(dirname(join(ROOT, file)), decodeURIComponent(path)));
    const text = read(into);
    if (text === undefined) {
      broken.push(`${file}: ${target} (no file ${into})`);
      continue;
    }
    if (anchor !== undefined && !anchors(text).has(anchor))
      broken.push(`${file}: ${target} (no heading with the anchor #${anchor} in ${into})`);
  }
  return broken;
}

const readRepo = (path: string): string | undefined => {
  const full = join(ROOT, path);
  if (!existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
};

const markdown = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `${dir}/${f}`);
const GUIDES = markdown("docs");
/** The generated reference pages (docs/reference/*.md), one per resource definition. */
const REFERENCE = markdown("docs/reference");
/** The developers' pages under docs/development/ (the performance history, say). */
const DEVELOPMENT = markdown("docs/development");
const FILES = ["README.md", "CHANGELOG.md", ...GUIDES, ...REFERENCE, ...DEVELOPMENT];

describe("links in the README and docs/", () => {
  it("anchors are GitHub's", () => {
    const a = anchors(
      "# Title\n## Moving a mount: remount\n### Batch jobs: `waitForCompletion`, `runOnce`\n## Title\n",
    );
    expect([...a]).toEqual(["title", "moving-a-mount-remount", "batch-jobs-waitforcompletion-runonce", "title-1"]);
  });

  it("the check finds a missing file, a missing anchor and a missing anchor in another file", () => {
    const files: Record<string, string> = {
      "README.md": "# Top\n\n[a](docs/a.md#there) [b](docs/gone.md) [c](#nowhere) [d](#top) `[e](#code)`\n",
      "docs/a.md": "# A\n\n## Here\n\n[back](../README.md#top) [up](../README.md#not-a-heading)\n",
    };
    const read = (p: string) => files[p];
    expect(brokenLinks("README.md", files["README.md"] ?? "", read)).toEqual([
      "README.md: docs/a.md#there (no heading with the anchor #there in docs/a.md)",
      "README.md: docs/gone.md (no file docs/gone.md)",
      "README.md: #nowhere (no heading with the anchor #nowhere in README.md)",
    ]);
    expect(brokenLinks("docs/a.md", files["docs/a.md"] ?? "", read)).toEqual([
      "docs/a.md: ../README.md#not-a-heading (no heading with the anchor #not-a-heading in README.md)",
    ]);
  });

  it("every relative link and #anchor resolves, in the guides and in the reference pages", () => {
    expect(GUIDES.length).toBeGreaterThan(3);
    expect(REFERENCE.length).toBeGreaterThan(0);
    const broken = FILES.flatMap((f) => brokenLinks(f, readFileSync(join(ROOT, f), "utf8"), readRepo));
    expect(broken).toEqual([]);
  });

  it("the README links to every guide under docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const f of GUIDES) expect(readme, f).toContain(`](${f}`);
  });

  it("docs/development.md links to every page under docs/development/", () => {
    expect(DEVELOPMENT.length).toBeGreaterThan(0);
    const development = readFileSync(join(ROOT, "docs/development.md"), "utf8");
    for (const f of DEVELOPMENT) expect(development, f).toContain(`](${relative("docs", f)})`);
  });

  it("docs/resources.md links to every reference page", () => {
    const resources = readFileSync(join(ROOT, "docs/resources.md"), "utf8");
    for (const f of REFERENCE) expect(resources, f).toContain(`](${relative("docs", f)})`);
  });
});
