/**
 * The host's texts to the engine: a stand-in engine (Pulumi's Engine service, served with the grpc-js and
 * proto modules of the project's @pulumi/pulumi) gets the plans a preview's Diff shows, and answers each
 * when the test says. The engine asks for diffs one at a time, so a Diff must not wait for the answer to
 * its plan's message once the channel to the engine works; plans made while the one before waits for its
 * answer go as one message; and the engine closes a host with SIGINT, so the host must not end before an
 * unanswered message is answered.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as engineGrpcTypes from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as engineTypes from "@pulumi/pulumi/proto/engine_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import { describe, expect, it } from "vitest";
import { scrubbedEnv, type EngineContext } from "../harness/context";
import { ProviderHost, urnOf, type Props } from "../harness/host";
import { scenarioClients, webJobspec } from "./scenarios";

/** The engine's severities (pulumirpc.LogSeverity) of a text and of a warning. */
const INFO = 1;
const WARNING = 2;

/** A message the stand-in engine got, its severity (pulumirpc.LogSeverity), and the call that answers it. */
interface Received {
  readonly message: string;
  readonly severity: number;
  answer(): void;
}

/**
 * The stand-in engine: its address, the messages in the order they came, and a wait for the first that
 * passes a test. It
 * answers each message at once unless `hold(message, index)` says to wait for the test's `answer()`.
 */
async function standInEngine(
  ctx: EngineContext,
  hold: (message: string, index: number) => boolean,
): Promise<{
  address: string;
  received: Received[];
  first(test: (message: string) => boolean): Promise<Received>;
  close(): void;
}> {
  const project = ctx.projects[0];
  const grpc = project.pulumiRequire("@grpc/grpc-js") as typeof grpcTypes;
  const { EngineService } = project.pulumiRequire("./proto/engine_grpc_pb") as typeof engineGrpcTypes;
  const { Empty } = project.pulumiRequire("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
  const received: Received[] = [];
  const waiters: { test(message: string): boolean; resolve(r: Received): void }[] = [];
  const server = new grpc.Server();
  const log: grpcTypes.handleUnaryCall<engineTypes.LogRequest, emptyTypes.Empty> = (call, cb) => {
    const message = call.request.getMessage();
    const answer = () => cb(null, new Empty());
    if (!hold(message, received.length)) answer();
    const r = { message, severity: call.request.getSeverity(), answer };
    received.push(r);
    for (const w of waiters.splice(0)) {
      if (w.test(message)) w.resolve(r);
      else waiters.push(w);
    }
  };
  server.addService(EngineService, { log } as unknown as grpcTypes.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return {
    address: `127.0.0.1:${port}`,
    received,
    first: (test) =>
      new Promise((resolve) => {
        const r = received.find((x) => test(x.message));
        if (r !== undefined) resolve(r);
        else waiters.push({ test, resolve });
      }),
    close: () => server.forceShutdown(),
  };
}

/** Registers the engine-message tests. */
export function engineMessagesSuite(get: () => EngineContext): void {
  describe("texts to the engine over gRPC", () => {
    it("the first text waits for the engine's answer; later ones, such as a preview's plans, do not, arrive in order, batched, and an interrupt waits for them", async () => {
      const ctx = get();
      // Held: the first message, and every plan.
      const engine = await standInEngine(ctx, (message, i) => i === 0 || message.includes("Scheduler plan"));
      const host = await ProviderHost.start(
        ctx.projects[0],
        scrubbedEnv(join(ctx.workDir, "cache-home-messages")),
        engine.address,
      );
      const jobId = `engine-messages-${randomBytes(3).toString("hex")}`;
      const { scheduler } = scenarioClients(ctx.devserver.urls, ctx.devserver.rootTokens);
      try {
        await host.configure(ctx.stackConfig);
        const urn = urnOf("Job", jobId);
        const inputs = (image: string, count: number): Props => ({
          jobspec: webJobspec(jobId, image, count),
          purgeOnDestroy: true,
          __provider: ctx.provider("job"),
        });
        const checked = await host.check(urn, {}, inputs("nginx:1.27", 1));

        // The first message sets the channel up: the call that shows it (here the create's rollout note)
        // waits for the engine's answer.
        let createDone = false;
        const creating = host.create(urn, checked.inputs).then((c) => ((createDone = true), c));
        const m1 = await engine.first(() => true);
        expect(m1.message).toContain(`Job "${jobId}"`);
        await host.pluginVersion(); // a round trip through the host while the answer is held
        expect(createDone).toBe(false);
        m1.answer();
        const created = await creating;

        // Later ones: a preview's Diff answers while the engine still holds the answer to its plan.
        const news = await host.check(urn, checked.inputs, inputs("nginx:1.28", 2));
        const diff = await host.diff(urn, created.id, created.properties, news.inputs);
        expect(diff.changes).toBe("some");
        const plan = (m: string) => m.includes(`Scheduler plan for job "${jobId}"`);
        const m2 = await engine.first(plan);

        // The next plans are sent only once the engine has answered the one before, in order, and those made
        // meanwhile as one message.
        for (const image of ["nginx:1.29", "nginx:1.30"]) {
          const edited = await host.check(urn, checked.inputs, inputs(image, 3));
          expect((await host.diff(urn, created.id, created.properties, edited.inputs)).changes).toBe("some");
        }
        await host.pluginVersion();
        expect(engine.received.filter((r) => plan(r.message))).toEqual([m2]);
        m2.answer();
        const m3 = await engine.first((m) => plan(m) && m !== m2.message);
        expect(m3.message.split(`Scheduler plan for job "${jobId}"`)).toHaveLength(3);
        expect(m3.message.indexOf('"nginx:1.29"')).toBeGreaterThan(-1);
        expect(m3.message.indexOf('"nginx:1.30"')).toBeGreaterThan(m3.message.indexOf('"nginx:1.29"'));

        // The engine closes the host with SIGINT: the host still serves until the last plan is answered, then
        // ends by that signal; nothing fell back to stderr.
        const exit = host.interrupt();
        expect(await host.pluginVersion()).not.toBe("");
        m3.answer();
        expect(await exit).toEqual({ code: null, signal: "SIGINT" });
        expect(engine.received.filter((r) => plan(r.message))).toEqual([m2, m3]);
        // Texts at INFO, as made, without their last newline.
        for (const m of [m1, m2, m3]) expect([m.severity, m.message.endsWith("\n")]).toEqual([INFO, false]);
        expect(host.output).not.toContain("Scheduler plan");
      } finally {
        await host.close();
        engine.close();
        await scheduler.jobs.deregister(jobId, { purge: true });
      }
    });

    it("a warning goes to the engine at WARNING, without the `warning: ` that stderr puts before it (the engine labels it)", async () => {
      const ctx = get();
      const engine = await standInEngine(ctx, () => false);
      const host = await ProviderHost.start(
        ctx.projects[0],
        scrubbedEnv(join(ctx.workDir, "cache-home-warning")),
        engine.address,
      );
      try {
        await host.configure(ctx.stackConfig);
        // A connection with TLS verification off: the client `check` makes for it warns (nothing listens there).
        const address = "https://127.0.0.1:1";
        await host
          .check(
            urnOf("Job", "engine-warning"),
            {},
            {
              jobspec: webJobspec("engine-warning", "nginx:1.27", 1),
              connection: { service: "scheduler", address, dangerouslySkipTlsVerify: true },
              __provider: ctx.provider("job"),
            },
          )
          .catch(() => undefined);
        const warning = await engine.first((m) => m.includes("TLS certificate verification is off"));
        expect(warning.severity).toBe(WARNING);
        expect(warning.message).toMatch(
          new RegExp(`^TLS certificate verification is off for the .* at ${address} .*\\)\\.$`),
        );
        expect(host.output).not.toContain("TLS certificate verification");
      } finally {
        await host.close();
        engine.close();
      }
    });
  });
}
