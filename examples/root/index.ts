// The repository's own Pulumi program, which the root Pulumi.yaml runs: `pulumi up` from the repository root
// (after `npm run build`) deploys the quickstart with the library of this checkout. Everything below this
// header is examples/quickstart/index.ts line for line, but for the jobspec's path (test/examples/root-project.test.ts
// keeps the two equal). It lives here, in a directory without a package.json of its own, so that Node finds
// `pulumi-secrets-scheduler` by the package's self-reference: the nearest package.json is the repository's,
// which names the package and maps its entry points to dist/ in `exports`. (examples/quickstart has its own
// package.json, as a user's project does, so from there the name would be looked up in node_modules.)
// ---- examples/quickstart/index.ts ----
// The quickstart: everything the two services need for a workload that logs in with its cloud identity.
//   1. enable the cloud-identity auth method at `cloud/`,
//   2. configure it (directory tenant, resource, application; the client secret from stack config),
//   3. two roles: `web` for the web team's group, in one subscription and resource group; `ci` bound to a
//      service principal (a login needs a bound group or service principal: the service refuses others),
//   4. the `web` service job from an HCL2 jobspec, scaled by the `webCount` stack setting,
//   5. a version tag on the job's first version.
// Connection settings (addresses, tokens) come from stack config (`pulumi-secrets-scheduler:*`) or the
// environment, never from resource inputs: see the README.
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { AuthConfig, AuthMount, AuthRole, Job, JobVersionTag } from "pulumi-secrets-scheduler";

const config = new pulumi.Config();

const method = new AuthMount("cloud", {
  path: "cloud",
  description: "Logins of workloads with their cloud identity",
  tune: { defaultLeaseTtl: "1h", maxLeaseTtl: "24h" },
});

const methodConfig = new AuthConfig("cloud", {
  mount: method.path,
  mountAccessor: method.accessor,
  tenantId: config.get("tenantId") ?? "11111111-2222-4333-8444-555555555555",
  resource: "https://management.azure.com/",
  clientId: config.get("clientId") ?? "66666666-7777-4888-9999-000000000000",
  clientSecret: config.requireSecret("clientSecret"),
});

const webRole = new AuthRole(
  "web",
  {
    mount: method.path,
    mountAccessor: method.accessor,
    name: "web",
    tokenPolicies: ["web"],
    boundGroupIds: ["12121212-3434-4565-8787-909090909090"],
    boundSubscriptionIds: ["aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"],
    boundResourceGroups: ["web-prod"],
    tokenTtl: "1h",
  },
  { dependsOn: [methodConfig] },
);

const ciRole = new AuthRole(
  "ci",
  {
    mount: method.path,
    mountAccessor: method.accessor,
    name: "ci",
    tokenPolicies: ["ci-deploy"],
    boundServicePrincipalIds: ["99999999-8888-4777-8666-555555555555"],
    tokenTtl: "15m",
    tokenMaxTtl: "30m",
  },
  { dependsOn: [methodConfig] },
);

const web = new Job("web", {
  jobspec: fs.readFileSync(path.join(__dirname, "..", "quickstart", "web.nomad.hcl"), "utf8"),
  variables: { count: config.getNumber("webCount") ?? 2 },
});

// Without `version`, the tag goes on the version the job runs when the tag is created.
const launch = new JobVersionTag("web-launch", {
  jobId: web.jobId,
  name: "launch",
  description: "The first version the quickstart deployed",
});

export const mountAccessor = method.accessor;
export const roles = [webRole.name, ciRole.name];
export const webJob = web.jobId;
export const webVersion = web.version;
export const webDeployment = web.deploymentStatus;
export const taggedVersion = launch.version;
