// The devserver's HCL2 jobspec parser, behind `POST /v1/jobs/parse` (scheduler-jobs-api.md, "Listing and
// registration": JobHCL, Canonicalize, Variables). It follows the real endpoint: the text is named input.hcl in
// diagnostics, variables come only as var-file text, file functions are off, undeclared var-file values are ignored
// (non-strict), and failures read "Failed to parse job: <diagnostics>" (or "Job spec is empty").

import { BudgetError, scanSource, withBudget } from "./budget";
import { canonicalizeJob } from "./canonicalize";
import { hclToJson } from "./engine";
import { decodeJob } from "./job";
import { type OutlineBlock, type OutlineItem, formatPos, outline } from "./outline";
import { DiagnosticsError, EvalError, type HclObject, type HclValue, formatDiag, isObject } from "./values";
import { resolveVariables } from "./vars";

export { canonicalizeJob };

/** Name the parse endpoint gives the submitted text in diagnostics (kept in sync with the real endpoint). */
const FILENAME = "input.hcl";

/** A jobspec that cannot be turned into a job; `message` is the text the parse endpoint answers with (status 400). */
export class JobspecError extends Error {
  override readonly name = "JobspecError";
}

/** Options of {@link parseJobspec}, named after the parse endpoint's body fields. */
export interface ParseJobspecOptions {
  /** Var-file text (`name = value` lines) whose values override variable defaults. */
  readonly variables?: string;
  /** Fill unset fields with the client library's defaults, like the endpoint's `Canonicalize`. */
  readonly canonicalize?: boolean;
}

/** Renders the parser's diagnostic text like Go's hcl.Diagnostics.Error(): the first one, plus a count of the rest. */
function parserDiagnostics(raw: string): string {
  const inner = raw.replace(/^parse config: \[/, "").replace(/\]$/, "");
  const parts = inner.split(/ (?=\S+\.hcl:\d+,\d+)/);
  return parts.length > 1 ? `${parts[0] as string}, and ${parts.length - 1} other diagnostic(s)` : inner;
}

function checkSource(text: string, prefix: string): void {
  const { problem } = scanSource(text);
  if (problem === undefined) return;
  const pos = formatPos(FILENAME, { line: problem.line, col: problem.col, endCol: problem.col + 1 });
  throw new JobspecError(
    `Failed to parse job: ${prefix}${formatDiag(pos, "Evaluation budget exceeded", problem.detail)}`,
  );
}

function parseFile(text: string): { value: HclObject } | { error: string } {
  const r = hclToJson(FILENAME, text);
  if (!r.ok) return { error: parserDiagnostics(r.error) };
  const value = JSON.parse(r.json) as HclValue;
  return { value: isObject(value) ? value : {} };
}

/** Checks the top level holds only variable, variables, locals and one job block; returns the job block. */
function topLevel(
  top: HclObject,
  items: readonly OutlineItem[] | undefined,
): { id: string; body: HclObject; items?: readonly OutlineItem[] } {
  const allowed = ["variable", "variables", "locals", "job"];
  const diags: string[] = [];
  for (const item of items ?? []) {
    const pos = formatPos(FILENAME, item.pos);
    if (item.kind === "attr")
      diags.push(formatDiag(pos, "Unsupported argument", `An argument named "${item.name}" is not expected here.`));
    else if (!allowed.includes(item.type))
      diags.push(formatDiag(pos, "Unsupported block type", `Blocks of type "${item.type}" are not expected here.`));
    else if ((item.type === "job" || item.type === "variable") && item.labels.length !== 1) {
      diags.push(
        item.labels.length === 0
          ? formatDiag(pos, `Missing name for ${item.type}`, `All ${item.type} blocks must have 1 labels (name).`)
          : formatDiag(
              pos,
              `Extraneous label for ${item.type}`,
              `Only 1 labels (name) are expected for ${item.type} blocks.`,
            ),
      );
    }
  }
  if (diags.length) throw new DiagnosticsError(diags);
  const jobs = (items ?? []).filter((i): i is OutlineBlock => i.kind === "block" && i.type === "job");
  if (jobs.length > 1) {
    const [first, second] = jobs as [OutlineBlock, OutlineBlock];
    throw new DiagnosticsError([
      formatDiag(
        formatPos(FILENAME, second.pos),
        "Duplicate job block",
        `Only one block of type "job" is allowed. Previous definition was at ${formatPos(FILENAME, first.pos)}.`,
      ),
    ]);
  }
  const byLabel = isObject(top["job"]) ? top["job"] : {};
  const id = jobs[0]?.labels[0] ?? Object.keys(byLabel)[0];
  const bodies = id === undefined ? undefined : byLabel[id];
  const body = Array.isArray(bodies) ? bodies[0] : undefined;
  if (id === undefined || !isObject(body))
    throw new DiagnosticsError([formatDiag(undefined, "Missing job block", "A job block is required")]);
  return { id, body, ...(jobs[0] ? { items: jobs[0].body } : {}) };
}

/**
 * Parses an HCL2 jobspec into the job API's JSON (the bare Job object), evaluating variables from
 * their defaults and the optional var-file text; throws {@link JobspecError} with the endpoint's message.
 */
export function parseJobspec(hcl: string, opts: ParseJobspecOptions = {}): Record<string, unknown> {
  if (hcl === "") throw new JobspecError("Job spec is empty");
  // The parser's cost grows faster than its input: its limits are checked first, in one linear pass.
  checkSource(hcl, "");
  if (opts.variables) checkSource(opts.variables, "unable to parse var content: ");
  const main = parseFile(hcl);
  let varFile: HclObject | undefined;
  if (opts.variables) {
    const vars = parseFile(opts.variables);
    if ("error" in vars) throw new JobspecError(`Failed to parse job: unable to parse var content: ${vars.error}`);
    varFile = vars.value;
  }
  if ("error" in main) throw new JobspecError(`Failed to parse job: ${main.error}`);
  try {
    const items = outline(hcl);
    const job = topLevel(main.value, items);
    return withBudget(() => {
      const scope = resolveVariables(main.value, items, varFile, FILENAME);
      const diags: string[] = [];
      const decoded = decodeJob(job.body, job.items, job.id, { filename: FILENAME, scope, diags });
      if (diags.length) throw new DiagnosticsError(diags);
      return opts.canonicalize ? canonicalizeJob(decoded) : decoded;
    });
  } catch (e) {
    if (e instanceof DiagnosticsError) throw new JobspecError(`Failed to parse job: ${e.message}`);
    if (e instanceof EvalError || e instanceof BudgetError)
      throw new JobspecError(`Failed to parse job: ${formatDiag(undefined, e.summary, e.detail)}`);
    throw e;
  }
}
