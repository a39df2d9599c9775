/**
 * The Job provider as the provider host loads it. `delete`, all a `destroy` calls, is ./destroy.ts alone;
 * a `read` the job list answers and a `diff` that finds the inputs unchanged, all a refresh of unchanged
 * Jobs calls, are ./refresh.ts alone; the other methods, and what those two cannot answer, load the rest of
 * the Job code (./index.ts) on first use.
 */
import type { ProviderImpl } from "../common";
import { deleteJob } from "./destroy";
import type { JobInputs } from "./inputs";
import { masked } from "./masking";
import { secretSources, storedMaskOf } from "./secrets";
import type { JobOutputs } from "./state";

/**
 * The outputs kept as Pulumi secrets only when a value of the job came from one (`secret: "sourced"` in
 * ../definitions/job.ts; test/engine/suites/lifecycle.ts holds the two lists equal): the stored job, the
 * inputs' hash and the mask. A Job with no secret keeps them in plain state, as it keeps its sources in its
 * inputs; one with a secret source (the inputs' `__secretInputs`), or whose stored job holds a value that
 * came from one (its `secretMask`), gets them back from the host wrapped as secrets, which the engine keeps
 * encrypted. A refresh keeps what state had: the engine marks an output secret again where the old one was.
 */
const SOURCED_SECRETS = ["normalizedJob", "inputsHash", "secretMask"] as const;

/** The engine's secret wrapper: a provider's output in it is kept as a Pulumi secret. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/**
 * The outputs as the host returns them: {@link SOURCED_SECRETS} wrapped as secrets when they came from one
 * (a mask in the outputs or in `also`, the old ones of a read, or a secret source among the inputs).
 */
function sealed<T extends Partial<JobOutputs> | undefined>(
  outs: T,
  inputs: Partial<JobInputs> | undefined,
  also?: Partial<JobOutputs>,
): T {
  if (outs === undefined) return outs;
  const secret = outs.secretMask !== undefined || also?.secretMask !== undefined || secretSources(inputs) !== undefined;
  if (!secret) return outs;
  const out: Record<string, unknown> = { ...outs };
  for (const k of SOURCED_SECRETS) if (out[k] !== undefined) out[k] = { [SECRET_SIG_KEY]: SECRET_SIG, value: out[k] };
  return out as T;
}

/** The same for the outputs an init error carries (a create or update that failed part-way): rethrows. */
function sealedError(inputs: Partial<JobInputs>): (e: unknown) => never {
  return (e) => {
    const err = e as { properties?: Partial<JobOutputs> } | null;
    if (err !== null && typeof err === "object" && err.properties !== undefined)
      err.properties = sealed(err.properties, inputs);
    throw e;
  };
}

type Refresh = typeof import("./refresh");
type Full = typeof import("./index");
let refresh: Refresh | undefined;
let full: Full | undefined;

/** What a refresh of unchanged Jobs calls, ./refresh.ts, loaded on first use (a `destroy` never loads it). */
function light(): Refresh {
  return (refresh ??= require("./refresh") as Refresh);
}

/** The rest of the Job code, ./index.ts, loaded on first use. */
function loaded(): Full {
  return (full ??= require("./index") as Full);
}

/**
 * The Job provider (see ./index.ts), which ../../index.ts requires by name when a Job is first used.
 * @public
 */
export const job: ProviderImpl<JobInputs, JobOutputs> = {
  check: (olds, news) => loaded().job.check(olds, news),
  // As ./index.ts's `job` does: what either part throws is masked with the secrets of the state and inputs.
  diff: (_id, olds, news) =>
    masked(
      light().changeMask(olds, news),
      async () => (await light().diffWithoutJob(olds, news)) ?? loaded().diffJob(olds, news),
    ),
  create: (inputs) =>
    loaded()
      .job.create(inputs)
      .then((r) => ({ ...r, outs: sealed(r.outs, inputs) }), sealedError(inputs)),
  read: (id, props) =>
    masked(storedMaskOf(props), async () => {
      const first = await light().readFromList(id, props);
      const r = "done" in first ? first.done : await loaded().readJob(id, props, first.listed);
      return r.props === undefined ? r : { ...r, props: sealed(r.props, undefined, props) };
    }),
  update: (id, olds, news) =>
    loaded()
      .job.update(id, olds, news)
      .then((r) => ({ ...r, outs: sealed(r.outs, news) }), sealedError(news)),
  delete: (id, props) => deleteJob(id, props),
};
