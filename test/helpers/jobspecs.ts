/**
 * Jobspecs shared by the provider tests: a small service job with a rolling update, whose image is the one
 * thing most tests change, and the smallest job a deployment test needs.
 */

/** Sizes of {@link serviceSpec}'s one group. */
export interface ServiceSize {
  count?: number;
  cpu?: number;
  memory?: number;
}

/**
 * A one-group service job `id` running `image`, with a one-at-a-time update and 1 s minimum healthy time;
 * one allocation of 100 MHz and 64 MB unless `size` says otherwise.
 */
export const serviceSpec = (id: string, image: string, size: ServiceSize = {}) => `
job "${id}" {
  datacenters = ["dc1"]
  type        = "service"
  group "api" {
    count = ${size.count ?? 1}
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
        cpu    = ${size.cpu ?? 100}
        memory = ${size.memory ?? 64}
      }
    }
  }
}
`;

/** {@link serviceSpec} at its default size. */
export const SPEC = (id: string, image: string) => serviceSpec(id, image);

/** The smallest job with a deployment: group "g", one allocation, task "t" running `image` (no resources). */
export const SMALL_SPEC = (id: string, image: string) => `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    count = 1
    update {
      max_parallel = 1
    }
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
    }
  }
}
`;
