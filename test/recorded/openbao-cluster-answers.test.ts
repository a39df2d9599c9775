/**
 * The answers a real three-node OpenBao 2.6.2 cluster gave while its active node was SIGKILLed and a new one
 * took over, and its standbys' reads right after a write (test/real-clusters/secrets-record.test.ts
 * recorded them into test/fixtures/recorded/openbao-2.6.2-cluster/): the devserver, given the matching
 * fault switch (LEADER_CHANGE presets, `location`, `stale`), answers each of them exactly as recorded, and
 * the library's client, meeting each node's recorded sequence in order, ends with the write applied.
 */
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE, REAL_HEADER_NAMES, startDevServer, type DevServer } from "../../devserver";
import type { FaultSpec } from "../../devserver/core/faults";
import { SecretsClient } from "../../provider/clients/secrets";
import type { LeaderChangeRecording, RecordedAnswer, StandbyReadRecording } from "../real-clusters/record-openbao";

const dir = path.join(__dirname, "..", "fixtures", "recorded", "openbao-2.6.2-cluster");
const load = <T>(f: string): T => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as T;
/** Until test/real-clusters/secrets-record.test.ts has recorded a cluster, there is nothing to reproduce. */
const recordedYet = existsSync(path.join(dir, "active-node-killed.json"));
const killed: LeaderChangeRecording = recordedYet
  ? load<LeaderChangeRecording>("active-node-killed.json")
  : { release: "openbao-2.6.2", scenario: "active-node-killed", nodes: [] };
const reads = existsSync(path.join(dir, "standby-reads.json"))
  ? load<StandbyReadRecording>("standby-reads.json")
  : undefined;

const MOUNT = "rec";
const ROLE = "r0";
/** Where a recorded `<old-active>` redirect points on the devserver: a port nothing listens on. */
const OLD_ACTIVE = "http://127.0.0.1:9";
/** Where a recorded `<other>` redirect (a standby naming the new active node) points: another such port. */
const OTHER_NODE = "http://127.0.0.1:7";

let server: DevServer;
let client: SecretsClient;
let token: string;

beforeAll(async () => {
  if (!recordedYet) return;
  server = await startDevServer({
    secretsService: { methodType: "azure", release: "openbao-2.6.2" },
    secrets: { headerNames: REAL_HEADER_NAMES.secrets },
  });
  token = server.rootTokens.secrets;
  client = new SecretsClient({
    address: server.urls.secrets,
    token,
    headerStyle: "real",
    env: {},
    retry: { baseDelayMs: 1, maxDelayMs: 10, maxAttempts: 4 },
  });
  await client.mounts.enable(MOUNT, { type: "azure", description: "recording" });
  await client.roles.write(MOUNT, ROLE, { token_policies: ["p0"], bound_service_principal_ids: ["sp"] });
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  server?.faults.clear();
  server?.resetLog();
});

const concrete = (p: string) => p.replaceAll("<mount>", MOUNT).replaceAll("<role>", ROLE);

/** Sends one request as the recorder did and describes the answer the way the recording does. */
async function ask(a: RecordedAnswer, policy: string): Promise<RecordedAnswer> {
  const res = await fetch(server.urls.secrets + concrete(a.path), {
    method: a.method,
    headers: { "x-vault-token": token, "content-type": "application/json", connection: "close" },
    ...(a.method === "POST"
      ? { body: JSON.stringify(a.path.includes("/tune") ? { description: "recording" } : { token_policies: [policy] }) }
      : {}),
    redirect: "manual",
  });
  const text = await res.text();
  const json =
    text === "" ? undefined : (JSON.parse(text) as { errors?: unknown[]; data?: { token_policies?: string[] } });
  const location = res.headers.get("location") ?? undefined;
  return {
    method: a.method,
    path: a.path,
    status: res.status,
    ...(Array.isArray(json?.errors) ? { errors: json.errors.map(String) } : {}),
    ...(location !== undefined
      ? {
          location: location
            .replace(OLD_ACTIVE, "<old-active>")
            .replace(OTHER_NODE, "<other>")
            .replace(concrete(a.path), a.path),
        }
      : {}),
    ...(a.showsWrite !== undefined && res.status === 200
      ? { showsWrite: json?.data?.token_policies?.[0] === policy }
      : {}),
  };
}

/** The devserver fault that stands for a recorded failure answer (undefined when the devserver has none). */
function faultFor(a: RecordedAnswer): Omit<FaultSpec, "service" | "path"> | undefined {
  if (a.status === 307) {
    if (a.location?.startsWith("<old-active>")) return { status: 307, location: OLD_ACTIVE };
    if (a.location?.startsWith("<other>")) return { status: 307, location: OTHER_NODE };
    return undefined;
  }
  const presets = Object.values(LEADER_CHANGE) as { status: number; body: unknown }[];
  const want = JSON.stringify(a.errors ?? []);
  const preset = presets.find(
    (p) => p.status === a.status && JSON.stringify((p.body as { errors?: unknown[] }).errors ?? []) === want,
  );
  return preset === undefined ? undefined : { status: preset.status, body: preset.body as FaultSpec["body"] };
}

const answered = killed.nodes.flatMap((n) => n.answers.map((a) => ({ role: n.role, a })));

describe.skipIf(!recordedYet)(
  "a real OpenBao 2.6.2 cluster losing its active node, as the devserver reproduces it",
  () => {
    it("was recorded with at least one failure answer (a redirect, a 5xx)", () => {
      expect(answered.filter(({ a }) => a.status >= 300).length).toBeGreaterThan(0);
    });

    it.each(answered.map(({ role, a }, i) => [`${i} ${role}: ${a.method} ${a.path} ${a.status}`, a] as const))(
      "answers %s as recorded",
      async (_name, a) => {
        if (a.status === 0) return; // the node gave no answer (its port closed): nothing for a server to reproduce
        const fault = a.status >= 300 ? faultFor(a) : undefined;
        if (a.status >= 300) expect(fault, `no devserver switch reproduces ${JSON.stringify(a)}`).toBeDefined();
        if (fault !== undefined)
          server.faults.add({ service: "secrets", method: a.method, path: concrete(a.path), times: 1, ...fault });
        // A read that showed the write is asked after writing the policy it looks for.
        if (a.showsWrite !== undefined)
          await ask({ method: "POST", path: "/v1/auth/<mount>/role/<role>", status: 204 }, `p-${a.method}`);
        const got = await ask(a, `p-${a.method}`);
        const want = a.showsWrite === false ? { ...a, showsWrite: true } : a; // a stale read is the other test's case
        expect(got).toEqual(want);
      },
    );

    it.each(killed.nodes.map((n) => [n.role, n] as const))(
      "the client's writes go through the %s node's recorded sequence and are applied",
      async (_role, n) => {
        for (const p of ["/v1/auth/<mount>/role/<role>", "/v1/sys/auth/<mount>/tune"]) {
          const failures = n.answers.filter((a) => a.method === "POST" && a.path === p && a.status >= 300);
          for (const a of failures) {
            const fault = faultFor(a);
            if (fault !== undefined)
              server.faults.add({ service: "secrets", method: "POST", path: concrete(p), times: 1, ...fault });
          }
          server.resetLog();
          const policy = `seq-${n.role}`;
          if (p.includes("/role/")) {
            await client.roles.write(MOUNT, ROLE, { token_policies: [policy], bound_service_principal_ids: ["sp"] });
            expect((await client.roles.read(MOUNT, ROLE))?.token_policies).toEqual([policy]);
          } else {
            await client.mounts.tune(MOUNT, { description: "recording" });
          }
          const sent = server.requestLog.filter(
            (e) => e.service === "secrets" && e.method === "POST" && e.path === concrete(p),
          );
          expect(sent).toHaveLength(failures.length + 1);
        }
      },
    );
  },
);

describe.skipIf(reads === undefined)("a standby's read right after a write, as the devserver reproduces it", () => {
  const stale = reads?.tries.filter((t) => t.read.showsWrite === false) ?? [];
  it("the recorded stale reads (a standby that had not caught up) are answered alike with the `stale` switch", async () => {
    for (const [i, t] of stale.slice(0, 3).entries()) {
      server.faults.add({ service: "secrets", method: "GET", path: concrete(t.read.path), stale: true, times: 1 });
      const w = await ask(t.write, `stale-${i}`);
      expect(w.status).toBe(t.write.status);
      expect(await ask(t.read, `stale-${i}`)).toEqual(t.read);
      // Once caught up, the read shows the write.
      expect(await ask(t.read, `stale-${i}`)).toEqual({ ...t.read, showsWrite: true });
    }
  });
});
