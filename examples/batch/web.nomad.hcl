# The web service an autoscaler scales (its count in this file is only the starting point).
variable "image" {
  type    = string
  default = "nginx:1.27"
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
    count = 2

    task "nginx" {
      driver = "docker"

      config {
        image = var.image
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
