/**
 * The secrets service's cloud-identity auth method, driven over plain HTTP the same way against a real
 * server (to record what it answers) and against the devserver (to check it answers the same): moving a
 * mount with `sys/remount`, enabling with a `plugin_version`, a DELETE of a mount's tune, and the
 * workload-identity settings of the method's config. Each step keeps the request, the status and the parts
 * of the answer that do not vary between runs (IDs, accessors, times and the run's unique names are
 * replaced).
 */
export interface HttpTarget {
  address: string;
  token: string;
  /** The auth method's type name on this server (`azure` on the real service). */
  methodType: string;
}

export interface SecretsContext {
  target: HttpTarget;
  /** A path unique to the run (a real server is shared between runs). */
  name(label: string): string;
  timeoutMs: number;
}

export interface SecretsTranscript {
  scenario: string;
  steps: { step: string; [k: string]: unknown }[];
}

type Obj = Record<string, unknown>;

interface Answer {
  status: number;
  body: unknown;
}

async function call(t: HttpTarget, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${t.address}/v1/${path}`, {
    method,
    headers: { "X-Vault-Token": t.token, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body: parsed };
}

/** Replaces the run's names and anything ID- or time-like, so two runs compare. */
function sanitize(v: unknown, names: Map<string, string>): unknown {
  if (typeof v === "string") {
    let s = v;
    for (const [real, label] of names) s = s.split(real).join(label);
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s)) return "<uuid>";
    if (/^auth_[a-z0-9-]+_[0-9a-f]{8}$/.test(s)) return "<accessor>";
    if (/^\d{4}-\d{2}-\d{2}T/.test(s)) return "<time>";
    return s;
  }
  if (Array.isArray(v)) return v.map((x) => sanitize(x, names));
  if (v !== null && typeof v === "object") {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v as Obj).sort(([a], [b]) => a.localeCompare(b))) {
      let key = k;
      for (const [real, label] of names) key = key.split(real).join(label);
      out[key] = sanitize(x, names);
    }
    return out;
  }
  return v;
}

/** The fields of an answer a transcript keeps: errors, and `pick` of its data. */
function kept(a: Answer, pick: (data: Obj) => unknown): Obj {
  const body = (a.body ?? {}) as Obj;
  const out: Obj = { status: a.status };
  if (Array.isArray(body.errors)) out.errors = body.errors;
  if (body.data !== undefined && body.data !== null) out.data = pick(body.data as Obj);
  return out;
}

const only =
  (...keys: string[]) =>
  (d: Obj): Obj =>
    Object.fromEntries(keys.filter((k) => k in d).map((k) => [k, d[k]]));

async function until<T>(ctx: SecretsContext, what: string, read: () => Promise<T>, done: (v: T) => boolean) {
  const end = Date.now() + ctx.timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CONFIG = { tenant_id: "00000000-0000-0000-0000-000000000001", resource: "https://management.azure.com/" };

/** Moves a configured mount with a role to a new path. */
async function remount(ctx: SecretsContext): Promise<SecretsTranscript> {
  const t = ctx.target;
  const from = ctx.name("from");
  const to = ctx.name("to");
  const names = new Map([
    [from, "<from>"],
    [to, "<to>"],
  ]);
  const steps: SecretsTranscript["steps"] = [];
  const add = (step: string, a: Answer, pick: (d: Obj) => unknown = () => undefined) =>
    steps.push({ step, ...(sanitize(kept(a, pick), names) as Obj) });
  try {
    add("enable", await call(t, "POST", `sys/auth/${from}`, { type: t.methodType }));
    add("write config", await call(t, "POST", `auth/${from}/config`, CONFIG));
    add("write role", await call(t, "POST", `auth/${from}/role/app`, { bound_subscription_ids: ["sub-1"] }));
    const moved = await call(t, "POST", "sys/remount", { from: `auth/${from}`, to: `auth/${to}` });
    add("remount", moved, only("migration_id"));
    const id = ((moved.body as Obj | null)?.data as Obj | undefined)?.migration_id;
    if (typeof id === "string") {
      const done = await until(
        ctx,
        "remount",
        () => call(t, "GET", `sys/remount/status/${id}`),
        (a) =>
          ((((a.body as Obj).data as Obj | undefined)?.migration_info as Obj | undefined)?.status ?? "") !==
          "in-progress",
      );
      add("remount status", done, (d) => ({
        migration_id: d.migration_id,
        migration_info: only("source_mount", "target_mount", "status")(d.migration_info as Obj),
      }));
    }
    const mounts = await call(t, "GET", "sys/auth");
    const listed = ((mounts.body as Obj).data ?? mounts.body) as Obj;
    steps.push({
      step: "mounts after",
      from: `${from}/` in listed,
      to: ((listed[`${to}/`] as Obj | undefined)?.type as string | undefined) ?? null,
    });
    add("config at new path", await call(t, "GET", `auth/${to}/config`), only("tenant_id", "resource"));
    add("roles at new path", await call(t, "GET", `auth/${to}/role?list=true`), only("keys"));
    add("config at old path", await call(t, "GET", `auth/${from}/config`));
    return { scenario: "remount", steps };
  } finally {
    await call(t, "DELETE", `sys/auth/${from}`).catch(() => undefined);
    await call(t, "DELETE", `sys/auth/${to}`).catch(() => undefined);
  }
}

/**
 * Enables the method with a plugin version the catalog lacks, in `config` and at the top level of the
 * request, reads what runs, and tunes to that version.
 */
async function pluginVersion(ctx: SecretsContext): Promise<SecretsTranscript> {
  const t = ctx.target;
  const path = ctx.name("pv");
  const names = new Map([[path, "<path>"]]);
  const steps: SecretsTranscript["steps"] = [];
  const add = (step: string, a: Answer, pick: (d: Obj) => unknown = () => undefined) =>
    steps.push({ step, ...(sanitize(kept(a, pick), names) as Obj) });
  try {
    add(
      "enable with an unregistered version in config",
      await call(t, "POST", `sys/auth/${path}`, { type: t.methodType, config: { plugin_version: "v9.9.9" } }),
    );
    add(
      "enable with an unregistered version at the top level",
      await call(t, "POST", `sys/auth/${path}`, { type: t.methodType, plugin_version: "v9.9.9" }),
    );
    const mounts = await call(t, "GET", "sys/auth");
    const listed = ((mounts.body as Obj).data ?? mounts.body) as Obj;
    const m = (listed[`${path}/`] ?? {}) as Obj;
    steps.push({
      step: "mount as listed",
      type: m.type,
      plugin_version: m.plugin_version ?? null,
      has_running_plugin_version: typeof m.running_plugin_version === "string",
      running_sha256_is_set: typeof m.running_sha256 === "string" && m.running_sha256 !== "",
    });
    add(
      "tune to an unregistered version",
      await call(t, "POST", `sys/auth/${path}/tune`, { plugin_version: "v9.9.9" }),
    );
    return { scenario: "plugin-version", steps };
  } finally {
    await call(t, "DELETE", `sys/auth/${path}`).catch(() => undefined);
  }
}

/** Writes the workload-identity settings on the method's config, and reads the config back. */
async function workloadIdentity(ctx: SecretsContext): Promise<SecretsTranscript> {
  const t = ctx.target;
  const path = ctx.name("wif");
  const names = new Map([[path, "<path>"]]);
  const steps: SecretsTranscript["steps"] = [];
  const add = (step: string, a: Answer, pick: (d: Obj) => unknown = () => undefined) =>
    steps.push({ step, ...(sanitize(kept(a, pick), names) as Obj) });
  try {
    add("enable", await call(t, "POST", `sys/auth/${path}`, { type: t.methodType }));
    add(
      "write identity_token_audience",
      await call(t, "POST", `auth/${path}/config`, {
        ...CONFIG,
        identity_token_audience: "api://AzureADTokenExchange",
      }),
    );
    add(
      "write identity_token_ttl",
      await call(t, "POST", `auth/${path}/config`, { ...CONFIG, identity_token_ttl: 600 }),
    );
    add(
      "read config",
      await call(t, "GET", `auth/${path}/config`),
      only("tenant_id", "resource", "identity_token_audience", "identity_token_ttl"),
    );
    return { scenario: "workload-identity", steps };
  } finally {
    await call(t, "DELETE", `sys/auth/${path}`).catch(() => undefined);
  }
}

/**
 * Sends a DELETE to both paths of a mount's tune, which have a read and an update only, and lists the mounts
 * after: the mount is still there (such a DELETE is not the disable of a mount named `<path>/tune`).
 */
async function tuneDelete(ctx: SecretsContext): Promise<SecretsTranscript> {
  const t = ctx.target;
  const path = ctx.name("tune");
  const names = new Map([[path, "<path>"]]);
  const steps: SecretsTranscript["steps"] = [];
  const add = (step: string, a: Answer) =>
    steps.push({
      step,
      ...(sanitize(
        kept(a, () => undefined),
        names,
      ) as Obj),
    });
  try {
    add("enable", await call(t, "POST", `sys/auth/${path}`, { type: t.methodType }));
    add("DELETE sys/auth/<path>/tune", await call(t, "DELETE", `sys/auth/${path}/tune`));
    add("DELETE sys/mounts/auth/<path>/tune", await call(t, "DELETE", `sys/mounts/auth/${path}/tune`));
    const mounts = await call(t, "GET", "sys/auth");
    const listed = ((mounts.body as Obj).data ?? mounts.body) as Obj;
    steps.push({ step: "mount still listed", listed: `${path}/` in listed });
    return { scenario: "tune-delete", steps };
  } finally {
    await call(t, "DELETE", `sys/auth/${path}`).catch(() => undefined);
  }
}

export const SECRETS_SCENARIOS: Record<string, (ctx: SecretsContext) => Promise<SecretsTranscript>> = {
  remount,
  "tune-delete": tuneDelete,
  "plugin-version": pluginVersion,
  "workload-identity": workloadIdentity,
};
