/**
 * The Job's fields (see ../definition.ts): the SDK class, `check`'s schema, the diff's source and setting
 * tables, the outputs echo, the settings' defaults and docs/reference/job.md all come from here. What a
 * source or setting does lives in ../job/.
 */
import { z } from "zod";
import { JobSchema } from "../../schemas/scheduler";
import { requestName } from "../common";
import { defineResource, field } from "../definition";

/** A duration as the Job takes it: seconds or Go duration text (checked in ../job/inputs.ts). */
const DURATION = z.union([z.number(), z.string()]);

/** The Job: every field, in the order the SDK and the reference page list them. */
export const jobDefinition = defineResource({
  name: "Job",
  module: "job",
  doc: "A scheduler job.",
  argsDoc: "Arguments of a {@link Job}. Set exactly one of `jobspec` and `job`.",
  id: "<jobId>@<namespace>",
  replaceOrder: "delete-first",
  notes:
    "The job is also replaced (stopped, then registered anew) when its ID or type changes, or when periodic or parameterized is switched on or off. Any other change of `jobspec`, `job` or `variables` updates it through the scheduler's plan, which the preview shows, with check-and-set on the job's modify index. State keeps `normalizedJob` and `inputsHash` in place of the sources.",
  sdkImports: [
    'import type { Job as JobDefinition } from "../../provider/schemas/scheduler";',
    'import { secretInputsOf } from "../job-secrets";',
  ],
  sdkComputed: { __secretInputs: "secretInputsOf(args)" },
  fields: {
    jobspec: field.string({
      doc: "The job as HCL2 jobspec text; the scheduler parses (and canonicalizes) it, so formatting never shows as a change.",
      kind: "source",
      rule: z.string().refine((s) => s.trim() !== "", "must not be empty or only whitespace: give HCL2 jobspec text"),
      echo: false,
      sdkOutput: false,
    }),
    job: field.custom({
      doc: "The job as an object in the API's JSON shape (`ID`, `TaskGroups`, ...); unknown fields are kept and sent.",
      kind: "source",
      rule: JobSchema,
      sdkType: "JobDefinition",
      echo: false,
      sdkOutput: false,
    }),
    variables: field.custom({
      doc: "Variables of a jobspec: var-file text, or a map rendered to var-file text.",
      kind: "source",
      rule: z.union([z.string(), z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))]),
      sdkType: "string | Record<string, pulumi.Input<string | number | boolean>>",
      echo: false,
      sdkOutput: false,
    }),
    namespace: field.string({
      doc: "Namespace of the job; default: the job's own, else the connection's, else `default`. A change replaces the job.",
      outputDoc: "Namespace the job lives in.",
      kind: "source",
      rule: requestName(),
      replaceOnChange: true,
      echo: false,
      sdkOutputType: "string",
    }),
    region: field.string({
      doc: "Region of the job; default: the job's own, else the connection's, else `global`. A change replaces the job.",
      outputDoc: "Region the job lives in.",
      kind: "source",
      rule: requestName(),
      replaceOnChange: true,
      echo: false,
      sdkOutputType: "string",
    }),
    policyOverride: field.boolean({
      doc: "Override soft-mandatory policies on register and plan.",
      kind: "setting",
      sdkOutput: false,
    }),
    preserveCounts: field.boolean({
      doc: "Keep the running task group counts over the spec's (for autoscaled groups).",
      kind: "setting",
      sdkOutput: false,
    }),
    preserveResources: field.boolean({
      doc:
        "Keep the running task resources (CPU, cores, memory, memory max) over the spec's, for vertically " +
        "scaled tasks. With this or `preserveCounts`, a job that was only scaled since the last `up` is updated " +
        'on its current index instead of failing as "changed outside Pulumi".',
      kind: "setting",
      sdkOutput: false,
    }),
    waitForCompletion: field.boolean({
      doc: "Batch and sysbatch jobs: `up` waits until the job's allocations finished (at most `deploymentTimeout`), and fails naming failed ones.",
      kind: "setting",
      sdkOutput: false,
    }),
    runOnce: field.boolean({
      doc:
        "Batch and sysbatch jobs: once finished and garbage-collected by the scheduler, the job stays in the " +
        "stack as done (refresh keeps it, the next `up` does not register it again) until it or `triggers` changes.",
      kind: "setting",
      sdkOutput: false,
    }),
    triggers: field.custom({
      doc:
        "Any change of this map runs the job again: its hash goes into the job's meta, so a new version is " +
        "registered. When a value is a secret, the hash is keyed (with a key state keeps as a secret).",
      kind: "setting",
      rule: z.record(z.string(), z.string()),
      sdkType: "Record<string, pulumi.Input<string>>",
      sdkOutput: false,
    }),
    evalPriority: field.number({
      doc: "Priority (1-100) of the evaluations this resource's registrations create; 0 or unset: the job's priority.",
      kind: "setting",
      rule: z
        .number()
        .int("must be a whole number")
        .min(0, "must be from 1 to 100 (0: the job's priority)")
        .max(100, "must be from 1 to 100 (0: the job's priority)"),
      sdkOutput: false,
    }),
    waitForDeployment: field.boolean({
      doc: "Wait for the deployment of a service job to finish (default true).",
      kind: "setting",
      unsetMeans: true,
      sdkOutput: false,
    }),
    deploymentTimeout: field.duration({
      doc: 'How long to wait: seconds (a number) or a Go duration such as `"10m"`; default `"5m"`; 0: no limit of our own (the scheduler\'s progress deadline still ends a stuck deployment).',
      kind: "setting",
      rule: DURATION,
      unsetMeans: "5m",
      sdkOutput: false,
    }),
    onDeploymentFailure: field.custom({
      doc:
        'What to do when the deployment fails and the scheduler\'s auto_revert did not roll back: `"revert"` ' +
        '(default) registers the version that ran before again; `"fail"` leaves the failed version; ' +
        '`{ revertTo: "<tag>" }` registers the version carrying that version tag (see `JobVersionTag`) again, ' +
        "only while the failed version is still the job's current one. The update fails either way.",
      kind: "setting",
      rule: z.union([
        z.enum(["revert", "fail"]),
        z.strictObject({ revertTo: z.string().min(1, "must name a version tag") }),
      ]),
      sdkType: '"revert" | "fail" | { revertTo: pulumi.Input<string> }',
      unsetMeans: "revert",
      sdkOutput: false,
    }),
    promotion: field.custom({
      doc:
        'Canary promotion when the deployment places canaries: `"manual"` (default; `up` ends while the ' +
        'deployment waits for a person to promote it, and says so), `"auto"` (promote once every canary is ' +
        'healthy, then follow the deployment to its end), or `{ soak: "10m", groups?: ["web"] }` (promote once the ' +
        "canaries, of the named groups only when given, stayed healthy and running for the soak). A failing " +
        "canary fails the update, which then goes through `onDeploymentFailure`.",
      kind: "setting",
      rule: z.union([
        z.enum(["manual", "auto"]),
        z.strictObject({
          soak: DURATION,
          groups: z
            .array(z.string().min(1, "must not be empty"))
            .min(1, "must name at least one group; leave it out for every group")
            .optional(),
        }),
      ]),
      sdkType:
        '"manual" | "auto" | { soak: pulumi.Input<number | string>; groups?: pulumi.Input<pulumi.Input<string>[]> }',
      unsetMeans: "manual",
      sdkOutput: false,
    }),
    allowPlanDrift: field.boolean({
      doc:
        "Register even when the scheduler's plan, taken again right before the register, shows destructive " +
        "updates or failed placements that the plan shown by this `up` did not (default false: refuse).",
      kind: "setting",
      sdkOutput: false,
    }),
    purgeOnDestroy: field.boolean({
      doc: "Purge the job on destroy instead of only stopping it.",
      kind: "setting",
      unsetMeans: false,
      sdkOutput: false,
    }),
    adopt: field.boolean({
      doc: "Take over a running job with the same ID instead of failing (it is registered over, with check-and-set).",
      kind: "setting",
      unsetMeans: false,
      sdkOutput: false,
    }),
    connection: field.connection("scheduler", "reads"),
    __secretInputs: field.custom({
      doc:
        "Set by the SDK's Job, not by users: which sources are secret (`jobspec`, `job`, `variables`, " +
        "`variables.<name>`, `triggers`, `triggers.<key>`), so the provider keeps their values out of the text it " +
        "shows and off the scheduler. Never compared by " +
        "`diff`; previews leave it out (a `__` name).",
      rule: z.array(z.string()),
      sdkType: "string[]",
      sdkArg: false,
      echo: false,
      sdkOutput: false,
    }),
    jobId: field.string({ doc: "ID of the job.", kind: "output", required: true }),
    type: field.string({ doc: "`service`, `batch`, `system` or `sysbatch`.", kind: "output", required: true }),
    version: field.number({ doc: "Version the job is on.", kind: "output", required: true }),
    jobModifyIndex: field.number({
      doc: "Index of the last spec change (the check-and-set index of the next update).",
      kind: "output",
      required: true,
    }),
    modifyIndex: field.number({ doc: "Index of the last change of any kind.", kind: "output", required: true }),
    status: field.string({ doc: "`pending`, `running` or `dead`.", kind: "output", required: true }),
    statusDescription: field.string({ doc: "What the scheduler says of the status.", kind: "output", required: true }),
    stopped: field.boolean({
      doc: "True when the job was stopped outside Pulumi (the next update starts it again).",
      kind: "output",
      required: true,
    }),
    evalId: field.string({
      doc: "Evaluation of the last registration made by this resource.",
      kind: "output",
      required: true,
    }),
    deploymentId: field.string({
      doc:
        'ID of the deployment the last `up` followed ("" when none was, e.g. with `waitForDeployment: false`). ' +
        "A refresh reads it again when the job changed since or the deployment had not finished. Allocations are " +
        "not outputs (they change with every reschedule): read them live with the `clients` export.",
      kind: "output",
      required: true,
    }),
    deploymentStatus: field.string({
      doc: "Status of that deployment (`successful`, `failed`, `running`, ...).",
      kind: "output",
      required: true,
    }),
    deploymentStatusDescription: field.string({
      doc: "What the scheduler says of that deployment's status.",
      kind: "output",
      required: true,
    }),
    collected: field.boolean({
      doc: "runOnce: true once the finished batch job was garbage-collected by the scheduler (kept in the stack as done).",
      kind: "output",
    }),
    normalizedJob: field.string({
      doc: "The job spec state compares the next desired job with (canonical JSON).",
      kind: "output",
      required: true,
      secret: "sourced",
    }),
    inputsHash: field.string({
      doc: 'Hash of the inputs `normalizedJob` was derived from ("" when it came from the server).',
      kind: "output",
      required: true,
      secret: "sourced",
      sdkOutput: false,
    }),
    secretMask: field.custom({
      doc:
        "Which values of `normalizedJob` came from secrets (set only when some did): `all` (a secret jobspec or " +
        "job), `config` (a secret variable: configuration fields such as Env are masked), `values` (the texts " +
        "that came from a secret) and `key` (of the hash of secret `triggers` in the job's meta). Text built " +
        "from the stored job (the plan, notes, errors) masks them even after the program dropped the secret or " +
        "made it plain.",
      kind: "output",
      rule: z.strictObject({
        all: z.boolean().optional(),
        config: z.boolean().optional(),
        values: z.array(z.string()).optional(),
        key: z.string().optional(),
      }),
      sdkType: "{ all?: boolean; config?: boolean; values?: string[]; key?: string }",
      secret: "sourced",
      sdkOutput: false,
    }),
    incomplete: field.enum(["register", "rollout"], {
      doc:
        "Set when the last create or update did not finish: `register` (a register whose outcome is unknown; the " +
        "indexes are those from before it) or `rollout` (registered, not followed to the end). The next diff " +
        "reports a change, so the next `up` finishes it.",
      kind: "output",
      sdkOutput: false,
    }),
    rolloutFailed: field.boolean({
      doc: "Set only in the state a failed rollout leaves (with Pulumi's init errors); the next update or refresh drops it.",
      kind: "output",
      sdkOutput: false,
    }),
    schemaVersion: field.number({ doc: "The version of the state's shape.", kind: "output", required: true }),
  },
});
