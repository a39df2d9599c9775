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
import { storedMaskOf } from "./secrets";
import type { JobOutputs } from "./state";

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
  create: (inputs) => loaded().job.create(inputs),
  read: (id, props) =>
    masked(storedMaskOf(props), async () => {
      const first = await light().readFromList(id, props);
      return "done" in first ? first.done : loaded().readJob(id, props, first.listed);
    }),
  update: (id, olds, news) => loaded().job.update(id, olds, news),
  delete: (id, props) => deleteJob(id, props),
};
