/**
 * The JobVersionTag's fields (see ../definition.ts): the SDK class, `check`, the diff's replacing keys and
 * docs/reference/job-version-tag.md all come from here.
 */
import { z } from "zod";
import { segmentProblem } from "../../http/path";
import { requestName } from "../common";
import type { TagVersionRequest } from "../../clients/scheduler";
import type { JobVersionTagInfoSchema } from "../../schemas/scheduler";
import { defineResource, field, type WireNames, type WiredBy } from "../definition";

const DOT_SEGMENT = 'must not be "." or ".." (a dot segment addresses another path) and must be well-formed text';

/** The JobVersionTag: every field, in the order the SDK and the reference page list them. */
export const jobVersionTagDefinition = defineResource({
  name: "JobVersionTag",
  module: "job-version-tag",
  doc: "A tag on one version of a scheduler job, which also keeps that version from garbage collection.",
  argsDoc: "Arguments of a {@link JobVersionTag}.",
  id: "<jobId>@<namespace>/<name>",
  replaceOrder: "delete-first",
  notes:
    "The description is updated in place (the version is tagged again with the same name). Create refuses a tag name the job already carries unless `adopt` is set (then only on the version that tag is on). It always refuses a version that carries a tag of another name, `adopt` or not: a version has one tag at a time, and tagging it again would drop that tag. Destroying the resource removes the tag, adopted or not.",
  fields: {
    jobId: field.string({
      doc: "ID of the job. A change replaces the tag.",
      kind: "source",
      rule: z
        .string()
        .min(1, "jobId must not be empty")
        .refine(
          (s) => !s.includes("/"),
          'the scheduler\'s tag endpoint cannot route a job ID containing "/" (it answers 404)',
        )
        .refine((s) => s === "" || segmentProblem(s) === undefined, DOT_SEGMENT),
      required: true,
      replaceOnChange: true,
    }),
    namespace: field.string({
      doc: "Namespace of the job; default the connection's, else `default`. A change replaces the tag.",
      outputDoc: "Namespace of the job.",
      kind: "source",
      rule: requestName(),
      replaceOnChange: true,
      sdkOutputType: "string",
    }),
    name: field.string({
      doc: 'Tag name, unique per job; it must not contain "/". A change replaces the tag.',
      kind: "source",
      rule: z
        .string()
        .min(1, "name must not be empty")
        .refine(
          (s) => !s.includes("/"),
          'the scheduler cannot route a tag name containing "/"; choose a name without it',
        )
        .refine((s) => s === "" || segmentProblem(s) === undefined, DOT_SEGMENT),
      required: true,
      replaceOnChange: true,
    }),
    version: field.number({
      doc: "Version to tag; default the job's version when the tag is created. A change replaces the tag.",
      outputDoc: "The tagged version.",
      kind: "source",
      rule: z.number().int().min(0),
      replaceOnChange: true,
      sdkOutputType: "number",
    }),
    description: field.string({
      doc: "Description (under 1000 characters); a change updates the tag in place.",
      wire: "Description",
      unsetMeans: "",
      rule: z.string().max(999, "description must be under 1000 characters"),
      sdkOutputType: "string",
    }),
    taggedTime: field.number({
      doc: "When the tag was set, in unix nanoseconds.",
      kind: "output",
      required: true,
    }),
    adopt: field.boolean({
      doc:
        "Take over a tag of this name that the job already carries instead of failing (its description is then " +
        "overwritten). Destroying the resource removes the tag, adopted or not.",
    }),
    connection: field.connection("scheduler", "state"),
    incomplete: field.boolean({
      doc: "Set when the last tag write's outcome is unknown: the next `up` tags again.",
      kind: "output",
      sdkOutput: false,
    }),
    schemaVersion: field.number({ doc: "The version of the state's shape.", kind: "output", required: true }),
  },
});

/** The tag's wire records, written by hand, name every setting above (one they lack fails the typecheck). */
type _Wire = WiredBy<[TagVersionRequest, typeof JobVersionTagInfoSchema], WireNames<typeof jobVersionTagDefinition>>;
