# The web service an autoscaler scales (its count in this file is only the starting point). `avoid_a` and
# `avoid_b` keep it off two nodes, and `memory` can ask for more than a node has: the preview then lists
# every constraint that filtered nodes and every exhausted dimension.
variable "image" {
  type    = string
  default = "nginx:1.27"
}

variable "avoid_a" {
  type    = string
  default = "none"
}

variable "avoid_b" {
  type    = string
  default = "none"
}

variable "memory" {
  type    = number
  default = 64
}

job "web" {
  datacenters = ["dc1"]
  type        = "service"

  constraint {
    attribute = "${node.unique.name}"
    operator  = "!="
    value     = var.avoid_a
  }

  constraint {
    attribute = "${node.unique.name}"
    operator  = "!="
    value     = var.avoid_b
  }

  update {
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 2

    task "nginx" {
      driver = "docker"

      config {
        image = var.image
      }

      resources {
        cpu    = 100
        memory = var.memory
      }
    }
  }
}
