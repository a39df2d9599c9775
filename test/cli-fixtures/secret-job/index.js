// A batch Job whose password variable is a secret made in the program: `pulumi.secret(...)` of a plain
// stack config value, so the Pulumi CLI's own masking of secret stack config cannot hide it. The preview
// must show the changed value as [secret] (test/secret-preview-cli.test.ts).
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Job } = require("pulumi-secrets-scheduler");

const config = new pulumi.Config();

const jobspec = `
variable "db_password" {
  type = string
}

job "pwjob" {
  datacenters = ["dc1"]
  type        = "batch"

  group "g" {
    task "t" {
      driver = "docker"

      config {
        image = "busybox:1"
      }

      env {
        DB_PASSWORD = var.db_password
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const job = new Job("pwjob", {
  jobspec,
  variables: { db_password: pulumi.secret(config.require("dbPassword")) },
});

module.exports = { jobVersion: job.version };
