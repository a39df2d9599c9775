/** A Job's variables map as var-file text (a module of its own: the masking of secrets needs it without the inputs' schema). */

/** A variable value the `variables` map may hold; rendered to var-file text. */
export type JobVariableValue = string | number | boolean;

/**
 * Renders a variables map as var-file text: one `name = value` line per key, sorted, strings quoted with
 * HCL's escapes (including `$${` and `%%{`, so a value is never read as a template).
 */
export function renderVarFile(vars: Record<string, JobVariableValue>): string {
  return Object.keys(vars)
    .sort()
    .map((k) => `${k} = ${hclValue(vars[k] as JobVariableValue)}\n`)
    .join("");
}

function hclValue(v: JobVariableValue): string {
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  // Replacer functions: in a replacement string "$$" would itself mean one "$".
  return JSON.stringify(v)
    .replace(/\$\{/g, () => "$${")
    .replace(/%\{/g, () => "%%{");
}
