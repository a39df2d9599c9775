/**
 * One job list serves a host's refresh. The engine asks `read` for every resource of a stack in one
 * provider host, a few at a time (`--parallel`, 8 by default on 2 cores): instead of reading each job, the
 * first read of a connection, namespace and region takes one `GET /v1/jobs` of that namespace and region
 * (the list reports each job's JobModifyIndex, Stop and Status), and that one list answers every read of
 * the host after it. `read` reads a job in full only when the list shows it moved, stopped or missing.
 *
 * The list is of the whole namespace: the reads come a few at a time, so no read knows the IDs of the
 * others, and a list of the IDs asked so far would leave the later reads to another list. Its stubs are
 * checked only for the jobs read, and only in the fields `read` uses (the others of the namespace cost
 * their bytes only).
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

/** A list taken (or being taken) at one write count of the connection. */
interface Snapshot {
  /** The connection's write count when the list was sent. */
  readonly writes: number;
  /** The namespace's jobs by ID, unchecked; undefined when the list failed. */
  readonly stubs: Promise<Map<string, unknown> | undefined>;
  /** The IDs whose read it served already. */
  readonly served: Set<string>;
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
    snapshot = { writes: client.core.writes, stubs: list(client, ref), served: new Set() };
    place.snapshot = snapshot;
  }
  snapshot.served.add(ref.jobId);
  const stubs = await snapshot.stubs;
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

async function list(client: SchedulerClient, ref: JobRef): Promise<Map<string, unknown> | undefined> {
  try {
    const stubs = await client.jobs.listLoose({ namespace: ref.namespace, region: ref.region });
    return new Map(stubs.map((s) => [s.ID, s]));
  } catch {
    return undefined;
  }
}
