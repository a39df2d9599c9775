# A nightly report: a batch job that runs to completion. `fail` is the devserver's switch that makes its
# task exit 1 (meta `devserver.fail_batch`).
variable "fail" {
  type    = string
  default = "false"
}

job "nightly-report" {
  type = "batch"

  group "report" {
    task "build" {
      driver = "exec"

      config {
        command = "/usr/local/bin/build-report"
      }

      meta = {
        "devserver.fail_batch" = var.fail
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
