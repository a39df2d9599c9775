/**
 * Runs one of the child scripts (copied into the project by `createProject`) in a plain Node process with
 * the project as its working directory, and parses the JSON it prints.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { EngineProject } from "./project";

/** The parsed output of a child script. */
export interface ChildResult<T> {
  readonly value: T;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs `node <script> ...args` in the project; rejects with stderr when it exits non-zero. */
export function runChild<T>(
  project: EngineProject,
  script: string,
  args: readonly string[] = [],
  options: { input?: string; env?: Record<string, string | undefined> } = {},
): Promise<ChildResult<T>> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(project.node, [join(project.dir, script), ...args], {
      cwd: project.dir,
      // An undefined value removes the variable.
      env: Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter(([, v]) => v !== undefined)),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Date.now() - t0;
      if (code !== 0) {
        reject(new Error(`${script} exited with ${String(code)}:\n${stderr.slice(-4000)}`));
        return;
      }
      try {
        resolve({ value: JSON.parse(stdout) as T, stderr, ms });
      } catch {
        reject(new Error(`${script} printed no JSON:\n${stdout.slice(0, 2000)}\n${stderr.slice(-2000)}`));
      }
    });
    child.stdin.end(options.input ?? "");
  });
}
