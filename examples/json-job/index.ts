// Jobs from typed objects instead of HCL: the `job` input takes the API's JSON shape (`JobDefinition`),
// so the compiler checks field names. Unknown fields are kept and sent as they are.
//   - `cache`: a service job;
//   - `report`: a parameterized batch job. Registering it runs nothing; each dispatch
//     (`POST /v1/job/report/dispatch` with Meta.customer) starts one instance.
import * as pulumi from "@pulumi/pulumi";
import { Job, type JobDefinition } from "pulumi-secrets-scheduler";

const config = new pulumi.Config();

const cache: JobDefinition = {
  ID: "cache",
  Name: "cache",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [
    {
      Name: "cache",
      Count: config.getNumber("cacheCount") ?? 1,
      Tasks: [
        {
          Name: "redis",
          Driver: "docker",
          Config: { image: "redis:7.4", args: ["--maxmemory", "64mb"] },
          Resources: { CPU: 200, MemoryMB: 128 },
        },
      ],
    },
  ],
};

const report: JobDefinition = {
  ID: "report",
  Name: "report",
  Type: "batch",
  Datacenters: ["dc1"],
  ParameterizedJob: {
    Payload: "optional",
    MetaRequired: ["customer"],
    MetaOptional: ["format"],
  },
  TaskGroups: [
    {
      Name: "report",
      Count: 1,
      Tasks: [
        {
          Name: "render",
          Driver: "docker",
          Config: { image: "example/report:3", args: ["--format", "pdf"] },
          Resources: { CPU: 500, MemoryMB: 256 },
        },
      ],
    },
  ],
};

const cacheJob = new Job("cache", { job: cache });
const reportJob = new Job("report", { job: report, purgeOnDestroy: true });

export const cacheStatus = cacheJob.status;
export const cacheDeployment = cacheJob.deploymentStatus;
export const reportJobId = reportJob.jobId;
export const reportType = reportJob.type;
