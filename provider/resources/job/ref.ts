/** Where a Job lives, read from its resource ID and state (a module of its own: a `delete` needs nothing else of the Job code). */

/** Where a job lives, for every request. */
export interface JobRef {
  jobId: string;
  namespace: string;
  region: string;
}

/** Returns the job's ID, namespace and region as state records them (partial state included). */
export function refOf(id: string, props: { jobId?: string; namespace?: string; region?: string }): JobRef {
  const at = id.lastIndexOf("@");
  const jobId = props.jobId ?? (at > 0 ? id.slice(0, at) : id);
  const namespace = props.namespace ?? (at > 0 ? id.slice(at + 1) : "default");
  return { jobId, namespace, region: props.region ?? "global" };
}
