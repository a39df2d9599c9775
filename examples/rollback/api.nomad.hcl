# The api service. `release` picks the image; each new release is first placed as one canary beside the
# running allocations. `fail_deployment` is the devserver's switch that makes the deployment of this
# version report unhealthy allocations (a real cluster fails for a real reason: a bad
# image, a failing health check). The job's own auto_revert is off, so the library's revert is what runs.
variable "release" {
  type = string
}

variable "fail_deployment" {
  type    = string
  default = "false"
}

job "api" {
  datacenters = ["dc1"]
  type        = "service"

  meta = {
    "release"                   = var.release
    "devserver.fail_deployment" = var.fail_deployment
  }

  update {
    max_parallel     = 1
    canary           = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
    auto_revert      = false
  }

  group "api" {
    count = 2

    network {
      port "http" {
        to = 8080
      }
    }

    task "api" {
      driver = "docker"

      config {
        image = "example/api:${var.release}"
        ports = ["http"]
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
