// Go's time.ParseDuration, because jobspec durations ("30s", "1h30m", "1.5s") follow its grammar and
// the job API carries them as integer nanoseconds.

const UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n,
  "\u03bcs": 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX = (1n << 63n) - 1n;

/** Parses a Go-style duration ("300ms", "-1.5h", "2h45m") into nanoseconds; throws with Go's message on bad input. */
export function parseDuration(text: string): number {
  const quoted = JSON.stringify(text);
  const invalid = (): Error => new Error(`time: invalid duration ${quoted}`);
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid();
  let total = 0n;
  while (s !== "") {
    const num = /^([0-9]*)(?:\.([0-9]*))?/.exec(s);
    const whole = num?.[1] ?? "";
    const frac = num?.[2] ?? "";
    if (!num || (whole === "" && frac === "")) throw invalid();
    s = s.slice(num[0].length);
    const unitText = /^[^0-9.]*/.exec(s)?.[0] ?? "";
    if (unitText === "") throw new Error(`time: missing unit in duration ${quoted}`);
    const unit = UNITS[unitText];
    if (unit === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unitText)} in duration ${quoted}`);
    s = s.slice(unitText.length);
    let value = BigInt(whole || "0") * unit;
    if (frac !== "") value += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += value;
    if (total > MAX) throw invalid();
  }
  return Number(negative ? -total : total);
}
