/**
 * The Job's identity (ID, namespace, region, type) as checked inputs, so that a preview knows it.
 *
 * In a preview the engine does not call the dynamic provider's `update`: it takes the checked inputs as the
 * resource's outputs, and every output that is not among them is unknown. So a Job update showed its `jobId`
 * as unknown, and a JobVersionTag built on it showed `jobId: "web" => [unknown]` and counted as an update
 * that `up` never made. (`stables` from `diff` would be the usual answer, but the Node dynamic-provider host
 * drops them and the engine does not use them for previews.) The identity only changes with a replacement,
 * so `check` resolves it and adds it to the inputs: then those outputs stay known.
 *
 * A later `check` reuses the identity in the old inputs when the sources are the same (no request, and no
 * hash that would show as a changed input); a jobspec is parsed by the scheduler otherwise. `__resolvedKeys`
 * names the inputs `check` added, and the provider's other methods take them out again (`userInputs`), so
 * they see exactly what the user wrote. Its name starts with `__`: the engine's display leaves such keys out
 * of previews and diffs (as it does `__provider`), so a preview lists only what the user wrote and the
 * identity. (Releases up to 0.2.0 stored it as `resolvedKeys`; ../migrate.ts renames it.)
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { canonicalJson, containsUnknown } from "../common";
import { SOURCE_KEYS, type JobInputs } from "./inputs";
import { resolveDesired } from "./spec";

/** The Job inputs after `check`: what the user wrote, with the resolved identity. */
export type CheckedJobInputs = JobInputs & { jobId?: string; type?: string; __resolvedKeys?: string[] };

/** The input that names what `check` added (see above). */
const RESOLVED_KEYS = "__resolvedKeys" satisfies keyof CheckedJobInputs;

/**
 * Returns the inputs with the job's identity added. The user's own `namespace` and `region` stay as written;
 * when the user left them out, the resolved ones are added (they are what the job lands in either way).
 * Unknown sources at preview, or a jobspec the server cannot parse, leave the inputs as they are: `diff` and
 * `create` report the problem.
 */
export async function withIdentity(
  client: SchedulerClient,
  olds: Record<string, unknown>,
  inputs: JobInputs,
): Promise<CheckedJobInputs> {
  if (SOURCE_KEYS.some((k) => containsUnknown(inputs[k]))) return inputs;
  let identity: { jobId: string; namespace: string; region: string; type: string };
  if (sameSources(client, olds, inputs) && isIdentity(olds)) {
    identity = { jobId: olds.jobId, namespace: olds.namespace, region: olds.region, type: olds.type };
  } else {
    try {
      const d = await resolveDesired(client, inputs, true);
      if (d.identity.id === "") return inputs;
      identity = {
        jobId: d.identity.id,
        namespace: d.identity.namespace,
        region: d.identity.region,
        type: d.identity.type,
      };
    } catch {
      return inputs;
    }
  }
  const resolved = ["jobId", "type", ...(["namespace", "region"] as const).filter((k) => inputs[k] === undefined)];
  return { ...inputs, ...identity, [RESOLVED_KEYS]: resolved };
}

/**
 * True when the old inputs were checked from the same sources: the same jobspec, job and variables, and the
 * same namespace and region as the user wrote them. A namespace or region that was resolved (not written) is
 * reused only when it is what the connection's default gives, so a changed default resolves again (a job
 * that names its own namespace or region in the jobspec is then parsed again too: one request).
 */
function sameSources(client: SchedulerClient, olds: Record<string, unknown>, inputs: JobInputs): boolean {
  const resolved = olds[RESOLVED_KEYS];
  if (!Array.isArray(resolved)) return false;
  const conn = client.core.connection;
  if (resolved.includes("namespace") && olds.namespace !== (conn.namespace ?? "default")) return false;
  if (resolved.includes("region") && olds.region !== (conn.region ?? "global")) return false;
  const before = userInputs(olds as CheckedJobInputs);
  return SOURCE_KEYS.every((k) => canonicalJson(before[k] ?? null) === canonicalJson(inputs[k] ?? null));
}

/** Returns the inputs without what `check` added: what the user wrote. */
export function userInputs<T extends CheckedJobInputs>(inputs: T): JobInputs {
  // Copied without the keys left out rather than copied whole and deleted from: a deleted key turns the
  // copy into a slow dictionary object, and every diff reads it through (the inputs' hash among others).
  const listed = inputs[RESOLVED_KEYS];
  const resolved: readonly unknown[] = Array.isArray(listed) ? listed : [];
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(inputs)) {
    if (k === "jobId" || k === "type" || k === RESOLVED_KEYS || resolved.includes(k)) continue;
    out[k] = (inputs as Record<string, unknown>)[k];
  }
  return out as JobInputs;
}

function isIdentity(
  o: Record<string, unknown>,
): o is { jobId: string; namespace: string; region: string; type: string } {
  return (
    typeof o.jobId === "string" &&
    typeof o.namespace === "string" &&
    typeof o.region === "string" &&
    typeof o.type === "string"
  );
}
