import { describe, expect, it } from "vitest";
import { JobspecError, canonicalizeJob, parseJobspec } from "../../../../devserver/scheduler/hcl";
import { parseDuration } from "../../../../devserver/scheduler/hcl/duration";
import { outline } from "../../../../devserver/scheduler/hcl/outline";

const S = 1_000_000_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;

/** Returns the JobspecError message of a failing parse (fails the test if parsing succeeds). */
function parseError(hcl: string, variables?: string): string {
  try {
    parseJobspec(hcl, variables === undefined ? {} : { variables });
  } catch (e) {
    expect(e).toBeInstanceOf(JobspecError);
    return (e as Error).message;
  }
  throw new Error("expected the jobspec to be rejected");
}

const SERVICE_JOB = `
# A realistic service job.
variable "image" {
  type    = string
  default = "redis:7"
}

job "cache" {
  datacenters = ["dc1", "dc2"]
  type        = "service"
  priority    = 70
  namespace   = "team-a"
  region      = "eu"
  node_pool   = "fast"

  meta {
    owner = "ops"
    tier  = 1
  }

  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }

  constraint {
    attribute = "\${meta.rack}"
    operator  = "regexp"
    value     = "r[0-9]+"
  }

  affinity {
    attribute = "\${node.datacenter}"
    value     = "dc1"
    weight    = 80
  }

  update {
    max_parallel      = 2
    canary            = 1
    auto_revert       = true
    auto_promote      = false
    min_healthy_time  = "30s"
    healthy_deadline  = "5m"
    progress_deadline = "1h30m"
    health_check      = "checks"
    stagger           = "45s"
  }

  group "web" {
    count = 3

    network {
      mode = "bridge"
      port "http" {
        static = 8080
        to     = 80
      }
      port "metrics" {
        to           = 9100
        host_network = "private"
      }
    }

    service {
      name = "cache-web"
      port = "http"
      tags = ["web", "v1"]

      check {
        name     = "alive"
        type     = "tcp"
        interval = "10s"
        timeout  = "2s"
      }

      check {
        name           = "health"
        type           = "http"
        path           = "/health"
        protocol       = "https"
        port           = "http"
        interval       = "1m30s"
        timeout        = "500ms"
        initial_status = "critical"
      }

      check {
        type     = "script"
        command  = "/bin/check"
        args     = ["-q", "\${NOMAD_TASK_NAME}"]
        interval = "30s"
        timeout  = "5s"
      }
    }

    restart {
      attempts = 3
      interval = "30m"
      delay    = "15s"
      mode     = "delay"
    }

    reschedule {
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "1h"
      unlimited      = true
    }

    ephemeral_disk {
      size = 500
    }

    task "redis" {
      driver = "docker"
      user   = "redis"

      config {
        image   = var.image
        ports   = ["http"]
        command = "redis-server"
        args    = ["--port", "80"]
        labels = {
          app = "redis"
        }
        auth {
          username = "bot"
        }
      }

      env {
        PORT     = "\${NOMAD_PORT_http}"
        MAX_CONN = 100
        DEBUG    = false
      }

      meta {
        role = "primary"
      }

      resources {
        cpu    = 500
        memory = 256
      }

      kill_timeout = "20s"
    }
  }
}
`;

describe("parseJobspec: service job", () => {
  const job = parseJobspec(SERVICE_JOB);

  it("maps the job-level fields and takes ID and Name from the label", () => {
    expect(job).toMatchObject({
      ID: "cache",
      Name: "cache",
      Type: "service",
      Priority: 70,
      Namespace: "team-a",
      Region: "eu",
      NodePool: "fast",
      Datacenters: ["dc1", "dc2"],
      Meta: { owner: "ops", tier: "1" },
    });
  });

  it("maps constraints and affinities to LTarget/Operand/RTarget, keeping runtime interpolations", () => {
    expect(job["Constraints"]).toEqual([
      { LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" },
      { LTarget: "${meta.rack}", RTarget: "r[0-9]+", Operand: "regexp" },
    ]);
    expect(job["Affinities"]).toEqual([{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 80 }]);
  });

  it("turns update durations into nanoseconds", () => {
    expect(job["Update"]).toEqual({
      Stagger: 45 * S,
      MaxParallel: 2,
      HealthCheck: "checks",
      MinHealthyTime: 30 * S,
      HealthyDeadline: 5 * MIN,
      ProgressDeadline: HOUR + 30 * MIN,
      Canary: 1,
      AutoRevert: true,
      AutoPromote: false,
    });
  });

  it("maps the group with network ports (static -> reserved), services, checks and policies", () => {
    const [group] = job["TaskGroups"] as Record<string, unknown>[];
    expect(group).toMatchObject({
      Name: "web",
      Count: 3,
      RestartPolicy: { Attempts: 3, Interval: 30 * MIN, Delay: 15 * S, Mode: "delay" },
      ReschedulePolicy: { Delay: 30 * S, DelayFunction: "exponential", MaxDelay: HOUR, Unlimited: true },
      EphemeralDisk: { SizeMB: 500 },
      Networks: [
        {
          Mode: "bridge",
          ReservedPorts: [{ Label: "http", Value: 8080, To: 80, HostNetwork: "" }],
          DynamicPorts: [{ Label: "metrics", Value: 0, To: 9100, HostNetwork: "private" }],
        },
      ],
      Services: [
        {
          Name: "cache-web",
          PortLabel: "http",
          Tags: ["web", "v1"],
          Checks: [
            { Name: "alive", Type: "tcp", Interval: 10 * S, Timeout: 2 * S },
            {
              Name: "health",
              Type: "http",
              Path: "/health",
              Protocol: "https",
              PortLabel: "http",
              Interval: 90 * S,
              Timeout: S / 2,
              InitialStatus: "critical",
            },
            {
              Type: "script",
              Command: "/bin/check",
              Args: ["-q", "${NOMAD_TASK_NAME}"],
              Interval: 30 * S,
              Timeout: 5 * S,
            },
          ],
        },
      ],
    });
  });

  it("maps the task: driver config as a free map, env and meta as strings, resources, kill timeout", () => {
    const [group] = job["TaskGroups"] as Record<string, unknown>[];
    expect((group as Record<string, unknown>)["Tasks"]).toEqual([
      {
        Name: "redis",
        Driver: "docker",
        User: "redis",
        KillTimeout: 20 * S,
        Config: {
          args: ["--port", "80"],
          // the real decoder turns object-valued config arguments and nested blocks into lists of objects
          auth: [{ username: "bot" }],
          command: "redis-server",
          image: "redis:7",
          labels: [{ app: "redis" }],
          ports: ["http"],
        },
        Env: { DEBUG: "false", MAX_CONN: "100", PORT: "${NOMAD_PORT_http}" },
        Resources: { CPU: 500, MemoryMB: 256 },
        Meta: { role: "primary" },
      },
    ]);
  });

  it("leaves unset fields absent without canonicalize", () => {
    expect(job).not.toHaveProperty("AllAtOnce");
    expect(job).not.toHaveProperty("Periodic");
    const [group] = job["TaskGroups"] as Record<string, unknown>[];
    expect(group).not.toHaveProperty("Update");
    expect(group).not.toHaveProperty("Migrate");
  });
});

describe("parseJobspec: job types", () => {
  it("parses a batch job with groups and tasks in source order", () => {
    const job = parseJobspec(`
job "etl" {
  type        = "batch"
  datacenters = ["dc1"]
  all_at_once = true
  group "zz-extract" {
    task "pull" {
      driver = "exec"
      config {
        command = "/bin/pull"
      }
      artifact {
        source      = "https://example.com/tool.tgz"
        destination = "local/tool"
      }
    }
    task "push" {
      driver = "raw_exec"
      config {
        command = "/bin/push"
      }
    }
  }
  group "aa-load" {
    count = 2
    task "load" {
      driver = "exec"
      config {
        command = "/bin/load"
      }
    }
  }
}`);
    expect(job).toMatchObject({ ID: "etl", Type: "batch", AllAtOnce: true });
    const groups = job["TaskGroups"] as { Name: string; Tasks: { Name: string }[] }[];
    expect(groups.map((g) => g.Name)).toEqual(["zz-extract", "aa-load"]);
    expect(groups[0]?.Tasks.map((t) => t.Name)).toEqual(["pull", "push"]);
    expect(groups[0]?.Tasks[0]).toMatchObject({
      Artifacts: [{ GetterSource: "https://example.com/tool.tgz", RelativeDest: "local/tool" }],
    });
  });

  it("parses a periodic job (cron -> Spec with SpecType cron)", () => {
    const job = parseJobspec(`
job "nightly" {
  type = "batch"
  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}`);
    expect(job["Periodic"]).toEqual({
      Spec: "0 3 * * *",
      SpecType: "cron",
      ProhibitOverlap: true,
      TimeZone: "Europe/Berlin",
    });
  });

  it("parses a periodic job with several crons into Specs", () => {
    const job = parseJobspec(`job "p" {
  periodic {
    crons = ["0 1 * * *", "0 13 * * *"]
  }
}`);
    expect(job["Periodic"]).toEqual({ Specs: ["0 1 * * *", "0 13 * * *"], SpecType: "cron" });
  });

  it("parses a parameterized job with a dispatch payload", () => {
    const job = parseJobspec(`
job "render" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["format", "size"]
  }
  group "g" {
    task "t" {
      driver = "docker"
      dispatch_payload {
        file = "input.json"
      }
    }
  }
}`);
    expect(job["ParameterizedJob"]).toEqual({
      Payload: "required",
      MetaRequired: ["input"],
      MetaOptional: ["format", "size"],
    });
    const [group] = job["TaskGroups"] as { Tasks: Record<string, unknown>[] }[];
    expect(group?.Tasks[0]?.["DispatchPayload"]).toEqual({ File: "input.json" });
  });

  it("gives top-level tasks a group of their own, ahead of the declared groups", () => {
    const job = parseJobspec(`job "j" {
  task "solo" {
    driver = "exec"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}`);
    expect((job["TaskGroups"] as { Name: string }[]).map((g) => g.Name)).toEqual(["solo", "g"]);
  });

  it("fills template and vault defaults at decode time and passes vault down to tasks", () => {
    const job = parseJobspec(`job "j" {
  vault {
    policies = ["read"]
  }
  group "g" {
    task "a" {
      driver = "exec"
      template {
        data        = "x={{ key \\"x\\" }}"
        destination = "local/x"
      }
    }
    task "b" {
      driver = "exec"
      vault {
        role = "own"
      }
    }
  }
}`);
    const [group] = job["TaskGroups"] as { Tasks: Record<string, unknown>[] }[];
    const [a, b] = group?.Tasks ?? [];
    expect(a?.["Templates"]).toEqual([
      {
        EmbeddedTmpl: 'x={{ key "x" }}',
        DestPath: "local/x",
        ChangeMode: "restart",
        Perms: "0644",
        Splay: 5 * S,
        ErrMissingKey: false,
      },
    ]);
    expect(a?.["Secrets"]).toEqual({ Policies: ["read"], Env: true, ChangeMode: "restart" });
    expect(b?.["Secrets"]).toEqual({ Role: "own", Env: true, ChangeMode: "restart" });
    expect(job).not.toHaveProperty("Secrets");
  });

  it("keeps block order even when strings and heredocs contain braces and block-like text", () => {
    const job = parseJobspec(`job "j" {
  group "second-in-name" {
    task "t" {
      driver = "exec"
      template {
        data = <<EOT
group "fake" {
  }}}
EOT
        destination = "local/a"
      }
      env {
        X = "}{ \\" group \\"y\\" {"
      }
    }
  }
  group "a-first-in-name" {
    task "u" {
      driver = "exec"
    }
  }
}`);
    expect((job["TaskGroups"] as { Name: string }[]).map((g) => g.Name)).toEqual(["second-in-name", "a-first-in-name"]);
    const [group] = job["TaskGroups"] as { Tasks: Record<string, unknown>[] }[];
    expect(group?.Tasks[0]?.["Env"]).toEqual({ X: '}{ " group "y" {' });
  });
});

describe("parseJobspec: variables", () => {
  const SPEC = `
variable "image" {
  type    = string
  default = "nginx:1.25"
}
variable "replicas" {
  type    = number
  default = 1
}
variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}
locals {
  name = "web-\${var.replicas}"
}
job "web" {
  datacenters = var.dcs
  group "g" {
    count = var.replicas
    task "t" {
      driver = "docker"
      config {
        image = "\${var.image}"
        tag   = "\${local.name}-\${NOMAD_ALLOC_INDEX}"
      }
    }
  }
}`;

  const task = (job: Record<string, unknown>): Record<string, unknown> =>
    ((job["TaskGroups"] as { Tasks: Record<string, unknown>[] }[])[0]?.Tasks[0] ?? {}) as Record<string, unknown>;

  it("uses defaults and keeps unknown roots such as NOMAD_* as literal interpolations", () => {
    const job = parseJobspec(SPEC);
    expect(job["Datacenters"]).toEqual(["dc1"]);
    expect((job["TaskGroups"] as { Count: number }[])[0]?.Count).toBe(1);
    expect(task(job)["Config"]).toEqual({ image: "nginx:1.25", tag: "web-1-${NOMAD_ALLOC_INDEX}" });
  });

  it("lets var-file text override defaults, converting to the declared type", () => {
    const job = parseJobspec(SPEC, { variables: 'image = "nginx:1.27"\nreplicas = "4"\ndcs = ["a", "b"]\n' });
    expect(job["Datacenters"]).toEqual(["a", "b"]);
    expect((job["TaskGroups"] as { Count: number }[])[0]?.Count).toBe(4);
    expect(task(job)["Config"]).toEqual({ image: "nginx:1.27", tag: "web-4-${NOMAD_ALLOC_INDEX}" });
  });

  it("ignores var-file values for undeclared variables (the endpoint parses non-strictly)", () => {
    expect(parseJobspec(SPEC, { variables: 'nope = "x"' })["ID"]).toBe("web");
  });

  it("rejects a declared variable without default or value", () => {
    expect(parseError('variable "token" {\n  type = string\n}\njob "j" {}')).toBe(
      'Failed to parse job: <nil>: Unset variable "token"; A used variable must be set or have a default value; see https://www.nomadproject.io/docs/job-specification/hcl2/variables for details.',
    );
  });

  it("accepts that variable once the var-file sets it", () => {
    const job = parseJobspec('variable "token" {\n  type = string\n}\njob "j" {\n  meta {\n    t = var.token\n  }\n}', {
      variables: 'token = "abc"',
    });
    expect(job["Meta"]).toEqual({ t: "abc" });
  });

  it("rejects a reference to an undeclared variable", () => {
    expect(parseError('job "j" {\n  priority = var.nope\n}')).toBe(
      'Failed to parse job: input.hcl:2,3-11: Unsupported attribute; This object does not have an attribute named "nope".',
    );
  });

  it("rejects a var-file value that does not fit the type", () => {
    expect(parseError(SPEC, 'replicas = "many"')).toBe(
      "Failed to parse job: <nil>: Invalid value for variable; The value for replicas is not compatible with the variable's type constraint: a number is required.",
    );
  });

  it("rejects invalid var-file text and variable declarations in it", () => {
    expect(parseError(SPEC, "replicas = ")).toMatch(
      /^Failed to parse job: unable to parse var content: input\.hcl:1,12-12: Missing expression;/,
    );
    expect(parseError(SPEC, 'variable "x" {}')).toMatch(
      /^Failed to parse job: <nil>: Variable declaration in a \.var file;/,
    );
  });

  it("evaluates expressions, functions, conditionals and heredoc interpolation", () => {
    const job = parseJobspec(`variable "env" {
  default = "prod"
}
variable "ports" {
  default = { http = 80, https = 443 }
}
job "j" {
  priority = var.env == "prod" ? 90 : 10
  meta {
    upper  = upper(var.env)
    joined = join(",", ["a", var.env])
    https  = var.ports["https"]
    sum    = 1 + 2 * 3
    note   = <<-EOT
      env is \${var.env}
      literal $\${not_a_var}
    EOT
  }
}`);
    expect(job["Priority"]).toBe(90);
    expect(job["Meta"]).toEqual({
      upper: "PROD",
      joined: "a,prod",
      https: "443",
      sum: "7",
      note: "env is prod\nliteral ${not_a_var}\n",
    });
  });

  it("enforces variable validation rules", () => {
    const spec = `variable "count" {
  default = 5
  validation {
    condition     = var.count < 3
    error_message = "Count must be below 3."
  }
}
job "j" {}`;
    expect(parseError(spec)).toMatch(
      /^Failed to parse job: input\.hcl:3,3-13: Invalid value for default variable; Count must be below 3\./,
    );
    expect(parseJobspec(spec, { variables: "count = 2" })["ID"]).toBe("j");
  });
});

describe("parseDuration", () => {
  it.each([
    ["0", 0],
    ["30s", 30 * S],
    ["5m", 5 * MIN],
    ["1h30m", 90 * MIN],
    ["1.5s", 1.5 * S],
    ["300ms", 300_000_000],
    ["2us", 2000],
    ["10ns", 10],
    ["-2m", -2 * MIN],
    ["1h0m0.5s", HOUR + S / 2],
  ])("parses %s", (text, ns) => {
    expect(parseDuration(text)).toBe(ns);
  });

  it.each([
    ["", 'time: invalid duration ""'],
    ["5", 'time: missing unit in duration "5"'],
    ["5x", 'time: unknown unit "x" in duration "5x"'],
    ["abc", 'time: invalid duration "abc"'],
    ["1d", 'time: unknown unit "d" in duration "1d"'],
  ])("rejects %j with Go's message", (text, message) => {
    expect(() => parseDuration(text)).toThrow(message);
  });

  it("reports a bad jobspec duration like the real decoder", () => {
    expect(parseError('job "j" {\n  update {\n    stagger = "5x"\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,5-12: Unsuitable value type; Unsuitable duration value: time: unknown unit "x" in duration "5x"',
    );
  });
});

describe("canonicalizeJob", () => {
  it("fills the client library's job, group and task defaults for a service job", () => {
    const job = parseJobspec(`job "svc" {
  group "g" {
    task "t" {
      driver = "docker"
      service {
        port = "http"
        check {
          type     = "http"
          path     = "/"
          interval = "10s"
          timeout  = "2s"
        }
      }
    }
  }
}`);
    const c = canonicalizeJob(job);
    expect(c).toMatchObject({
      ID: "svc",
      Name: "svc",
      Region: "global",
      Namespace: "default",
      Type: "service",
      Priority: 50,
      AllAtOnce: false,
      NodePool: "",
      Stop: false,
      ParentID: "",
      Version: 0,
      Update: {
        Stagger: 30 * S,
        MaxParallel: 1,
        HealthCheck: "checks",
        MinHealthyTime: 10 * S,
        HealthyDeadline: 5 * MIN,
        ProgressDeadline: 10 * MIN,
        AutoRevert: false,
        Canary: 0,
        AutoPromote: false,
      },
    });
    // The client library leaves datacenters to the server.
    expect(c).not.toHaveProperty("Datacenters");
    const [group] = c["TaskGroups"] as Record<string, unknown>[];
    expect(group).toMatchObject({
      Count: 1,
      EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 300 },
      RestartPolicy: { Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: "fail", RenderTemplates: false },
      ReschedulePolicy: {
        Attempts: 0,
        Interval: 0,
        Delay: 30 * S,
        DelayFunction: "exponential",
        MaxDelay: HOUR,
        Unlimited: true,
      },
      Migrate: { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN },
      Update: { MaxParallel: 1, Stagger: 30 * S },
      PreventRescheduleOnLost: false,
    });
    const [task] = (group as { Tasks: Record<string, unknown>[] }).Tasks;
    expect(task).toMatchObject({
      KillTimeout: 5 * S,
      LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false },
      Resources: { CPU: 100, MemoryMB: 300, Cores: 0 },
      RestartPolicy: { Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: "fail" },
      Services: [
        {
          Name: "svc-g-t",
          PortLabel: "http",
          AddressMode: "auto",
          OnUpdate: "require_healthy",
          Provider: "consul",
          Checks: [{ Type: "http", Path: "/", Interval: 10 * S, Timeout: 2 * S, OnUpdate: "require_healthy" }],
        },
      ],
    });
  });

  it("uses batch defaults and no update policy for a batch job", () => {
    const c = canonicalizeJob({
      ID: "b",
      Type: "batch",
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
    });
    expect(c).not.toHaveProperty("Update");
    const [group] = c["TaskGroups"] as Record<string, unknown>[];
    expect(group).not.toHaveProperty("Update");
    expect(group).not.toHaveProperty("Migrate");
    expect(group).toMatchObject({
      RestartPolicy: { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * S, Mode: "fail" },
      ReschedulePolicy: {
        Attempts: 1,
        Interval: 24 * HOUR,
        Delay: 5 * S,
        DelayFunction: "constant",
        MaxDelay: 0,
        Unlimited: false,
      },
    });
  });

  it("merges job-level update into groups and group restart into tasks, keeping explicit values", () => {
    const c = canonicalizeJob(
      parseJobspec(`job "m" {
  update {
    max_parallel = 3
  }
  group "g" {
    update {
      canary = 2
    }
    restart {
      attempts = 9
    }
    task "t" {
      driver = "exec"
      restart {
        delay = "1s"
      }
      resources {
        cores = 2
      }
    }
  }
}`),
    );
    const [group] = c["TaskGroups"] as Record<string, unknown>[];
    expect(group).toMatchObject({
      Update: { MaxParallel: 3, Canary: 2, HealthCheck: "checks" },
      RestartPolicy: { Attempts: 9, Delay: 15 * S },
    });
    const [task] = (group as { Tasks: Record<string, unknown>[] }).Tasks;
    expect(task).toMatchObject({
      RestartPolicy: { Attempts: 9, Delay: S, Mode: "fail" },
      Resources: { Cores: 2, CPU: 0, MemoryMB: 300 },
    });
  });

  it("canonicalizes periodic config and treats null like unset (JSON-submitted jobs)", () => {
    const c = canonicalizeJob({
      ID: "p",
      Type: "batch",
      Priority: null,
      Periodic: { Spec: "@daily", TimeZone: "" },
      TaskGroups: null,
    });
    expect(c["Priority"]).toBe(50);
    expect(c["Periodic"]).toEqual({
      Spec: "@daily",
      Enabled: true,
      SpecType: "cron",
      ProhibitOverlap: false,
      TimeZone: "UTC",
    });
  });

  it("returns a copy and leaves its input untouched", () => {
    const input = { ID: "x", TaskGroups: [{ Name: "g" }] };
    const before = JSON.stringify(input);
    const c = canonicalizeJob(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(c).not.toBe(input);
  });

  it("is applied by parseJobspec when canonicalize is set, and is idempotent", () => {
    const once = parseJobspec(SERVICE_JOB, { canonicalize: true });
    expect(once).toEqual(canonicalizeJob(parseJobspec(SERVICE_JOB)));
    expect(canonicalizeJob(once)).toEqual(once);
  });
});

describe("parseJobspec: formatting does not matter", () => {
  const A = `job "fmt" {
  datacenters = ["dc1"]
  type = "service"
  group "g" {
    count = 2
    task "t" {
      driver = "docker"
      config {
        image = "x"
        ports = ["http"]
      }
      env {
        A = "1"
        B = "2"
      }
      resources {
        cpu = 100
        memory = 64
      }
    }
  }
}`;
  const B = `# reordered, commented and re-indented
job   "fmt"   {
  /* block comment */
  type        = "service"   // trailing comment
  datacenters = [ "dc1" ]

  group "g" {
    task "t" {
      resources {
          memory = 64
          cpu    = 100
      }
      env {
        B = "2"
        A = "1"
      }
      config {
        ports = [
          "http",
        ]
        image = "x"
      }
      driver = "docker"
    }
    count = 2
  }
}
`;

  it("produces identical JSON for comments, whitespace and attribute order", () => {
    expect(JSON.stringify(parseJobspec(B))).toBe(JSON.stringify(parseJobspec(A)));
    expect(JSON.stringify(parseJobspec(B, { canonicalize: true }))).toBe(
      JSON.stringify(parseJobspec(A, { canonicalize: true })),
    );
  });

  it("does produce different JSON when a value changes", () => {
    expect(JSON.stringify(parseJobspec(A.replace("memory = 64", "memory = 65")))).not.toBe(
      JSON.stringify(parseJobspec(A)),
    );
  });
});

describe("parseJobspec: errors", () => {
  it("rejects an empty spec", () => {
    expect(parseError("")).toBe("Job spec is empty");
  });

  it("rejects a spec without a job block", () => {
    expect(parseError("  \n# nothing\n")).toBe(
      "Failed to parse job: <nil>: Missing job block; A job block is required",
    );
  });

  it("reports syntax errors with the parser's position and wording", () => {
    expect(parseError('job "x" {\n  count = \n}')).toBe(
      "Failed to parse job: input.hcl:2,11-3,1: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    );
    expect(parseError('job "x" {\n  a = 1\n')).toMatch(
      /^Failed to parse job: input\.hcl:1,9-10: Unclosed configuration block;/,
    );
  });

  it("rejects unknown arguments and blocks, suggesting close names", () => {
    expect(parseError('job "x" {\n  group "g" {\n    cont = 1\n    tsk "t" {}\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,5-9: Unsupported argument; An argument named "cont" is not expected here. Did you mean "count"?\n' +
        'input.hcl:4,5-8: Unsupported block type; Blocks of type "tsk" are not expected here. Did you mean "task"?',
    );
  });

  it("rejects wrong value types, duplicate single blocks, two jobs and missing labels", () => {
    expect(parseError('job "x" {\n  priority = [1]\n}')).toBe(
      'Failed to parse job: input.hcl:2,3-11: Incorrect attribute value type; Inappropriate value for attribute "priority": a number is required.',
    );
    expect(parseError('job "x" {\n  update {\n  }\n  update {\n  }\n}')).toBe(
      "Failed to parse job: input.hcl:4,3-9: Duplicate update block; Only one update block is allowed. Another was defined at input.hcl:2,3-9.",
    );
    expect(parseError('job "a" {}\njob "b" {}')).toBe(
      'Failed to parse job: input.hcl:2,1-4: Duplicate job block; Only one block of type "job" is allowed. Previous definition was at input.hcl:1,1-4.',
    );
    expect(parseError('job "a" {\n  group {\n  }\n}')).toBe(
      "Failed to parse job: input.hcl:2,3-8: Missing name for group; All group blocks must have 1 labels (name).",
    );
  });

  it("rejects unknown functions", () => {
    expect(parseError('job "x" {\n  region = nope("a")\n}')).toBe(
      'Failed to parse job: input.hcl:2,3-9: Call to unknown function; There is no function named "nope".',
    );
  });

  it("parses synchronously and repeatedly with one parser instance", () => {
    for (let i = 0; i < 20; i++) expect(parseJobspec(`job "j${i}" {}`)["ID"]).toBe(`j${i}`);
  });
});

describe("parseJobspec: less common syntax", () => {
  it("accepts meta and env as arguments, which allows keys that are not identifiers", () => {
    const job = parseJobspec(`job "j" {
  meta = {
    "team.name" = "core"
    build       = 42
  }
  group "g" {
    task "t" {
      driver = "exec"
      env = {
        "discovery.type" = "single-node"
      }
    }
  }
}`);
    expect(job["Meta"]).toEqual({ build: "42", "team.name": "core" });
    const [group] = job["TaskGroups"] as { Tasks: Record<string, unknown>[] }[];
    expect(group?.Tasks[0]?.["Env"]).toEqual({ "discovery.type": "single-node" });
  });

  it("maps loosely modelled blocks (connect) with PascalCase names", () => {
    const job = parseJobspec(`job "j" {
  group "g" {
    service {
      name = "api"
      port = "9090"
      connect {
        sidecar_service {
          proxy {
            upstreams {
              destination_name = "db"
              local_bind_port  = 5432
            }
          }
        }
      }
    }
  }
}`);
    const [group] = job["TaskGroups"] as { Services: Record<string, unknown>[] }[];
    expect(group?.Services[0]?.["Connect"]).toEqual({
      SidecarService: { Proxy: { Upstreams: { DestinationName: "db", LocalBindPort: 5432 } } },
    });
  });

  it("maps volumes by name, volume mounts, lifecycle, logs and scaling", () => {
    const job = parseJobspec(`job "j" {
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared"
      read_only = true
    }
    scaling {
      min = 1
      max = 5
    }
    task "t" {
      driver = "exec"
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      logs {
        max_files     = 3
        max_file_size = 20
      }
      scaling "cpu" {
        max = 2000
      }
    }
  }
}`);
    const [group] = job["TaskGroups"] as Record<string, unknown>[];
    expect(group).toMatchObject({
      Volumes: { data: { Name: "data", Type: "host", Source: "shared", ReadOnly: true } },
      Scaling: { Min: 1, Max: 5, Type: "horizontal" },
      Tasks: [
        {
          Lifecycle: { Hook: "prestart", Sidecar: false },
          VolumeMounts: [{ Volume: "data", Destination: "/data" }],
          LogConfig: { MaxFiles: 3, MaxFileSizeMB: 20 },
          ScalingPolicies: [{ Max: 2000, Type: "vertical_cpu" }],
        },
      ],
    });
  });
});

describe("parseJobspec: dynamic blocks", () => {
  it("expands dynamic blocks with for_each, labels and a custom iterator", () => {
    const job = parseJobspec(`variable "ports" {
  default = { http = 8080, grpc = 0 }
}
variable "tasks" {
  default = ["a", "b"]
}
job "j" {
  group "g" {
    network {
      dynamic "port" {
        for_each = var.ports
        labels   = [port.key]
        content {
          static = port.value
        }
      }
    }
    dynamic "task" {
      for_each = var.tasks
      iterator = t
      labels   = ["worker-\${t.value}"]
      content {
        driver = "exec"
        env {
          INDEX = t.key
        }
      }
    }
  }
}`);
    const [group] = job["TaskGroups"] as Record<string, unknown>[];
    expect(group).toMatchObject({
      Networks: [{ ReservedPorts: [{ Label: "http", Value: 8080 }], DynamicPorts: [{ Label: "grpc", Value: 0 }] }],
      Tasks: [
        { Name: "worker-a", Driver: "exec", Env: { INDEX: "0" } },
        { Name: "worker-b", Driver: "exec", Env: { INDEX: "1" } },
      ],
    });
  });
});

describe("outline", () => {
  it("lists items in order with positions, skipping strings, templates, heredocs and comments", () => {
    const items = outline(`a = "x \${ {b = "}"}["b"] } %{ if true }{%{ endif }" # c {
/* d { */ block "l1" "l2" {
  e = <<-EOT
    }
    EOT
  f = [1, # {
    2]
}
g = 1`);
    expect(items).toEqual([
      { kind: "attr", name: "a", pos: { line: 1, col: 1, endCol: 2 } },
      {
        kind: "block",
        type: "block",
        labels: ["l1", "l2"],
        pos: { line: 2, col: 11, endCol: 16 },
        body: [
          { kind: "attr", name: "e", pos: { line: 3, col: 3, endCol: 4 } },
          { kind: "attr", name: "f", pos: { line: 6, col: 3, endCol: 4 } },
        ],
      },
      { kind: "attr", name: "g", pos: { line: 9, col: 1, endCol: 2 } },
    ]);
  });
});
