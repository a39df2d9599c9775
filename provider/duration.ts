/**
 * The one parser of Go duration text in the provider ("90s", "1h30m", "1.5h", "250ms"), as both services
 * read durations: a sequence of decimal numbers, each with a unit, with an optional leading `-`. The secrets
 * service also takes a day unit (`d`), which callers for it turn on.
 */

/** Milliseconds per unit; `µs` is the micro sign and `μs` the Greek letter mu, as Go takes both. */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Returns the milliseconds of a Go duration text (negative with a leading `-`), or undefined when the text is
 * not one. A bare number without a unit is not a duration here: callers decide what plain numbers mean.
 */
export function parseGoDuration(text: string, opts: { days?: boolean } = {}): number | undefined {
  const negative = text.startsWith("-");
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h|d)/y;
  part.lastIndex = negative ? 1 : 0;
  if (part.lastIndex === text.length) return undefined;
  let total = 0;
  let m: RegExpExecArray | null;
  while (part.lastIndex < text.length && (m = part.exec(text)) !== null) {
    const unit = m[2] ?? "";
    if (unit === "d" && opts.days !== true) return undefined;
    total += Number(m[1]) * (UNIT_MS[unit] ?? 0);
  }
  if (part.lastIndex !== text.length) return undefined;
  return negative ? -total : total;
}
