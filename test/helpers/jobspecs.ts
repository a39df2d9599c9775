/**
 * Jobspecs shared by the provider tests: a small service job with a rolling update, whose image is the one
 * thing a test changes.
 */

/** A one-group service job `id` running `image`, with a one-at-a-time update and 1 s minimum healthy time. */
export const SPEC = (id: string, image: string) => `
job "${id}" {
  datacenters = ["dc1"]
  type        = "service"
  group "api" {
    count = 1
    update {
      max_parallel     = 1
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    task "server" {
      driver = "docker"
      config {
        image = "${image}"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;
