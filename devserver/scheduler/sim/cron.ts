// Next launch time of a periodic job's cron spec (plan `NextPeriodicLaunch`). Supports the forms the
// scheduler's cron library accepts that jobspecs use: 5 fields (minute hour day month weekday), 6 fields
// (plus year), 7 fields (seconds first), names (JAN, MON), ranges, steps, lists, `?`, and the @hourly /
// @daily / @weekly / @monthly / @yearly shortcuts. `nextCronIn` evaluates the spec in an IANA time zone.

const SHORTCUTS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface Field {
  readonly any: boolean;
  readonly values: ReadonlySet<number>;
}

function parseField(text: string, min: number, max: number, names?: readonly string[], nameBase = 0): Field {
  if (text === "*" || text === "?") return { any: true, values: new Set() };
  const values = new Set<number>();
  const value = (t: string): number => {
    const i = names ? names.indexOf(t.toUpperCase()) : -1;
    const n = i >= 0 ? i + nameBase : Number(t);
    if (!Number.isInteger(n) || n < min || n > max + (names === DAYS ? 1 : 0))
      throw new Error(`value ${t} out of range`);
    return names === DAYS && n === 7 ? 0 : n;
  };
  for (const part of text.split(",")) {
    const [range = "", stepText] = part.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`invalid step in ${part}`);
    let lo: number;
    let hi: number;
    if (range === "*" || range === "?") {
      lo = min;
      hi = max;
    } else if (range.includes("-")) {
      const [a = "", b = ""] = range.split("-");
      lo = value(a);
      hi = value(b);
    } else {
      lo = value(range);
      hi = stepText === undefined ? lo : max;
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { any: false, values };
}

/** A parsed cron expression. */
export interface CronSpec {
  readonly seconds: Field;
  readonly minutes: Field;
  readonly hours: Field;
  readonly dom: Field;
  readonly months: Field;
  readonly dow: Field;
  readonly years: Field;
}

/** Parses a cron expression; throws an Error with the reason when it is invalid. */
export function parseCron(spec: string): CronSpec {
  const text = SHORTCUTS[spec.trim().toLowerCase()] ?? spec.trim();
  let parts = text.split(/\s+/);
  if (parts.length === 5) parts = ["0", ...parts, "*"];
  else if (parts.length === 6) parts = ["0", ...parts];
  if (parts.length !== 7) throw new Error(`missing field(s) in "${spec}"`);
  const [s = "", mi = "", h = "", d = "", mo = "", w = "", y = ""] = parts;
  return {
    seconds: parseField(s, 0, 59),
    minutes: parseField(mi, 0, 59),
    hours: parseField(h, 0, 23),
    dom: parseField(d, 1, 31),
    months: parseField(mo, 1, 12, MONTHS, 1),
    dow: parseField(w, 0, 6, DAYS, 0),
    years: parseField(y, 1970, 2199),
  };
}

function has(f: Field, v: number): boolean {
  return f.any || f.values.has(v);
}

function dayMatches(c: CronSpec, d: Date): boolean {
  const domOk = has(c.dom, d.getUTCDate());
  const dowOk = has(c.dow, d.getUTCDay());
  // Classic cron: when both day fields are restricted, either may match.
  if (!c.dom.any && !c.dow.any) return domOk || dowOk;
  return domOk && dowOk;
}

/** Returns the first time strictly after `from` that matches, or undefined within the next five years. */
function nextCron(spec: CronSpec, from: Date): Date | undefined {
  const t = new Date(Math.floor(from.getTime() / 1000) * 1000 + 1000);
  const limit = from.getTime() + 5 * 366 * 86_400_000;
  while (t.getTime() < limit) {
    if (!has(spec.years, t.getUTCFullYear())) {
      t.setUTCFullYear(t.getUTCFullYear() + 1, 0, 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!has(spec.months, t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(spec, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!has(spec.hours, t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (!has(spec.minutes, t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
      continue;
    }
    if (!has(spec.seconds, t.getUTCSeconds())) {
      t.setUTCSeconds(t.getUTCSeconds() + 1, 0);
      continue;
    }
    return t;
  }
  return undefined;
}

/** Returns the offset (ms) of `zone` from UTC at the instant `t`. */
function zoneOffset(t: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(t);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? "0");
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return wall - Math.floor(t.getTime() / 1000) * 1000;
}

/**
 * Returns the next launch after `from` with the spec read as wall-clock time in `zone` ("UTC" or an IANA
 * name); throws a RangeError for an unknown zone.
 */
export function nextCronIn(spec: CronSpec, from: Date, zone: string): Date | undefined {
  if (zone === "" || zone === "UTC") return nextCron(spec, from);
  const offset = zoneOffset(from, zone);
  const wall = nextCron(spec, new Date(from.getTime() + offset));
  if (wall === undefined) return undefined;
  // The offset at the launch may differ from now (daylight saving); settle it with a second pass.
  let t = new Date(wall.getTime() - offset);
  t = new Date(wall.getTime() - zoneOffset(t, zone));
  return t;
}
