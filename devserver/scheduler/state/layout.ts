// The scheduler module's persisted layout and its migrations (see core/migrate.ts).
import { layout, type MigrationStep } from "../../core/migrate";
import { isObject } from "./json";

const inWildcard = (record: unknown): boolean => isObject(record) && record.Namespace === "*";

/**
 * Version 1 to 2. Version 1 is what every devserver before wrote (its data carried no version): it could hold
 * jobs in the namespace `*`, which names every namespace when reading and where the real server never stores a
 * job (a write there is refused now). Version 2 never holds one: such a job goes, with its evaluations,
 * allocations and deployments, and a warning names it. Kept, it could be neither changed nor stopped as the
 * real server's jobs can, and a program's next update recreates it in a real namespace.
 */
const V1_TO_V2: MigrationStep = (data, warn) => {
  const jobs = Array.isArray(data.jobs) ? data.jobs : [];
  const dropped = jobs.filter((j) => isObject(j) && j.namespace === "*");
  if (dropped.length === 0) return data;
  for (const j of dropped) {
    const id = isObject(j) && typeof j.id === "string" ? j.id : "";
    warn(
      `scheduler: job ${JSON.stringify(id)} was stored in namespace "*", where no job can be; ` +
        "it was dropped with its evaluations, allocations and deployments",
    );
  }
  const keep = (list: unknown, stored: (r: unknown) => unknown): unknown[] =>
    (Array.isArray(list) ? list : []).filter((r) => !inWildcard(stored(r)));
  return {
    ...data,
    jobs: jobs.filter((j) => !dropped.includes(j)),
    evals: keep(data.evals, (e) => e),
    allocs: keep(data.allocs, (a) => (isObject(a) ? a.alloc : undefined)),
    deployments: keep(data.deployments, (d) => d),
  };
};

/** The layout the scheduler module writes. */
export const SCHEDULER_LAYOUT = layout("scheduler service state", 2, [V1_TO_V2]);
