import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { createSchedulerService } from "../../../devserver/scheduler";
import { createSecretsService } from "../../../devserver/secrets";
import { serviceJob } from "../scheduler/http";
import { call, data } from "../secrets/http";

const ROOT = { secrets: { rootToken: "secrets-root" }, scheduler: { rootToken: "scheduler-root" } };

type Json = Record<string, unknown>;

function start(persistPath: string, warnings: string[] = []): Promise<DevServer> {
  return startDevServer({
    services: [createSecretsService(), createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 })],
    persistPath,
    onRestoreWarning: (m) => warnings.push(m),
    ...ROOT,
  });
}

/** The persisted document's part of one service. */
function serviceData(doc: Json, service: "secrets" | "scheduler"): Json {
  return ((doc.services as Json)[service] as Json).data as Json;
}

describe("persisted state of an older layout", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "devserver-migrate-"));
    file = join(dir, "state.json");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes a mount with its config, two roles and a job with the current devserver; returns the file's JSON. */
  async function writeCurrent(): Promise<Json> {
    const server = await start(file);
    const s = (method: string, path: string, body?: unknown): ReturnType<typeof call> =>
      call(server.urls.secrets, method, path, { token: "secrets-root", body });
    try {
      expect((await s("POST", "/v1/sys/auth/cloud", { type: "cloud" })).status).toBe(204);
      const config = { tenant_id: "tenant", resource: "https://management.example/", max_retries: 7 };
      expect((await s("POST", "/v1/auth/cloud/config", config)).status).toBe(204);
      for (const name of ["web", "api"]) {
        const role = { bound_service_principal_ids: [`sp-${name}`], token_no_default_policy: true };
        expect((await s("POST", `/v1/auth/cloud/role/${name}`, role)).status).toBe(204);
      }
      const res = await fetch(`${server.urls.scheduler}/v1/jobs`, {
        method: "POST",
        headers: { "x-svc-token": "scheduler-root", "content-type": "application/json" },
        body: JSON.stringify({ Job: serviceJob("kept") }),
      });
      expect(res.status).toBe(200);
    } finally {
      await server.close();
    }
    return JSON.parse(readFileSync(file, "utf8")) as Json;
  }

  it("restores every role, config and mount written before a field existed, with the field's default", async () => {
    const doc = await writeCurrent();
    // The file as a devserver from before these fields existed wrote it: the fields are absent.
    const secrets = serviceData(doc, "secrets");
    for (const m of secrets.mounts as Json[]) {
      delete m.plugin_version;
      delete (m.config as Json).token_type;
    }
    for (const method of secrets.methods as Json[]) {
      delete (method.config as Json).max_retries;
      for (const [, role] of method.roles as [string, Json][]) delete role.token_no_default_policy;
    }
    delete (secrets.instance as Json).location;
    writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });

    const warnings: string[] = [];
    const server = await start(file, warnings);
    try {
      const s = (method: string, path: string): ReturnType<typeof call> =>
        call(server.urls.secrets, method, path, { token: "secrets-root" });
      expect(data(await s("LIST", "/v1/auth/cloud/role")).keys).toEqual(["api", "web"]);
      for (const name of ["web", "api"]) {
        const role = data(await s("GET", `/v1/auth/cloud/role/${name}`));
        expect(role.bound_service_principal_ids).toEqual([`sp-${name}`]);
        expect(role.token_no_default_policy).toBe(false);
      }
      const config = data(await s("GET", "/v1/auth/cloud/config"));
      expect(config.tenant_id).toBe("tenant");
      expect(config.max_retries).toBe(3);
      const mount = data(await s("GET", "/v1/sys/auth/cloud"));
      expect(mount.type).toBe("cloud");
      expect((mount.config as Json).token_type).toBe("default-service");
      expect(warnings).toEqual([]);
    } finally {
      await server.close();
    }
    // Written back in the current layout, the defaults included.
    const again = serviceData(JSON.parse(readFileSync(file, "utf8")) as Json, "secrets");
    const roles = (again.methods as Json[]).flatMap((m) => (m.roles as [string, Json][]).map(([, r]) => r));
    expect(roles.map((r) => r.token_no_default_policy)).toEqual([false, false]);
  });

  it("drops a job an older devserver stored in the namespace `*`, with its evaluation, and says so", async () => {
    const doc = await writeCurrent();
    const scheduler = serviceData(doc, "scheduler");
    // The layout before: no version, and a job in `*` (such a write was accepted then).
    delete scheduler.version;
    const kept = (scheduler.jobs as Json[])[0] as Json;
    const job = { ...(kept.job as Json), ID: "starred", Name: "starred", Namespace: "*" };
    (scheduler.jobs as Json[]).push({ ...kept, namespace: "*", id: "starred", job, versions: [job] });
    (scheduler.evals as Json[]).push({ ...(scheduler.evals as Json[])[0], ID: "eval-starred", Namespace: "*" });
    writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });

    const warnings: string[] = [];
    const server = await start(file, warnings);
    try {
      const get = (path: string): Promise<Response> =>
        fetch(`${server.urls.scheduler}${path}`, { headers: { "x-svc-token": "scheduler-root" } });
      expect((await get("/v1/job/kept")).status).toBe(200);
      expect((await get("/v1/job/starred?namespace=*")).status).toBe(404);
      expect((await get("/v1/evaluation/eval-starred?namespace=*")).status).toBe(404);
      const all = (await (await get("/v1/jobs?namespace=*")).json()) as Json[];
      expect(all.map((j) => `${String(j.Namespace)}/${String(j.ID)}`)).toEqual(["default/kept"]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/job "starred" was stored in namespace "\*".*dropped/);
    } finally {
      await server.close();
    }
  });

  it("refuses a file written by a newer devserver, saying so", async () => {
    const doc = await writeCurrent();
    serviceData(doc, "secrets").version = 2;
    writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
    await expect(start(file)).rejects.toThrow(
      /secrets service state was written by a newer devserver \(layout version 2; this one reads versions 1 to 1\)/,
    );
    serviceData(doc, "secrets").version = 1;
    serviceData(doc, "scheduler").version = 3;
    writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
    await expect(start(file)).rejects.toThrow(/scheduler service state was written by a newer devserver/);
    doc.version = 2;
    writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
    await expect(start(file)).rejects.toThrow(/devserver state file was written by a newer devserver/);
  });
});
