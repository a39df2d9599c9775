/**
 * The Job provider as the provider host loads it. `delete`, all a `destroy` calls, is ./destroy.ts alone;
 * the other methods load the rest of the Job code (./index.ts) on their first call.
 */
import type { ProviderImpl } from "../common";
import { deleteJob } from "./destroy";
import type { JobInputs } from "./inputs";
import type { JobOutputs } from "./state";

let full: ProviderImpl<JobInputs, JobOutputs> | undefined;

/** The Job provider of ./index.ts, loaded on first use. */
function loaded(): ProviderImpl<JobInputs, JobOutputs> {
  return (full ??= (require("./index") as typeof import("./index")).job);
}

/**
 * The Job provider (see ./index.ts), which ../../index.ts requires by name when a Job is first used.
 * @public
 */
export const job: ProviderImpl<JobInputs, JobOutputs> = {
  check: (olds, news) => loaded().check(olds, news),
  diff: (id, olds, news) => loaded().diff(id, olds, news),
  create: (inputs) => loaded().create(inputs),
  read: (id, props) => loaded().read(id, props),
  update: (id, olds, news) => loaded().update(id, olds, news),
  delete: (id, props) => deleteJob(id, props),
};
