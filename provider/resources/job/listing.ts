/**
 * One job list serves a host's refresh. The engine asks `read` for every resource of a stack in one
 * provider host, a few at a time (`--parallel`, 8 by default on 2 cores): instead of reading each job, the
 * first read of a connection, namespace and region takes one page of `GET /v1/jobs` of that namespace and
 * region (the list reports each job's JobModifyIndex, Stop and Status), and that page answers every read of
 * the host after it. `read` reads a job in full only when the list shows it moved, stopped or missing.
 *
 * The page is of the whole namespace: the reads come a few at a time, so no read knows the IDs of the
 * others, and a list of the IDs asked so far would leave the later reads to another list. Its stubs are
 * checked only for the jobs read, and only in the fields `read` uses.
 *
 * A namespace holding more than {@link LIST_PAGE} jobs is not listed whole: jobs of other stacks would cost
 * their bytes on every refresh. The first page answers the reads of the jobs it holds; the others are
 * answered by lists filtered to their IDs (one anchored `ID matches` expression), one per batch of reads the
 * engine sends together. So thousands of other jobs cost one page, and the stack's own jobs a list per batch.
 *
 * Each job of a list serves one read: a resource is read once per refresh, so a second read of the same job
 * in the same process (a later refresh, a test) lists again instead of trusting an old list. A list also
 * stops serving once the connection sends anything that may change what the server holds
 * (`HttpCore.writes`), this host's own writes included. A list the server refuses (a token without
 * `list-jobs`) or that fails leaves each read to read its job in full, as before.
 */
import type { z } from "zod";
import type { SchedulerClient } from "../../clients/scheduler";
import { PARSE_OPTIONS } from "../../schemas/parse-options";
import { JobStubSchema } from "../../schemas/scheduler";
import type { JobRef } from "./state";

/** The fields of a job's stub that `read` uses (the rest, its allocation summary included, stays unchecked). */
const ListedStubSchema = JobStubSchema.pick({
  ID: true,
  Type: true,
  Status: true,
  StatusDescription: true,
  Stop: true,
  ModifyIndex: true,
  JobModifyIndex: true,
});

/** What the list says of one job: its stub, `missing` when the list does not hold it, or undefined (not listed). */
export type Listed = z.infer<typeof ListedStubSchema> | "missing" | undefined;

/** The most jobs the namespace list holds: a namespace with more is listed by the IDs read beyond them. */
export const LIST_PAGE = 1000;

/** The longest filter a list sends (before URL encoding); a longer one is left out for the IDs' common prefix. */
export const MAX_FILTER_CHARS = 6000;

/** How long a filtered list may wait for more reads to join it, at most. */
const GATHER_MS = 20;

/** Stubs by ID, unchecked; undefined when the list failed. */
type Stubs = Map<string, unknown> | undefined;

/** A list taken (or being taken) at one write count of the connection. */
interface Snapshot {
  /** The connection's write count when the list was sent. */
  readonly writes: number;
  /** The namespace's first page, and whether it holds every job of the namespace. */
  readonly page: Promise<{ stubs: Stubs; whole: boolean }>;
  /** The IDs whose read it served already. */
  readonly served: Set<string>;
  /** The filtered list gathering the IDs of this batch of reads, not sent yet. */
  gathering?: { ids: Set<string>; stubs: Promise<Stubs> };
}

/** The list of one namespace and region on one connection. */
interface Place {
  snapshot?: Snapshot;
  /** A list failed: the reads of this place read their jobs in full from now on. */
  failed: boolean;
}

const places = new WeakMap<SchedulerClient, Map<string, Place>>();

/** Returns what the job list of the job's namespace and region says of it, taking that list when needed. */
export async function listedJob(client: SchedulerClient, ref: JobRef): Promise<Listed> {
  const key = `${ref.namespace}\0${ref.region}`;
  let byPlace = places.get(client);
  if (byPlace === undefined) places.set(client, (byPlace = new Map()));
  let place = byPlace.get(key);
  if (place === undefined) byPlace.set(key, (place = { failed: false }));
  if (place.failed) return undefined;
  let snapshot = place.snapshot;
  if (snapshot === undefined || snapshot.writes !== client.core.writes || snapshot.served.has(ref.jobId)) {
    snapshot = { writes: client.core.writes, page: firstPage(client, ref), served: new Set() };
    place.snapshot = snapshot;
  }
  snapshot.served.add(ref.jobId);
  const page = await snapshot.page;
  let stubs = page.stubs;
  if (stubs !== undefined && !page.whole && !stubs.has(ref.jobId)) {
    if (!filterable(ref.jobId)) return undefined;
    stubs = await gather(client, ref, snapshot);
  }
  if (stubs === undefined) {
    place.failed = true;
    return undefined;
  }
  // A write sent while the list was on its way: the list may predate it.
  if (snapshot.writes !== client.core.writes) return undefined;
  const raw = stubs.get(ref.jobId);
  if (raw === undefined) return "missing";
  const stub = ListedStubSchema.safeParse(raw, PARSE_OPTIONS);
  return stub.success ? stub.data : undefined;
}

async function firstPage(client: SchedulerClient, ref: JobRef): Promise<{ stubs: Stubs; whole: boolean }> {
  try {
    const res = await client.jobs.listLoosePage({ namespace: ref.namespace, region: ref.region, perPage: LIST_PAGE });
    const next = res.meta.nextToken;
    return { stubs: byId(res.value), whole: next === undefined || next === "" };
  } catch {
    return { stubs: undefined, whole: true };
  }
}

/**
 * Joins the filtered list of this batch of reads, or starts one. It is sent once a turn of the event loop
 * passes with no read joining it (the engine's reads arrive together), or after {@link GATHER_MS}.
 */
function gather(client: SchedulerClient, ref: JobRef, snapshot: Snapshot): Promise<Stubs> {
  const joining = snapshot.gathering;
  if (joining !== undefined) {
    joining.ids.add(ref.jobId);
    return joining.stubs;
  }
  const ids = new Set([ref.jobId]);
  const started = Date.now();
  const stubs = new Promise<Stubs>((resolve) => {
    let size = 0;
    const tick = () => {
      if (ids.size !== size && Date.now() - started < GATHER_MS) {
        size = ids.size;
        setImmediate(tick);
        return;
      }
      snapshot.gathering = undefined;
      resolve(filtered(client, ref, ids));
    };
    setImmediate(tick);
  });
  snapshot.gathering = { ids, stubs };
  return stubs;
}

async function filtered(client: SchedulerClient, ref: JobRef, ids: ReadonlySet<string>): Promise<Stubs> {
  try {
    const out = new Map<string, unknown>();
    let nextToken: string | undefined;
    // A filter left out for its length (only the common prefix) may list more than a page.
    do {
      const res = await client.jobs.listLoosePage({
        namespace: ref.namespace,
        region: ref.region,
        ...selection(ids),
        ...(nextToken !== undefined && { nextToken }),
      });
      for (const s of res.value) if (ids.has(s.ID)) out.set(s.ID, s);
      nextToken = res.meta.nextToken === "" ? undefined : res.meta.nextToken;
    } while (nextToken !== undefined);
    return out;
  } catch {
    return undefined;
  }
}

function byId(stubs: { ID: string }[]): Map<string, unknown> {
  return new Map(stubs.map((s) => [s.ID, s]));
}

/** The prefix and filter that list the jobs `ids` names. */
export function selection(ids: ReadonlySet<string>): { prefix: string; filter?: string } {
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
