// Batch jobs and autoscaled services (issue 21):
//   pulumi up                              # runs the report and waits until it finished; deploys web
//   (an autoscaler scales web to 3 through the scheduler's API)
//   pulumi config set image nginx:1.26     # then `pulumi up`: no "changed outside Pulumi", the count stays 3
//   (the scheduler garbage-collects the finished report)
//   pulumi refresh && pulumi up            # the report stays done: nothing runs again
//   pulumi config set dataset 2026-11-25   # then `pulumi up`: a new trigger value runs the report again
//   pulumi config set avoidA devserver-node-0 (and avoidB, webMemory 9000): `pulumi preview` lists every
//                                          # constraint that filtered nodes and the exhausted memory
//   pulumi config set failReport true      # then `pulumi up` fails, naming the failed allocation
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { Job } from "pulumi-secrets-scheduler";

const config = new pulumi.Config();

const report = new Job("report", {
  jobspec: fs.readFileSync(path.join(__dirname, "report.nomad.hcl"), "utf8"),
  variables: { fail: config.get("failReport") ?? "false" },
  waitForCompletion: true,
  runOnce: true,
  triggers: { dataset: config.require("dataset") },
  deploymentTimeout: "2m",
});

const web = new Job("web", {
  jobspec: fs.readFileSync(path.join(__dirname, "web.nomad.hcl"), "utf8"),
  variables: {
    image: config.get("image") ?? "nginx:1.25",
    avoid_a: config.get("avoidA") ?? "none",
    avoid_b: config.get("avoidB") ?? "none",
    memory: config.getNumber("webMemory") ?? 64,
  },
  preserveCounts: true,
  deploymentTimeout: "2m",
});

export const reportStatus = report.status;
export const reportVersion = report.version;
export const webVersion = web.version;
