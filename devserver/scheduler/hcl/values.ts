// Values of the HCL type system as plain JSON data, and the evaluation error type.

/** A value of the HCL type system as plain JSON data. */
export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue };
export type HclObject = { [key: string]: HclValue };

/** An evaluation failure; `summary` and `detail` follow HCL's diagnostic wording. */
export class EvalError extends Error {
  constructor(
    readonly summary: string,
    readonly detail: string,
  ) {
    super(`${summary}; ${detail}`);
  }
}

/** Returns true for a plain (non-list) object value. */
export function isObject(v: HclValue | undefined): v is HclObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Describes a value's type in HCL's words, for messages. */
export function typeName(v: HclValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "tuple";
  if (isObject(v)) return "object";
  return typeof v === "boolean" ? "bool" : typeof v;
}

/** Renders a value inside a string template; only primitives can be. */
export function stringify(v: HclValue): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) {
    throw new EvalError(
      "Invalid template interpolation value",
      "The expression result is null. Cannot include a null value in a string template.",
    );
  }
  throw new EvalError(
    "Invalid template interpolation value",
    "Cannot include the given value in a string template: string required.",
  );
}

/** Formats one diagnostic the way HCL's Go library renders it: `subject: summary; detail` (subject `<nil>` when absent). */
export function formatDiag(subject: string | undefined, summary: string, detail: string): string {
  return `${subject ?? "<nil>"}: ${summary}; ${detail}`;
}

/** One or more formatted diagnostics (joined by newlines, as the jobspec decoder reports them). */
export class DiagnosticsError extends Error {
  constructor(readonly diags: readonly string[]) {
    super(diags.join("\n"));
  }
}
