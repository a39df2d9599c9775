/**
 * One job list serves a host's refresh. The engine asks `read` for every resource of a stack in one
 * provider host; instead of reading each job, the reads of one connection, namespace and region that
 * arrive together are answered from one `GET /v1/jobs` filtered to their IDs (the list reports each job's
 * JobModifyIndex, Stop and Status). `read` reads a job in full only when the list shows it moved, stopped
 * or missing.
 *
 * Each job of a list serves one read: a resource is read once per refresh, so a second read of the same job
 * in the same process (a later refresh, a test) lists again instead of trusting an old list. A list also
 * stops serving once the connection sends anything that may change what the server holds
 * (`HttpCore.writes`), this host's own writes included. Reads that come after the first list (an engine
 * run with a small `--parallel` sends them a few at a time) are answered by one more list of the whole
 * namespace, so a refresh sends at most two lists per namespace and region whatever the engine's
 * parallelism, and one when the engine sends its reads at once (its default). A list the server refuses
 * (a token without `list-jobs`) or that fails leaves each read to read its job in full, as before.
 *
 * The filter is one anchored regular expression over the IDs (`ID matches`): the scheduler parses and
 * evaluates an `ID == … or …` chain of 1,000 IDs in about 60 ms and the same IDs as one expression in about
 * 12 ms. A filter longer than {@link MAX_FILTER_CHARS} is left out (the list takes the IDs' common prefix
 * only), so the request line stays within what common proxies accept (8 KiB).
 */
import type { SchedulerClient } from "../../clients/scheduler";
import type { JobStub } from "../../schemas/scheduler";
import type { JobRef } from "./state";

/** What the list says of one job: its stub, `missing` when the list does not hold it, or undefined (not listed). */
export type Listed = JobStub | "missing" | undefined;

/** A list taken (or being taken) at one write count of the connection. */
interface Snapshot {
  /** The connection's write count when the list was sent. */
  readonly writes: number;
  /** The IDs it was filtered to, or `all` (the whole namespace). */
  readonly covers: ReadonlySet<string> | "all";
  readonly stubs: Promise<Map<string, JobStub> | undefined>;
  /** The IDs whose read it served already. */
  readonly served: Set<string>;
}

function covers(s: Snapshot, id: string): boolean {
  return (s.covers === "all" || s.covers.has(id)) && !s.served.has(id);
}

/** The lists of one namespace and region on one connection. */
interface Place {
  /** The list of the IDs asked for in this turn of the event loop, not sent yet. */
  gathering?: { ids: Set<string>; snapshot: Promise<Snapshot> };
  snapshots: Snapshot[];
  /** A list failed: the reads of this place read their jobs in full from now on. */
  failed: boolean;
  /** Lists sent and not answered yet. */
  inFlight: number;
}

const places = new WeakMap<SchedulerClient, Map<string, Place>>();

/** The longest filter a list sends (before URL encoding); a longer one is left out. */
export const MAX_FILTER_CHARS = 6000;

/**
 * Returns what one job list of the job's namespace and region says of it, joining the other reads of this
 * turn of the event loop into that list.
 */
export async function listedJob(client: SchedulerClient, ref: JobRef): Promise<Listed> {
  if (!filterable(ref.jobId)) return undefined;
  const key = `${ref.namespace}\0${ref.region}`;
  let byPlace = places.get(client);
  if (byPlace === undefined) places.set(client, (byPlace = new Map()));
  let place = byPlace.get(key);
  if (place === undefined) byPlace.set(key, (place = { snapshots: [], failed: false, inFlight: 0 }));
  if (place.failed) return undefined;
  const writes = client.core.writes;
  place.snapshots = place.snapshots.filter((s) => s.writes === writes);
  const known = place.snapshots.find((s) => covers(s, ref.jobId));
  const snapshot = known ?? (await gather(client, ref, place));
  snapshot.served.add(ref.jobId);
  const stubs = await snapshot.stubs;
  if (stubs === undefined) {
    place.failed = true;
    return undefined;
  }
  // A write sent while the list was on its way: the list may predate it.
  if (snapshot.writes !== client.core.writes) return undefined;
  return stubs.get(ref.jobId) ?? "missing";
}

/** How long a list may wait for more reads to join it, at most. */
const GATHER_MS = 20;

/**
 * Joins the list being gathered, or starts one. A list is sent once a turn of the event loop passes with
 * no read joining it (the engine's reads arrive in a burst), or after {@link GATHER_MS}.
 */
function gather(client: SchedulerClient, ref: JobRef, place: Place): Promise<Snapshot> {
  if (place.gathering !== undefined) {
    place.gathering.ids.add(ref.jobId);
    return place.gathering.snapshot;
  }
  // Lists were taken without this job and none is on its way: the reads come in turns (a small
  // `--parallel`), so this list takes the whole namespace. A job a list served already is being read again:
  // a list of the IDs of this turn tells.
  const again = place.snapshots.some((s) => s.served.has(ref.jobId));
  if (again) place.snapshots = []; // a new refresh in the same process: it starts over
  const whole = !again && place.inFlight === 0 && place.snapshots.length > 0;
  const ids = new Set([ref.jobId]);
  const started = Date.now();
  const snapshot = new Promise<Snapshot>((resolve) => {
    let size = 0;
    const tick = () => {
      if (ids.size !== size && Date.now() - started < GATHER_MS) {
        size = ids.size;
        setImmediate(tick);
        return;
      }
      place.gathering = undefined;
      const all = whole;
      place.inFlight++;
      const stubs = list(client, ref, all ? undefined : ids).finally(() => place.inFlight--);
      const s: Snapshot = { writes: client.core.writes, covers: all ? "all" : ids, stubs, served: new Set() };
      place.snapshots.push(s);
      resolve(s);
    };
    setImmediate(tick);
  });
  place.gathering = { ids, snapshot };
  return snapshot;
}

async function list(
  client: SchedulerClient,
  ref: JobRef,
  ids: Set<string> | undefined,
): Promise<Map<string, JobStub> | undefined> {
  try {
    const stubs = await client.jobs.listAll({ namespace: ref.namespace, region: ref.region, ...selection(ids) });
    const out = new Map<string, JobStub>();
    for (const s of stubs) if (s.ID != null) out.set(s.ID, s);
    return out;
  } catch {
    return undefined;
  }
}

/** The prefix and filter that list the jobs `ids` names (all of the namespace when undefined). */
export function selection(ids: ReadonlySet<string> | undefined): { prefix?: string; filter?: string } {
  if (ids === undefined) return {};
  const sorted = [...ids].sort();
  const prefix = commonPrefix(sorted);
  const filter = `ID matches \`^(?:${sorted.map(escapeRegExp).join("|")})$\``;
  return filter.length > MAX_FILTER_CHARS ? { prefix } : { prefix, filter };
}

/** True when the ID can be written inside the filter's raw string as is. */
function filterable(id: string): boolean {
  return !/[`\p{Cc}]/u.test(id);
}

/** Escapes what a regular expression treats as syntax (the same set in the scheduler's syntax and in JavaScript's). */
function escapeRegExp(s: string): string {
  return s.replace(/[\\.*+?^${}()|[\]]/g, "\\$&");
}

/** The longest prefix of the first and last of sorted strings: the prefix of them all. */
function commonPrefix(sorted: string[]): string {
  const first = sorted[0] ?? "";
  const last = sorted[sorted.length - 1] ?? "";
  let i = 0;
  while (i < first.length && first[i] === last[i]) i++;
  return first.slice(0, i);
}
