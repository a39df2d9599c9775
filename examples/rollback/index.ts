// Rollback: a failed canary undoes itself, back to a tagged release; a good canary promotes itself.
//   pulumi up                          # release 1 deploys; the tag `v1` marks its version
//   pulumi config set release 2        # release 2's canary fails (the devserver's fail switch)
//   pulumi up                          # the update fails naming the group; the library reverts to the version tagged v1
//   pulumi config set release 3        # release 3 is good
//   pulumi up                          # its canary turns healthy, is promoted, and the deployment ends "successful"
// After the failed `up`, the scheduler runs release 1 (as a new version that copies it) and the error
// says which version failed, which group's canary was unhealthy, and which version now runs.
// `onDeploymentFailure: "revert"` would revert to the version that ran just before; "fail" leaves release 2.
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { Job, JobVersionTag } from "pulumi-secrets-scheduler";

const config = new pulumi.Config();
const release = config.getNumber("release") ?? 1;

const api = new Job("api", {
  jobspec: fs.readFileSync(path.join(__dirname, "api.nomad.hcl"), "utf8"),
  variables: {
    release: String(release),
    // Release 2 is the bad one in this story.
    fail_deployment: release === 2 ? "true" : "false",
  },
  deploymentTimeout: "2m",
  // Each release starts as one canary (the jobspec's `canary = 1`); promote it once it is healthy.
  promotion: "auto",
  // A failed release goes back to the version tagged `v1` (below), whatever ran just before it.
  onDeploymentFailure: { revertTo: "v1" },
});

// Tags the version release 1 runs as (created on the first `up`, unchanged afterwards).
const v1 = new JobVersionTag("v1", {
  jobId: api.jobId,
  name: "v1",
  description: "Release 1, known good",
});

export const deployedRelease = release;
export const apiVersion = api.version;
export const apiDeployment = api.deploymentStatus;
export const taggedVersion = v1.version;
