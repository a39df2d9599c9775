/**
 * Secrecy by origin, through the provider against the devserver: what is computed from a secret variable
 * (through HCL functions), everything of a secret job or jobspec, the literals of a secret var-file text and
 * short secrets stay out of plan text, notes and errors, and an init error (kept by Pulumi in plaintext
 * state) carries nothing of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSchedulerService } from "../../../../devserver";
import { job } from "../../../../provider/resources/job";
import {
  applyJob,
  captureStderr,
  checked,
  countRequests,
  createJob,
  initError,
  rejection,
  startHarness,
  type Harness,
} from "./harness";

let h: Harness;
let sched: ReturnType<typeof createSchedulerService>;

beforeAll(async () => {
  sched = createSchedulerService({
    deploymentMs: 20,
    evalDelayMs: 1,
    batchMs: 20,
    nodes: { count: 3, cpu: 4000, memoryMB: 8192 },
  });
  h = await startHarness({ services: [sched] });
});
afterAll(async () => {
  await h?.close();
});

/** The forms of a secret HCL functions make of it. */
function derived(pw: string): string[] {
  return [
    Buffer.from(`user:${pw}`).toString("base64"),
    pw.toUpperCase(),
    pw.substring(2, 8),
    [...pw].reverse().join(""),
  ];
}

const FUNCS = (id: string) => `
variable "pw" {
  type = string
}
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "docker"
      user   = strrev(var.pw)
      config {
        image = "busybox:1"
      }
      service {
        name     = "svc"
        provider = "nomad"
        tags     = [base64encode("user:\${var.pw}"), upper(var.pw), substr(var.pw, 2, 6)]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

describe("a secret variable passed through HCL functions", () => {
  it("is masked in the preview plan wherever it went, with one extra parse (none when nothing is secret)", async () => {
    const OLD = "PwSecret-1a2b3c";
    const NEW = "PwSecret-9z8y7x";
    const state = await createJob({
      jobspec: FUNCS("taint"),
      variables: { pw: OLD },
      __secretInputs: ["variables.pw"],
      waitForDeployment: false,
    });
    const news = await checked(
      { jobspec: FUNCS("taint"), variables: { pw: NEW }, __secretInputs: ["variables.pw"], waitForDeployment: false },
      state.inputs,
    );
    const from = h.server.requestLog.length;
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain('Scheduler plan for job "taint"');
    expect(text).toContain("[secret]");
    for (const s of [OLD, NEW, ...derived(OLD), ...derived(NEW)]) expect(text, s).not.toContain(s);
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from)).toBe(1);

    // The same change with nothing secret: the values show, and no parse is sent beyond check's.
    const plain = await checked(
      { jobspec: FUNCS("taint"), variables: { pw: NEW }, waitForDeployment: false },
      state.inputs,
    );
    const from2 = h.server.requestLog.length;
    const shown = await captureStderr(() => job.diff(state.id, state.outs, plain));
    expect(shown.text).toContain(NEW.toUpperCase());
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from2)).toBe(0);
  });
});

describe("a secret job object", () => {
  const secretJob = (id: string, value: string, memoryMB = 64) => ({
    ID: id,
    Datacenters: ["dc1"],
    Constraints: [{ LTarget: "${node.unique.name}", RTarget: value, Operand: "=" }],
    TaskGroups: [
      {
        Name: "grp-Hidden-77",
        Count: 1,
        Tasks: [
          {
            Name: "tsk-Hidden-88",
            Driver: "docker",
            Config: { image: "busybox:1" },
            Env: { HIDDEN_KEY_99: "v" },
            Resources: { CPU: 100, MemoryMB: memoryMB },
          },
        ],
      },
    ],
  });

  it("shows no value and no name of it: constraints of failed placements, groups, tasks, map keys", async () => {
    const state = await createJob({
      job: secretJob("objsecret", "devserver-node-0"),
      __secretInputs: ["job"],
      waitForDeployment: false,
    });
    const news = await checked(
      { job: secretJob("objsecret", "PwSecret-1a2b3c", 65), __secretInputs: ["job"], waitForDeployment: false },
      state.inputs,
    );
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain('Scheduler plan for job "objsecret"');
    expect(text).toContain("- constraint [secret] filtered");
    for (const s of ["PwSecret-1a2b3c", "devserver-node-0", "grp-Hidden-77", "tsk-Hidden-88", "HIDDEN_KEY_99"])
      expect(text, s).not.toContain(s);
  });

  it("an init error carries a generic message (what Pulumi keeps in plaintext state); the detail is printed masked", async () => {
    const state = await createJob({ job: secretJob("initerr", "devserver-node-0"), __secretInputs: ["job"] });
    sched.control.failNextDeployment("initerr");
    const { value: e, text } = await captureStderr(() =>
      rejection(() => applyJob(state, { job: secretJob("initerr", "devserver-node-0", 65), __secretInputs: ["job"] })),
    );
    const err = initError(e);
    expect(err.id).toBe("initerr@default");
    const stored = JSON.stringify({ message: err.message, reasons: err.reasons, stack: err.stack });
    for (const s of ["grp-Hidden-77", "devserver-node-0"]) {
      expect(stored, s).not.toContain(s);
      expect(text, s).not.toContain(s);
    }
    expect(err.reasons).toEqual([err.message]);
    expect(err.message).toContain("did not finish");
    // The detail, masked: the failed group shows as [secret].
    expect(text).toContain('of job "initerr" in namespace "default" version 1 failed');
    expect(text).toContain('Failed groups: "[secret]"');
    expect(err.properties).toMatchObject({ rolloutFailed: true });
  });
});

describe("a waitForCompletion failure of a secret job", () => {
  it("names no group or task of it, neither in the error kept in state nor in the printed detail", async () => {
    const batch = {
      ID: "waitsecret",
      Datacenters: ["dc1"],
      Type: "batch",
      TaskGroups: [
        {
          Name: "grp-Batch-55",
          Tasks: [
            {
              Name: "tsk-Batch-66",
              Driver: "exec",
              Config: { command: "/bin/false" },
              Meta: { "devserver.fail_batch": "true" },
              Resources: { CPU: 100, MemoryMB: 64 },
            },
          ],
        },
      ],
    };
    const { value: e, text } = await captureStderr(() =>
      rejection(() => createJob({ job: batch, __secretInputs: ["job"], waitForCompletion: true })),
    );
    const err = initError(e);
    expect(err.message).toContain("did not finish");
    expect(text).toContain('Job "waitsecret"');
    expect(text).toContain("failed");
    for (const s of ["grp-Batch-55", "tsk-Batch-66"]) {
      expect(JSON.stringify({ m: err.message, r: err.reasons, s: err.stack }), s).not.toContain(s);
      expect(text, s).not.toContain(s);
    }
  });
});

describe("a secret jobspec", () => {
  it("a server error quoting a value of it (time: invalid duration) shows [secret]", async () => {
    const spec = `
job "durspec" {
  datacenters = ["dc1"]
  group "g" {
    update {
      min_healthy_time = "S3cr3tPw"
    }
    task "t" {
      driver = "docker"
      config {
        image = "busybox:1"
      }
    }
  }
}
`;
    const e = await rejection(() => job.create({ jobspec: spec, __secretInputs: ["jobspec"] }));
    expect(String(e.message)).toContain("invalid duration");
    expect(String(e.message)).not.toContain("S3cr3tPw");
    expect(String(e.stack)).not.toContain("S3cr3tPw");
  });
});

const VARFILE_SPEC = `
variable "heredoc" {
  type = string
}
variable "obj" {
  type = object({ k = string })
}
variable "lst" {
  type = list(string)
}
variable "esc" {
  type = string
}
job "varfile" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver      = "docker"
      user        = var.obj.k
      kill_signal = var.esc
      config {
        image = "busybox:1"
      }
      service {
        name     = "svc"
        provider = "nomad"
        tags     = concat(var.lst, [trimspace(var.heredoc)])
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const varFile = (n: string) => `heredoc = <<EOT
heredoc-Secret-${n}1
EOT
obj = { k = "obj-Secret-${n}2" }
lst = ["list-Secret-${n}3"]
esc = "esc-$\${Secret}-${n}4"
`;

describe("a secret var-file text", () => {
  it("masks heredoc, object, list and $${ values in the plan", async () => {
    const state = await createJob({
      jobspec: VARFILE_SPEC,
      variables: varFile("a"),
      __secretInputs: ["variables"],
      waitForDeployment: false,
    });
    const news = await checked(
      { jobspec: VARFILE_SPEC, variables: varFile("b"), __secretInputs: ["variables"], waitForDeployment: false },
      state.inputs,
    );
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain("[secret]");
    for (const n of ["a", "b"])
      for (const s of [`heredoc-Secret-${n}1`, `obj-Secret-${n}2`, `list-Secret-${n}3`, `esc-\${Secret}-${n}4`])
        expect(text, s).not.toContain(s);
  });

  it("masks them in a server error quoting them", async () => {
    h.server.faults.add({
      service: "scheduler",
      method: "POST",
      path: "/v1/jobs/parse",
      status: 400,
      body: 'bad values "heredoc-Secret-c1", "obj-Secret-c2", "list-Secret-c3", "esc-${Secret}-c4"',
      times: 4,
    });
    try {
      const e = await rejection(() =>
        job.create({ jobspec: VARFILE_SPEC, variables: varFile("c"), __secretInputs: ["variables"] }),
      );
      expect(String(e.message)).toContain("bad values");
      for (const s of ["heredoc-Secret-c1", "obj-Secret-c2", "list-Secret-c3", "esc-${Secret}-c4"])
        expect(String(e.message), s).not.toContain(s);
    } finally {
      h.server.faults.clear();
    }
  });
});

describe("a secret shorter than 4 characters", () => {
  it("is masked where a server error quotes it, and words that merely contain it stay", async () => {
    h.server.faults.add({
      service: "scheduler",
      method: "POST",
      path: "/v1/jobs/parse",
      status: 400,
      body: 'Invalid value "x9" for variable pw (x9y is fine)',
      times: 4,
    });
    try {
      const e = await rejection(() =>
        job.create({ jobspec: FUNCS("short"), variables: { pw: "x9" }, __secretInputs: ["variables.pw"] }),
      );
      expect(String(e.message)).toContain('Invalid value "[secret]"');
      expect(String(e.message)).toContain("x9y is fine");
      expect(String(e.message)).not.toMatch(/\bx9\b/);
    } finally {
      h.server.faults.clear();
    }
  });
});
