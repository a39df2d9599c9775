/**
 * An HTTP pass-through on loopback that keeps the answers a cluster gives while it changes leaders: every
 * answer that is not a 2xx (status, the headers that matter, the body text) and every request the upstream
 * broke off (the socket's error code). It sits between the library and the balancer of a fault run
 * (test/real-clusters/scheduler-fault-run.test.ts); the recorded fixtures under
 * test/fixtures/recorded/nomad-1.6.5-cluster/ are distilled from what it kept. A broken upstream breaks the
 * client's connection too (no answer is made up), so the library meets what it would meet without it.
 */
import * as http from "node:http";

export interface RecordedAnswer {
  /** Milliseconds since the recorder started. */
  at: number;
  method: string;
  path: string;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** The upstream's socket error when it gave no answer. */
  error?: string;
}

export interface Recorder {
  readonly url: string;
  readonly answers: RecordedAnswer[];
  /** Requests seen, by `METHOD status` ("POST 500", "GET error"). */
  readonly counts: Map<string, number>;
  close(): Promise<void>;
}

const KEPT_HEADERS = [
  "content-type",
  "location",
  "x-nomad-index",
  "x-nomad-knownleader",
  "x-nomad-lastcontact",
  "retry-after",
];

export async function startRecorder(upstream: string): Promise<Recorder> {
  const target = new URL(upstream);
  const answers: RecordedAnswer[] = [];
  const counts = new Map<string, number>();
  const t0 = Date.now();
  const count = (k: string): void => {
    counts.set(k, (counts.get(k) ?? 0) + 1);
  };
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const out = http.request(
      { host: target.hostname, port: target.port, method, path, headers: req.headers, agent },
      (up) => {
        const status = up.statusCode ?? 0;
        count(`${method} ${status}`);
        res.writeHead(status, up.rawHeaders);
        if (status >= 200 && status < 300) {
          up.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        up.on("data", (c: Buffer) => {
          chunks.push(c);
          res.write(c);
        });
        up.on("end", () => {
          const headers: Record<string, string> = {};
          for (const h of KEPT_HEADERS) {
            const v = up.headers[h];
            if (typeof v === "string") headers[h] = v;
          }
          answers.push({
            at: Date.now() - t0,
            method,
            path,
            status,
            headers,
            body: Buffer.concat(chunks).toString("utf8"),
          });
          res.end();
        });
        up.on("error", () => res.destroy());
      },
    );
    out.on("error", (e: NodeJS.ErrnoException) => {
      count(`${method} error`);
      answers.push({ at: Date.now() - t0, method, path, error: e.code ?? e.message });
      res.destroy();
    });
    req.pipe(out);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const a = server.address();
  if (a === null || typeof a === "string") throw new Error("recorder: no TCP address");
  return {
    url: `http://127.0.0.1:${a.port}`,
    answers,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
