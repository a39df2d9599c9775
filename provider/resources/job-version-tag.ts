/**
 * The JobVersionTag resource: a named tag on one version of a job. The description is updated in place
 * (tagging again with the same name and version); another job, namespace, name or version is another tag.
 * Like the other resources, create refuses a tag name the job already carries unless `adopt` is set.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { SchedulerClient, TagVersionRequest } from "../clients/scheduler";
import { schedulerClient as newClient } from "./scheduler-client";
import { ResourceError, isApiError, isOutcomeUnknown, outcomeUnknown } from "../errors";
import { checkInputs, containsUnknown, type ProviderImpl } from "./common";
import { MOVED, connectionChange } from "./connection";
import { inputsSchema, replaceKeys, settingKeys, type InputsOf, type OutputsOf } from "./definition";
import { sameValue, settingDiffers, wireBody, wireValue } from "./setting-values";
import { jobVersionTagDefinition as DEF } from "./definitions/job-version-tag";
import { recordProvider, stateOf } from "./record";

/** Schema of the JobVersionTag inputs after the engine resolved them. */
const JobVersionTagInputsSchema = inputsSchema(DEF);

/**
 * The JobVersionTag inputs as the provider receives them.
 */
type JobVersionTagInputs = InputsOf<typeof DEF>;

/**
 * Outputs of a JobVersionTag: its inputs as the tag is (the namespace resolved: the input, else the
 * connection's, else `default`; the version tagged; the description, "" when none) and `taggedTime`.
 */
type JobVersionTagOutputs = Omit<OutputsOf<typeof DEF>, "namespace" | "version" | "description"> & {
  namespace: string;
  version: number;
  description: string;
};

/** The keys whose change replaces the tag: the job, its namespace, the tag's name and version. */
const REPLACE_KEYS = replaceKeys(DEF);
/** The tag's settings (its description): written by tagging the same version again, compared and refreshed. */
const SETTINGS = settingKeys(DEF);

/** True when a setting of the program differs from the state's. */
function settingsDiffer(news: JobVersionTagInputs, olds: JobVersionTagOutputs): boolean {
  return SETTINGS.some(([k, f]) => settingDiffers(f, news[k], olds[k]));
}

function namespaceOf(client: SchedulerClient, inputs: { namespace?: string }): string {
  return inputs.namespace ?? client.core.connection.namespace ?? "default";
}

/** Returns the resource ID of a tag: `<jobId>@<namespace>/<name>` (a tag name never holds "/"). */
function tagResourceId(jobId: string, namespace: string, name: string): string {
  return `${jobId}@${namespace}/${name}`;
}

function refOf(id: string, props: Partial<JobVersionTagOutputs>): { jobId: string; namespace: string; name: string } {
  const slash = id.lastIndexOf("/");
  const head = slash >= 0 ? id.slice(0, slash) : id;
  const at = head.lastIndexOf("@");
  return {
    jobId: props.jobId ?? (at > 0 ? head.slice(0, at) : head),
    namespace: props.namespace ?? (at > 0 ? head.slice(at + 1) : "default"),
    name: props.name ?? id.slice(slash + 1),
  };
}

/** True for the errors that mean "the tag (or its job) is not there". */
function isGone(e: unknown): boolean {
  if (!isApiError(e)) return false;
  if (e.code === "not_found") return true;
  // The real server answers a missing tag or version with a 500 and a "not found" text.
  return e.code === "server" && e.serverErrors.some((s) => /not found/i.test(s));
}

/** The version that carries the tag named in `p` (a refresh reads only versions where one does). */
function taggedOf(versions: JobVersion[], p: TagRef): JobVersion {
  return versions.find((v) => v.VersionTag?.Name === p.name) ?? {};
}

/**
 * The JobVersionTag provider: the record lifecycle (./record.ts) with a tag's rules (its version).
 * @public required by name: ../index.ts loads this module and takes the export named after the kind.
 */
export const jobVersionTag: ProviderImpl<JobVersionTagInputs, JobVersionTagOutputs> = recordProvider({
  resource: DEF.name,
  async check(_olds, news) {
    return checkInputs(JobVersionTagInputsSchema, news, "JobVersionTag") as dynamic.CheckResult<JobVersionTagInputs>;
  },

  async diff(olds: JobVersionTagOutputs, news: JobVersionTagInputs) {
    const connection = connectionChange("scheduler", olds.connection, news.connection);
    if (connection === "moved") return MOVED;
    if ([...REPLACE_KEYS, "connection" as const].some((k) => containsUnknown(news[k]))) return { changes: true };
    const namespace = namespaceOf(newClient(news.connection), news);
    if (
      olds.incomplete === true &&
      news.jobId === olds.jobId &&
      namespace === olds.namespace &&
      news.name === olds.name
    )
      return { changes: true };
    // Without a version the tag stays where it was put at create time.
    const now = { ...news, namespace, version: news.version ?? olds.version };
    const replaces = REPLACE_KEYS.filter((k) => now[k] !== olds[k]);
    if (replaces.length > 0) return { changes: true, replaces, deleteBeforeReplace: true };
    return {
      changes:
        connection === "settings" || settingsDiffer(news, olds) || (news.adopt ?? false) !== (olds.adopt ?? false),
    };
  },

  place: (i: JobVersionTagInputs): TagRef => ({
    jobId: i.jobId,
    namespace: namespaceOf(newClient(i.connection), i),
    name: i.name,
  }),
  locate: refOf,
  id: (p) => tagResourceId(p.jobId, p.namespace, p.name),
  // The versions of the job (the tag's record is one of them); undefined when there is no such job (the tag
  // request then fails with the server's reason).
  fetch: (p, connection) => jobVersions(newClient(connection), p.jobId, p.namespace),
  async remove(ref, connection) {
    try {
      await newClient(connection).versions.untagVersion(ref.jobId, ref.name, { namespace: ref.namespace });
    } catch (e) {
      if (isGone(e)) return;
      throw e;
    }
  },
  observed: (props, p) => ({ ...p, adopt: props.adopt, connection: props.connection }) as JobVersionTagInputs,
  outputs: (i, l: TagLearned) => outputsOf(l.ref, l.version, l.records, l.taggedTime, i),

  create: {
    async start(inputs, versions, ref): Promise<TagFrom> {
      const { jobId, namespace } = ref;
      const id = tagResourceId(jobId, namespace, inputs.name);
      // Tagging a name the job already carries would silently take that tag over (new description).
      const existing = tagOn(versions, (v) => v.VersionTag?.Name === inputs.name);
      if (existing !== undefined) {
        const what =
          `job "${jobId}" in namespace "${namespace}" already has a tag "${inputs.name}" on version ${existing.version}` +
          `${existing.description !== "" ? ` (description "${existing.description}")` : ""}`;
        if (inputs.adopt !== true) {
          throw new ResourceError(
            "already_exists",
            `JobVersionTag "${id}": ${what}, not managed by this stack; it was left untouched. Set adopt: true to take it over ` +
              "(its description is then overwritten with this resource's), or choose another name.",
          );
        }
        if (inputs.version !== undefined && inputs.version !== existing.version) {
          throw new ResourceError(
            "already_exists",
            `JobVersionTag "${id}": ${what}, not version ${inputs.version}; a tag cannot move to another version in place, so it cannot ` +
              `be adopted as it is. Set version: ${existing.version} (or leave version unset) to adopt it, or remove the tag first.`,
          );
        }
      }
      // The version is always sent explicitly: a tag without one lands on version 0 on real servers.
      const latest =
        versions === undefined || versions.length === 0 ? undefined : Math.max(...versions.map((v) => v.Version ?? 0));
      const version =
        inputs.version ??
        existing?.version ??
        latest ??
        (await newClient(inputs.connection).jobs.info(jobId, { namespace })).value.Version ??
        0;
      // A version carries one tag at a time: tagging it again under another name would drop that tag.
      const other =
        existing === undefined
          ? tagOn(versions, (v) => v.Version === version && (v.VersionTag?.Name ?? "") !== "")
          : undefined;
      if (other !== undefined) {
        throw new ResourceError(
          "already_exists",
          `JobVersionTag "${id}": version ${version} of job "${jobId}" in namespace "${namespace}" already carries the tag "${other.name}" ` +
            "(a version has one tag at a time); it was left untouched. Remove that tag first, or tag another version.",
        );
      }
      return { ref, version, taggedTime: 0 };
    },
  },

  async update(olds, news, id) {
    const ref = refOf(id, olds);
    const from = { ref, version: olds.version, taggedTime: olds.taggedTime };
    // Only `adopt` or how to connect changed: nothing to write (unless the last tag write was never confirmed).
    if (!settingsDiffer(news, olds) && olds.incomplete !== true)
      return { keep: { ...from, records: [wireBody(DEF, news)] } };
    // Tagging the same version with the same name again replaces the description.
    return { news, from };
  },

  write: (news, from: TagFrom) => tagConfirmed(newClient(news.connection), from, wireBody(DEF, news)),

  unfinished: {
    at: (news, { ref, version, taggedTime }: TagFrom) => ({
      id: tagResourceId(ref.jobId, ref.namespace, ref.name),
      learned: { ref, version, records: [wireBody(DEF, news)], taggedTime },
    }),
    sentence: () => "It is kept in the stack as unfinished; run `pulumi up` again to tag.",
  },

  refresh: {
    async fetch(ref, props) {
      let versions;
      try {
        versions =
          (await newClient(props.connection).versions.versions(ref.jobId, { namespace: ref.namespace })).value
            .Versions ?? [];
      } catch (e) {
        if (isGone(e)) return undefined;
        throw e;
      }
      return versions.some((v) => v.VersionTag?.Name === ref.name) ? versions : undefined;
    },
    gone: { id: "" },
    id: (id) => id,
    learned(_props, ref, versions) {
      const tagged = taggedOf(versions, ref);
      const tag = tagged.VersionTag ?? {};
      return { ref, version: tagged.Version ?? 0, records: [tag], taggedTime: tag.TaggedTime ?? 0 };
    },
    // The engine keeps the inputs it has.
    inputs: () => undefined,
  },
});

type JobVersion = NonNullable<
  Awaited<ReturnType<SchedulerClient["versions"]["versions"]>>["value"]["Versions"]
>[number];

/** Returns the versions of a job; undefined when there is no such job (the tag request then fails with the server's reason). */
async function jobVersions(
  client: SchedulerClient,
  jobId: string,
  namespace: string,
): Promise<JobVersion[] | undefined> {
  try {
    return (await client.versions.versions(jobId, { namespace })).value.Versions ?? [];
  } catch (e) {
    if (isGone(e)) return undefined;
    throw e;
  }
}

/** Returns the tag of the first version that matches; undefined when none does. */
function tagOn(
  versions: JobVersion[] | undefined,
  match: (v: JobVersion) => boolean,
): { name: string; version: number; description: string } | undefined {
  const tagged = versions?.find(match);
  if (tagged === undefined) return undefined;
  return {
    name: tagged.VersionTag?.Name ?? "",
    version: tagged.Version ?? 0,
    description: tagged.VersionTag?.Description ?? "",
  };
}

/** What outputs keep of the inputs as given: `adopt` and the connection. */
type Kept = Pick<JobVersionTagInputs, "adopt" | "connection">;

/** Where a tag is: its job, namespace and name. */
type TagRef = { jobId: string; namespace: string; name: string };

/** What a tag write starts from: where the tag is, the version it goes on, and the time state holds. */
type TagFrom = { ref: TagRef; version: number; taggedTime: number };

/** What state learns from a tag write or read: the records (tag records or write bodies) and the tag's time. */
type TagLearned = TagFrom & { records: readonly Record<string, unknown>[] };
/**
 * The outputs of a tag: each setting from the first of `records` (tag records or write bodies, by wire name)
 * that holds it, else its unset meaning.
 */
function outputsOf(
  ref: TagRef,
  version: number,
  records: readonly Record<string, unknown>[],
  taggedTime: number,
  kept: Kept,
): JobVersionTagOutputs {
  const settings: Record<string, unknown> = {};
  for (const [k, f] of SETTINGS)
    settings[k] = wireValue(
      f,
      records.map((r) => r[f.wire]).find((v) => v != null),
    );
  return stateOf({
    jobId: ref.jobId,
    namespace: ref.namespace,
    name: ref.name,
    version,
    ...settings,
    taggedTime,
    adopt: kept.adopt,
    connection: kept.connection,
  }) as JobVersionTagOutputs;
}

/**
 * Tags a version (the HTTP core retries the write); when the outcome stays unknown, reads the versions back
 * once (the scheduler answers reads from its leader): the tag on that version with that description was
 * applied; no such tag means it was not. When reading fails too, the outcome stays unknown, and the tag is
 * kept in state, marked so the next `up` tags again.
 */
async function tagConfirmed(
  client: SchedulerClient,
  from: TagFrom,
  body: Record<string, unknown>,
): Promise<TagLearned> {
  const { ref, version, taggedTime } = from;
  try {
    const { value } = await client.versions.tagVersion(
      ref.jobId,
      ref.name,
      { Version: version, ...body } as TagVersionRequest,
      { namespace: ref.namespace },
    );
    return { ref, version, records: [value, body], taggedTime: value.TaggedTime ?? taggedTime };
  } catch (e) {
    if (!isOutcomeUnknown(e)) throw e;
    let tagged;
    try {
      const versions = (await client.versions.versions(ref.jobId, { namespace: ref.namespace })).value.Versions ?? [];
      tagged = versions.find((v) => v.VersionTag?.Name === ref.name);
    } catch (readError) {
      throw outcomeUnknown(`tag "${ref.name}" of job "${ref.jobId}"`, e, readError);
    }
    const tag: Record<string, unknown> = tagged?.VersionTag ?? {};
    if (
      tagged === undefined ||
      (tagged.Version ?? 0) !== version ||
      SETTINGS.some(([, f]) => !sameValue(f, tag[f.wire], body[f.wire]))
    )
      throw e;
    return { ref, version, records: [body], taggedTime: tagged.VersionTag?.TaggedTime ?? taggedTime };
  }
}
