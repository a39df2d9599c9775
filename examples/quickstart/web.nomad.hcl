# The web service: the quickstart sets `count` from stack config (webCount).
variable "image" {
  type    = string
  default = "nginx:1.27"
}

variable "count" {
  type    = number
  default = 2
}

job "web" {
  datacenters = ["dc1"]
  type        = "service"

  update {
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = var.count

    network {
      port "http" {
        to = 80
      }
    }

    task "nginx" {
      driver = "docker"

      config {
        image = var.image
        ports = ["http"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
