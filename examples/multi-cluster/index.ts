// One program, two clusters. Each cluster is a scheduler and a secrets service; the program makes a
// connection to each (`schedulerConnection`, `secretsConnection`) from this stack's config and passes it to
// the resources that live there, as one passes a provider instance to another provider's resources:
//   - the same `app` job and a version tag on its first version, on both schedulers;
//   - the cloud-identity auth method (mount, config, a role) on both secrets services;
//   - a `mover` job on the cluster `moverCluster` names ("a" by default): changing it to "b" replaces the
//     job, registered on b first, then deregistered on a.
// Each resource keeps its connection in the stack's state (tokens as secrets), so refresh and destroy reach
// the right cluster even if this program or its config changes.
//
// Stack config, per cluster X in A, B: clusterXSchedulerAddress, clusterXSchedulerToken (secret, optional
// where the scheduler has no ACLs), clusterXSecretsAddress, clusterXSecretsToken (secret),
// clusterXSecretsNamespace (optional: two namespaces of one secrets service serve as two); headerStyle:
// "real" for Nomad and Vault/OpenBao (default "spec"); clientSecret (secret). Optional, for clusters other
// programs share: authType (the method's type there, e.g. "azure"), mountPath, jobPrefix; versionTags false
// for schedulers before release 1.9, which have no version tags.
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  AuthConfig,
  AuthMount,
  AuthRole,
  Job,
  JobVersionTag,
  schedulerConnection,
  secretsConnection,
} from "pulumi-secrets-scheduler";

const config = new pulumi.Config();
const headerStyle = config.get("headerStyle") === "real" ? "real" : "spec";
const jobPrefix = config.get("jobPrefix") ?? "";
const versionTags = config.getBoolean("versionTags") ?? true;
const appSpec = fs.readFileSync(path.join(__dirname, "app.nomad.hcl"), "utf8");
/** The jobspec of a job with the given ID (the job block's label). */
const jobspec = (id: string) => appSpec.replace('job "app"', `job "${id}"`);

function cluster(name: "a" | "b") {
  const key = (setting: string) => `cluster${name.toUpperCase()}${setting}`;
  return {
    name,
    scheduler: schedulerConnection({
      address: config.require(key("SchedulerAddress")),
      token: config.getSecret(key("SchedulerToken")),
      headerStyle,
    }),
    secrets: secretsConnection({
      address: config.require(key("SecretsAddress")),
      token: config.requireSecret(key("SecretsToken")),
      namespace: config.get(key("SecretsNamespace")),
      headerStyle,
    }),
  };
}

const clusters = { a: cluster("a"), b: cluster("b") };

const deployed = Object.values(clusters).map((c) => {
  const app = new Job(`app-${c.name}`, {
    jobspec: jobspec(`${jobPrefix}app`),
    purgeOnDestroy: true,
    connection: c.scheduler,
  });
  const tag = versionTags
    ? new JobVersionTag(`app-${c.name}-launch`, {
        jobId: app.jobId,
        name: "launch",
        description: `The first version on cluster ${c.name}`,
        connection: c.scheduler,
      })
    : undefined;

  const mount = new AuthMount(`cloud-${c.name}`, {
    path: config.get("mountPath") ?? "cloud",
    type: config.get("authType"),
    description: `Logins of workloads with their cloud identity (cluster ${c.name})`,
    connection: c.secrets,
  });
  const methodConfig = new AuthConfig(`cloud-${c.name}`, {
    mount: mount.path,
    mountAccessor: mount.accessor,
    tenantId: "11111111-2222-4333-8444-555555555555",
    resource: "https://management.azure.com/",
    clientId: "66666666-7777-4888-9999-000000000000",
    clientSecret: config.requireSecret("clientSecret"),
    connection: c.secrets,
  });
  const role = new AuthRole(
    `app-${c.name}`,
    {
      mount: mount.path,
      mountAccessor: mount.accessor,
      name: "app",
      tokenPolicies: ["app"],
      boundGroupIds: ["12121212-3434-4565-8787-909090909090"],
      tokenTtl: "1h",
      connection: c.secrets,
    },
    { dependsOn: [methodConfig] },
  );
  return {
    cluster: c.name,
    job: app.jobId,
    version: app.version,
    tagged: tag?.version,
    accessor: mount.accessor,
    role: role.name,
  };
});

const moverCluster = config.get("moverCluster") === "b" ? clusters.b : clusters.a;
const mover = new Job("mover", {
  jobspec: jobspec(`${jobPrefix}mover`),
  purgeOnDestroy: true,
  connection: moverCluster.scheduler,
});

export const clusterSummary = deployed;
export const moverJob = mover.jobId;
export const moverOn = moverCluster.name;
