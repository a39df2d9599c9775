/**
 * Diffs between two versions of a job (versions `diffs=true`, plan `Diff: true`), and the plan response.
 * Every diff level carries a `Type`: `None`, `Added`, `Deleted` or `Edited`.
 */
import { z } from "zod";
import { bool, list, map, num, str } from "./fields";
import { JobSchema } from "./job";
import { EvaluationSchema, AllocMetricSchema } from "./status";

/** Kind of change at one diff level. Other strings pass through untouched (a newer server). */
const DiffTypeSchema = z.union([z.enum(["None", "Added", "Deleted", "Edited"]), z.string()]);
/** Kind of change at one diff level. */
type DiffType = "None" | "Added" | "Deleted" | "Edited" | (string & {});

/** One changed scalar field. */
const FieldDiffSchema = z.looseObject({
  Type: DiffTypeSchema.nullish(),
  Name: str(),
  Old: str(),
  New: str(),
  /** Scheduler notes such as `forces create/destroy update` or `forces in-place update`. */
  Annotations: list(z.string()),
});
/** One changed scalar field. */
export type FieldDiff = z.infer<typeof FieldDiffSchema>;

/** One changed nested block; blocks nest. */
export interface ObjectDiff {
  Type?: DiffType | null;
  Name?: string | null;
  Fields?: FieldDiff[] | null;
  Objects?: ObjectDiff[] | null;
  [extra: string]: unknown;
}
/** One changed nested block. */
const ObjectDiffSchema: z.ZodType<ObjectDiff> = z.looseObject({
  Type: DiffTypeSchema.nullish(),
  Name: str(),
  Fields: list(FieldDiffSchema),
  get Objects() {
    return list(ObjectDiffSchema);
  },
});

/** Changes of one task. */
const TaskDiffSchema = z.looseObject({
  Type: DiffTypeSchema.nullish(),
  Name: str(),
  Fields: list(FieldDiffSchema),
  Objects: list(ObjectDiffSchema),
  Annotations: list(z.string()),
});
/** Changes of one task. */
export type TaskDiff = z.infer<typeof TaskDiffSchema>;

/** Changes of one task group, and the scheduler's counts of what it would do (`Updates`). */
const TaskGroupDiffSchema = z.looseObject({
  Type: DiffTypeSchema.nullish(),
  Name: str(),
  Fields: list(FieldDiffSchema),
  Objects: list(ObjectDiffSchema),
  Tasks: list(TaskDiffSchema),
  /** e.g. `{ "create/destroy update": 1, "in-place update": 2 }`. */
  Updates: map(z.number()),
});

/** Changes of a whole job. */
const JobDiffSchema = z.looseObject({
  Type: DiffTypeSchema.nullish(),
  ID: str(),
  Fields: list(FieldDiffSchema),
  Objects: list(ObjectDiffSchema),
  TaskGroups: list(TaskGroupDiffSchema),
});
/** Changes of a whole job. */
export type JobDiff = z.infer<typeof JobDiffSchema>;

/** What the scheduler would do to one task group, by kind of change. */
const DesiredUpdatesSchema = z.looseObject({
  Ignore: num(),
  Place: num(),
  Migrate: num(),
  Stop: num(),
  InPlaceUpdate: num(),
  DestructiveUpdate: num(),
  Canary: num(),
  Preemptions: num(),
  Disconnect: num(),
  Reconnect: num(),
  RescheduleNow: num(),
  RescheduleLater: num(),
});
/** What the scheduler would do to one task group. */
export type DesiredUpdates = z.infer<typeof DesiredUpdatesSchema>;

/** Response of a plan (a dry run; nothing is stored). */
export const PlanResponseSchema = z.looseObject({
  /** The server-side job's JobModifyIndex; 0 when the job does not exist. */
  JobModifyIndex: num(),
  Diff: JobDiffSchema.nullish(),
  Annotations: z
    .looseObject({ DesiredTGUpdates: map(DesiredUpdatesSchema), PreemptedAllocs: list(z.looseObject({})) })
    .nullish(),
  /** Task groups that could not be placed, with the scheduler's metrics. */
  FailedTGAllocs: map(AllocMetricSchema),
  CreatedEvals: list(EvaluationSchema),
  /** Next launch of a periodic job (RFC 3339 text on the real scheduler). */
  NextPeriodicLaunch: z.union([z.string(), z.number()]).nullish(),
  Warnings: str(),
  Index: num(),
});
/** Response of a plan. */
export type PlanResponse = z.infer<typeof PlanResponseSchema>;

/** Response of the versions endpoint: versions newest first, and diffs when asked. */
export const JobVersionsResponseSchema = z.looseObject({
  Versions: list(JobSchema),
  Diffs: list(JobDiffSchema),
  Index: num(),
  LastContact: num(),
  KnownLeader: bool(),
});
/** Response of the versions endpoint. */
export type JobVersionsResponse = z.infer<typeof JobVersionsResponseSchema>;

/** Response of creating (or updating) a version tag; TaggedTime in unix nanoseconds. */
export const VersionTagSchema = z.looseObject({
  Name: str(),
  Description: str(),
  TaggedTime: num(),
  Index: num(),
  LastContact: num(),
  KnownLeader: bool(),
  NextToken: str(),
});
/** Response of creating a version tag. */
export type VersionTag = z.infer<typeof VersionTagSchema>;
