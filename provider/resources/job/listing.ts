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
 * The list comes in pages of {@link PAGE_SIZE} jobs: the first page answers the reads of the
 * jobs it holds, and the first read of a job it does not hold takes the namespace's other pages (a stack of
 * 2,000 Jobs alone in its namespace: two requests), up to {@link MOST_PAGES} pages. In a namespace
 * larger than that the jobs the pages do not hold are listed by their IDs (one anchored `ID matches`
 * expression), one list per batch of reads the engine sends together: thousands of other jobs cost their
 * bytes once, never a request per job.
 *
 * Each job of a list serves one read: a resource is read once per refresh, so a second read of the same job
 * in the same process (a later refresh, a test) lists again instead of trusting an old list. A list also
 * stops serving once the connection sends anything that may change what the server holds
 * (`HttpCore.writes`), this host's own writes included. A list the server refuses (a token without
 * `list-jobs`) or that fails leaves each read to read its job in full, as before.
 */
import { z } from "zod";
import type { SchedulerClient } from "../../clients/scheduler";
import type { HttpCore } from "../../http/core";
import { PARSE_OPTIONS } from "../../schemas/parse-options";
import { JobStubSchema } from "../../schemas/scheduler";
import type { JobRef } from "./state";

/**
 * The fields of a job's stub that `read` uses; the rest, its allocation summary included, is neither checked
 * nor copied (a plain object schema leaves unknown keys out: the stub's own schema is loose, and copying
 * every other field of every stub cost each read about 20 µs of its 90).
 */
const ListedStubSchema = z.object(
  JobStubSchema.pick({
    ID: true,
    Type: true,
    Status: true,
    StatusDescription: true,
    Stop: true,
    ModifyIndex: true,
    JobModifyIndex: true,
  }).shape,
);

/** What the list says of one job: its stub, `missing` when the list does not hold it, or undefined (not listed). */
export type Listed = z.infer<typeof ListedStubSchema> | "missing" | undefined;

/** The namespace list's page size. */
const PAGE_SIZE = 1000;
/** The most pages of the namespace list one snapshot takes. */
const MOST_PAGES = 10;

/** The longest filter a list sends (before URL encoding); a longer one is left out for the IDs' common prefix. */
const MAX_FILTER_CHARS = 6000;

/** How long a filtered list may wait for more reads to join it, at most. */
const GATHER_MS = 20;

/** Stubs by ID, unchecked; undefined when the list failed. */
type Stubs = Map<string, unknown> | undefined;

/** Pages of the namespace list, merged: stubs by ID, and whether they are every job of the namespace. */
interface Pages {
  /** Undefined when the list failed. */
  readonly stubs: Stubs;
  /** The token of the next page; undefined once the pages hold every job. */
  readonly next?: string;
}

/** A list taken (or being taken) at one write count of the connection. */
interface Snapshot {
  /** The connection's write count when the list was sent. */
  readonly writes: number;
  /** The namespace's first page. */
  readonly first: Promise<Pages>;
  /** The pages after it, merged with it: taken by the first read the first page cannot answer. */
  rest?: Promise<Pages>;
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

/**
 * What the list needs of a client: its HTTP core and its job requests. A refresh's reads list through the
 * job requests alone (./refresh.ts), other calls through the whole client: the lists are kept by HTTP core,
 * so both share them.
 */
export type JobLister = Pick<SchedulerClient, "core" | "jobs">;

const places = new WeakMap<HttpCore, Map<string, Place>>();

/** Returns what the job list of the job's namespace and region says of it, taking that list when needed. */
export async function listedJob(client: JobLister, ref: JobRef): Promise<Listed> {
  const key = `${ref.namespace}\0${ref.region}`;
  let byPlace = places.get(client.core);
  if (byPlace === undefined) places.set(client.core, (byPlace = new Map()));
  let place = byPlace.get(key);
  if (place === undefined) byPlace.set(key, (place = { failed: false }));
  if (place.failed) return undefined;
  let snapshot = place.snapshot;
  if (snapshot === undefined || snapshot.writes !== client.core.writes || snapshot.served.has(ref.jobId)) {
    snapshot = { writes: client.core.writes, first: pages(client, ref, undefined, 1), served: new Set() };
    place.snapshot = snapshot;
  }
  snapshot.served.add(ref.jobId);
  let listed = await snapshot.first;
  if (listed.stubs?.has(ref.jobId) === false && listed.next !== undefined) {
    snapshot.rest ??= pages(client, ref, listed, MOST_PAGES - 1);
    listed = await snapshot.rest;
  }
  let stubs = listed.stubs;
  if (stubs !== undefined && listed.next !== undefined && !stubs.has(ref.jobId)) {
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

/** Takes up to `count` pages of the namespace list, after those `from` holds. */
async function pages(client: JobLister, ref: JobRef, from: Pages | undefined, count: number): Promise<Pages> {
  const stubs = new Map(from?.stubs);
  let next = from?.next;
  try {
    for (let i = 0; i < count; i++) {
      const res = await client.jobs.listLoosePage({
        namespace: ref.namespace,
        region: ref.region,
        perPage: PAGE_SIZE,
        ...(next !== undefined && { nextToken: next }),
      });
      for (const s of res.value) stubs.set(s.ID, s);
      next = res.meta.nextToken === "" ? undefined : res.meta.nextToken;
      if (next === undefined) break;
    }
    return next === undefined ? { stubs } : { stubs, next };
  } catch {
    return { stubs: undefined };
  }
}

/**
 * Joins the filtered list of this batch of reads, or starts one. It is sent once a turn of the event loop
 * passes with no read joining it (the engine's reads arrive together), or after {@link GATHER_MS}.
 */
function gather(client: JobLister, ref: JobRef, snapshot: Snapshot): Promise<Stubs> {
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

async function filtered(client: JobLister, ref: JobRef, ids: ReadonlySet<string>): Promise<Stubs> {
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

/**
 * The prefix and filter that list the jobs `ids` names.
 */
function selection(ids: ReadonlySet<string>): { prefix: string; filter?: string } {
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
