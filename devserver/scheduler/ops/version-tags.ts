// Version tags of a job (reference/scheduler.md §3.5): applying, updating and removing a tag, with the real
// server's rules and error texts.
import { bool, num, obj, str, nowNanos, type JsonObject } from "../state/json";
import type { JobEntry } from "../state/store";
import { err500 } from "./rules";
import type { JobWriter } from "./writer";

/**
 * Applies or updates a version tag (reference/scheduler.md §3.5): names are unique per job, re-tagging the
 * same version updates the description, tagging the latest version bumps the job's ModifyIndex (never its
 * Version or JobModifyIndex), and tagged versions are exempt from the retention limit.
 */
export function tagVersion(w: JobWriter, ns: string, id: string, name: string, body: JsonObject): JsonObject {
  const description = str(body, "Description");
  if (description.length >= 1000) throw err500("description must be under 1000 characters");
  const latest = bool(body, "Latest");
  const requested = num(body, "Version");
  if (latest && requested !== 0) throw err500(`version must be zero when tagging latest, got: ${requested}`);
  const entry = w.store.getJob(ns, id);
  const version = latest && entry ? num(entry.job, "Version") : requested;
  const i = entry ? entry.versions.findIndex((v) => num(v, "Version") === version) : -1;
  if (entry === undefined || i < 0) throw err500(`job ${JSON.stringify(id)} version ${version} not found`);
  const elsewhere = entry.versions.find(
    (v) => num(v, "Version") !== version && str(obj(v, "VersionTag"), "Name") === name,
  );
  if (elsewhere !== undefined)
    throw err500(`tag ${JSON.stringify(name)} already exists on a different version of job ${JSON.stringify(id)}`);
  const index = w.store.write("jobs", "job_version");
  const tagged = { Name: name, Description: description, TaggedTime: nowNanos() };
  setVersionTag(entry, i, tagged, index);
  return { ...tagged, Index: index, LastContact: 0, KnownLeader: true, NextToken: "" };
}

/** Removes a version tag; the version becomes subject to the retention limit again. */
export function untagVersion(w: JobWriter, ns: string, id: string, name: string): JsonObject {
  const entry = w.store.getJob(ns, id);
  const i = entry ? entry.versions.findIndex((v) => str(obj(v, "VersionTag"), "Name") === name) : -1;
  if (entry === undefined || i < 0) throw err500(`tag ${JSON.stringify(name)} not found on job ${JSON.stringify(id)}`);
  const index = w.store.write("jobs", "job_version");
  setVersionTag(entry, i, null, index);
  w.prune(entry);
  return {
    EvalID: "",
    EvalCreateIndex: 0,
    JobModifyIndex: 0,
    VolumeEvalID: "",
    VolumeEvalIndex: 0,
    Index: index,
    LastContact: 0,
    KnownLeader: true,
    NextToken: "",
  };
}

/** Sets (or, with null, clears) the tag of the version at `i`, and of the job when it is that version. */
function setVersionTag(entry: JobEntry, i: number, tag: JsonObject | null, index: number): void {
  const v = entry.versions[i] as JsonObject;
  const next: JsonObject = { ...v, ModifyIndex: index };
  if (tag === null) delete next.VersionTag;
  else next.VersionTag = tag;
  entry.versions[i] = next;
  if (num(entry.job, "Version") === num(v, "Version")) {
    const cur: JsonObject = { ...entry.job, ModifyIndex: index };
    if (tag === null) delete cur.VersionTag;
    else cur.VersionTag = tag;
    entry.job = cur;
  }
}
