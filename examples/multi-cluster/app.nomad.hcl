# A small service run on both clusters. The program renames the job block for its second job (`mover`).
job "app" {
  datacenters = ["dc1"]
  type        = "service"

  update {
    max_parallel     = 1
    min_healthy_time = "2s"
    healthy_deadline = "1m"
  }

  group "app" {
    count = 1

    task "sleep" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
