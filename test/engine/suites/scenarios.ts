/**
 * What the engine-path suite does with each resource: the program's inputs at create and after an edit,
 * which input a preview leaves unknown, and how to see the object on the server with the public clients
 * (independently of the provider under test). Order matters: later resources live on earlier ones.
 */
import { SchedulerClient } from "../../../provider/clients/scheduler";
import { SecretsClient } from "../../../provider/clients/secrets";
import type { Kind } from "../harness/context";
import type { Props } from "../harness/host";

/** Names shared by the scenarios of one run. */
export interface ScenarioEnv {
  readonly mount: string;
  readonly jobId: string;
  readonly clientSecret: string;
  readonly secrets: SecretsClient;
  readonly scheduler: SchedulerClient;
}

/** One resource kind's part in the suite. */
export interface Scenario {
  readonly kind: Kind;
  /** The resource type name (the `type` of its URN). */
  readonly type: string;
  /** The program's inputs (without `__provider`). */
  inputs(env: ScenarioEnv): Props;
  /** The inputs after an edit that updates in place. */
  edited(env: ScenarioEnv): Props;
  /** An input a preview may not know yet (it depends on another resource's output). */
  readonly unknownKey: string;
  /** Resolves to whether the object exists on the server, looked up by the public clients. */
  exists(env: ScenarioEnv): Promise<boolean>;
}

export const TENANT_ID = "00000000-0000-4000-8000-00000000aaaa";
export const CLIENT_ID = "00000000-0000-4000-8000-00000000bbbb";

/** A service jobspec; `image` and `count` vary between the create and the edit. */
export function webJobspec(id: string, image = "nginx:1.27", count = 1): string {
  return `job "${id}" {
  datacenters = ["dc1"]
  type        = "service"

  group "web" {
    count = ${count}

    network {
      port "http" { to = 80 }
    }

    task "server" {
      driver = "docker"

      config {
        image = "${image}"
        ports = ["http"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;
}

/** The five scenarios, in dependency order (delete runs them backwards). */
export const SCENARIOS: readonly Scenario[] = [
  {
    kind: "auth-mount",
    type: "AuthMount",
    inputs: (e) => ({ path: e.mount, type: "cloud", description: "engine-path test" }),
    edited: (e) => ({
      path: e.mount,
      type: "cloud",
      description: "engine-path test, edited",
      tune: { defaultLeaseTtl: "1h" },
    }),
    unknownKey: "description",
    exists: async (e) => (await e.secrets.mounts.find(e.mount)) !== undefined,
  },
  {
    kind: "auth-config",
    type: "AuthConfig",
    inputs: (e) => ({
      mount: e.mount,
      tenantId: TENANT_ID,
      resource: "https://management.example/",
      clientId: CLIENT_ID,
      clientSecret: e.clientSecret,
    }),
    edited: (e) => ({
      mount: e.mount,
      tenantId: TENANT_ID,
      resource: "https://management.example/",
      clientId: CLIENT_ID,
      clientSecret: `${e.clientSecret}-rotated`,
    }),
    unknownKey: "clientSecret",
    exists: async (e) => (await e.secrets.config.read(e.mount)) !== undefined,
  },
  {
    kind: "auth-role",
    type: "AuthRole",
    // A service principal bound: the devserver plays a plugin that refuses every login without one (or a
    // group), and check refuses such a role there.
    inputs: (e) => ({
      mount: e.mount,
      name: "web",
      tokenPolicies: ["web"],
      boundServicePrincipalIds: ["sp-1"],
      boundSubscriptionIds: ["sub-1"],
    }),
    edited: (e) => ({
      mount: e.mount,
      name: "web",
      tokenPolicies: ["web", "metrics"],
      boundServicePrincipalIds: ["sp-1"],
      boundSubscriptionIds: ["sub-1"],
      tokenTtl: "30m",
    }),
    unknownKey: "tokenPolicies",
    exists: async (e) => (await e.secrets.roles.read(e.mount, "web")) !== undefined,
  },
  {
    kind: "job",
    type: "Job",
    // Purged on destroy so the run leaves nothing behind (the default only stops the job).
    inputs: (e) => ({ jobspec: webJobspec(e.jobId), purgeOnDestroy: true }),
    edited: (e) => ({ jobspec: webJobspec(e.jobId, "nginx:1.28", 2), purgeOnDestroy: true }),
    unknownKey: "jobspec",
    exists: async (e) => (await e.scheduler.jobs.find(e.jobId)) !== undefined,
  },
  {
    kind: "job-version-tag",
    type: "JobVersionTag",
    inputs: (e) => ({ jobId: e.jobId, name: "stable", description: "engine-path test" }),
    edited: (e) => ({ jobId: e.jobId, name: "stable", description: "engine-path test, edited" }),
    unknownKey: "description",
    exists: async (e) => {
      const found = await e.scheduler.jobs.find(e.jobId);
      const versions = found === undefined ? undefined : await e.scheduler.versions.versions(e.jobId);
      return (versions?.value.Versions ?? []).some(
        (v) => (v as { VersionTag?: { Name?: string } | null }).VersionTag?.Name === "stable",
      );
    },
  },
];

/** Builds the clients the scenarios use to look at the server. */
export function scenarioClients(
  urls: { secrets: string; scheduler: string },
  tokens: { secrets: string; scheduler: string },
): {
  secrets: SecretsClient;
  scheduler: SchedulerClient;
} {
  return {
    secrets: new SecretsClient({ address: urls.secrets, token: tokens.secrets, env: {} }),
    scheduler: new SchedulerClient({ address: urls.scheduler, token: tokens.scheduler, env: {} }),
  };
}
