// Rollback: a failed deployment undoes itself.
//   pulumi up                          # release 1 deploys; the tag `v1` marks its version
//   pulumi config set release 2        # release 2's deployment fails (the devserver's fail switch)
//   pulumi up                          # the update fails; the library registers release 1 again
// After the failed `up`, the scheduler runs release 1 (as a new version that copies it) and the error
// says which version failed and which one now runs. `onDeploymentFailure: "fail"` would leave release 2.
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
  onDeploymentFailure: "revert",
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
