/**
 * Drives Pulumi's real dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`, what the CLI's
 * `pulumi-resource-pulumi-nodejs` runs) over gRPC, as the engine does. The host is started with the
 * project as its working directory, so the `require(...)` calls inside `__provider` texts resolve
 * against the project's node_modules. The proto modules, grpc-js and google-protobuf are the ones the
 * project's @pulumi/pulumi uses, so the messages match the host's.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type * as grpcTypes from "@grpc/grpc-js";
import type * as provGrpcTypes from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as provTypes from "@pulumi/pulumi/proto/provider_pb";
import type * as statusTypes from "@pulumi/pulumi/proto/status_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import { PROJECT_NAME, type EngineProject } from "./project";

/** What a preview passes for a value not known yet (pulumi runtime/rpc.ts `unknownValue`). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The secret wrapper the engine and mocks use: `{[SECRET_SIG_KEY]: SECRET_SIG, value}`. */
export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** True when `v` is a secret wrapper (`{[SECRET_SIG_KEY]: SECRET_SIG, value}`). */
export function isSecretWrapped(v: unknown): boolean {
  return typeof v === "object" && v !== null && (v as Props)[SECRET_SIG_KEY] === SECRET_SIG;
}

/**
 * A value as the engine sends it to this host, which accepts no secrets (Configure answers so): every secret
 * wrapper replaced by its value. State the host returned (a Job's outputs that came from a secret) is sent
 * back this way.
 */
export function plainOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plainOf);
  if (v === null || typeof v !== "object") return v;
  const o = v as Props;
  if (isSecretWrapped(o)) return plainOf(o["value"]);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, plainOf(x)]));
}

export type Props = Record<string, unknown>;

/** A failed call, with the partial-create details when the provider threw an init error. */
export interface HostCallError extends Error {
  readonly grpcCode: number;
  readonly details: string;
  readonly initFailed?: { id: string; properties: Props; reasons: string[] };
}

export type DiffChanges = "unknown" | "none" | "some";

/** One timed call, for the report. */
export interface CallTiming {
  readonly method: string;
  readonly ms: number;
}

/** Returns the URN the engine would give a resource of this library. */
export function urnOf(type: string, name: string, stack = "dev"): string {
  return `urn:pulumi:${stack}::${PROJECT_NAME}::pulumi-nodejs:dynamic/pulumi-secrets-scheduler:${type}::${name}`;
}

/** A running host and a gRPC client connected to it. */
export class ProviderHost {
  /** Everything the host printed after the port line (stdout and stderr), to check for leaks. */
  output = "";
  readonly timings: CallTiming[] = [];
  private readonly grpc: typeof grpcTypes;
  private readonly prov: typeof provTypes;
  private readonly struct: typeof structTypes;
  private readonly status: typeof statusTypes;
  private readonly pulumiRequire: NodeRequire;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly client: provGrpcTypes.ResourceProviderClient,
    project: EngineProject,
    readonly port: number,
    /** Spawn to port line, in ms. */
    readonly startMs: number,
  ) {
    this.grpc = project.pulumiRequire("@grpc/grpc-js") as typeof grpcTypes;
    this.prov = project.pulumiRequire("./proto/provider_pb") as typeof provTypes;
    this.struct = project.pulumiRequire("google-protobuf/google/protobuf/struct_pb") as typeof structTypes;
    this.status = project.pulumiRequire("./proto/status_pb") as typeof statusTypes;
    this.pulumiRequire = project.pulumiRequire;
  }

  /**
   * Starts the host in the project directory with `env` as its whole environment, and connects to it. The
   * engine's address is its argument, as the CLI passes it; by default one nothing listens on.
   */
  static async start(
    project: EngineProject,
    env: NodeJS.ProcessEnv = process.env,
    engineAddress = "unused-engine-address",
  ): Promise<ProviderHost> {
    const entry = project.require.resolve("@pulumi/pulumi/cmd/dynamic-provider");
    const t0 = Date.now();
    const child = spawn(project.node, [entry, engineAddress], {
      cwd: project.dir,
      env: { ...env, PULUMI_NODEJS_PROJECT: PROJECT_NAME },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let early = "";
    const port = await new Promise<number>((resolve, reject) => {
      let buf = "";
      const onData = (d: string): void => {
        buf += d;
        const nl = buf.indexOf("\n");
        if (nl < 0) return;
        child.stdout.off("data", onData);
        const n = Number(buf.slice(0, nl).trim());
        early += buf.slice(nl + 1);
        if (Number.isInteger(n) && n > 0) resolve(n);
        else reject(new Error(`host printed no port: ${buf.slice(0, 200)}`));
      };
      child.stdout.setEncoding("utf8").on("data", onData);
      child.stderr.setEncoding("utf8").on("data", (d: string) => (early += d));
      child.on("exit", (code) =>
        reject(new Error(`host exited with ${String(code)} before printing a port:\n${early}`)),
      );
    });
    const startMs = Date.now() - t0;
    const grpc = project.pulumiRequire("@grpc/grpc-js") as typeof grpcTypes;
    const { ResourceProviderClient } = project.pulumiRequire("./proto/provider_grpc_pb") as typeof provGrpcTypes;
    const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const host = new ProviderHost(child, client, project, port, startMs);
    host.output = early;
    child.stdout.on("data", (d: string) => (host.output += d));
    child.stderr.on("data", (d: string) => (host.output += d));
    return host;
  }

  /** Sends the stack config, as the engine does before any resource call; resolves to acceptSecrets. */
  async configure(config: Props): Promise<boolean> {
    const req = new this.prov.ConfigureRequest();
    req.setArgs(this.toStruct(config));
    const res = await this.call<provTypes.ConfigureRequest, provTypes.ConfigureResponse>("configure", req);
    return res.getAcceptsecrets();
  }

  /** Check(olds = old inputs, news = new inputs). */
  async check(
    urn: string,
    olds: Props,
    news: Props,
  ): Promise<{ inputs: Props; failures: { property: string; reason: string }[] }> {
    const req = new this.prov.CheckRequest();
    req.setUrn(urn);
    req.setOlds(this.sent(olds));
    req.setNews(this.sent(news));
    const res = await this.call<provTypes.CheckRequest, provTypes.CheckResponse>("check", req);
    return {
      inputs: (res.getInputs()?.toJavaScript() ?? {}) as Props,
      failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  /** Diff(olds = state outputs, news = checked new inputs). */
  async diff(
    urn: string,
    id: string,
    olds: Props,
    news: Props,
  ): Promise<{ changes: DiffChanges; replaces: string[]; deleteBeforeReplace: boolean }> {
    const req = new this.prov.DiffRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(this.sent(olds));
    req.setNews(this.sent(news));
    const res = await this.call<provTypes.DiffRequest, provTypes.DiffResponse>("diff", req);
    const C = this.prov.DiffResponse.DiffChanges;
    const c = res.getChanges();
    return {
      changes: c === C.DIFF_SOME ? "some" : c === C.DIFF_NONE ? "none" : "unknown",
      replaces: res.getReplacesList(),
      deleteBeforeReplace: res.getDeletebeforereplace(),
    };
  }

  /** Create(checked inputs); resolves to the id and the state outputs. */
  async create(urn: string, properties: Props): Promise<{ id: string; properties: Props }> {
    const req = new this.prov.CreateRequest();
    req.setUrn(urn);
    req.setProperties(this.sent(properties));
    const res = await this.call<provTypes.CreateRequest, provTypes.CreateResponse>("create", req);
    return { id: res.getId(), properties: (res.getProperties()?.toJavaScript() ?? {}) as Props };
  }

  /** Read(id, state outputs, old inputs), as refresh does; `id` "" in the result means gone. */
  async read(
    urn: string,
    id: string,
    properties: Props,
    inputs?: Props,
  ): Promise<{ id: string; properties: Props; inputs?: Props }> {
    const req = new this.prov.ReadRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(this.sent(properties));
    if (inputs !== undefined) req.setInputs(this.sent(inputs));
    const res = await this.call<provTypes.ReadRequest, provTypes.ReadResponse>("read", req);
    const ins = res.getInputs();
    return {
      id: res.getId(),
      properties: (res.getProperties()?.toJavaScript() ?? {}) as Props,
      ...(ins !== undefined ? { inputs: ins.toJavaScript() as Props } : {}),
    };
  }

  /** Update(id, olds = state outputs, news = checked new inputs); resolves to the new state outputs. */
  async update(urn: string, id: string, olds: Props, news: Props): Promise<Props> {
    const req = new this.prov.UpdateRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(this.sent(olds));
    req.setNews(this.sent(news));
    const res = await this.call<provTypes.UpdateRequest, provTypes.UpdateResponse>("update", req);
    return (res.getProperties()?.toJavaScript() ?? {}) as Props;
  }

  /** Delete(id, state outputs). */
  async delete(urn: string, id: string, properties: Props): Promise<void> {
    const req = new this.prov.DeleteRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(this.sent(properties));
    await this.call<provTypes.DeleteRequest, unknown>("delete", req);
  }

  /** Resolves to the host's Pulumi version. */
  async pluginVersion(): Promise<string> {
    const { Empty } = this.pulumiRequire("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
    const res = await this.call<emptyTypes.Empty, { getVersion(): string }>("getPluginInfo", new Empty());
    return res.getVersion();
  }

  /**
   * Interrupts the host as the engine closes a provider (SIGINT to it, pulumi plugin.go `Kill`); resolves
   * with the signal or exit code it ends with.
   */
  interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      this.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    this.child.kill("SIGINT");
    return exited;
  }

  /** Closes the client and stops the host; resolves once it has exited. */
  async close(): Promise<void> {
    this.client.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill();
    await exited;
  }

  /** Inputs or state as the engine sends them to this host, which accepts no secrets (see {@link plainOf}). */
  private sent(v: Props): structTypes.Struct {
    return this.toStruct(plainOf(v) as Props);
  }

  private toStruct(v: Props): structTypes.Struct {
    return this.struct.Struct.fromJavaScript(v as Record<string, structTypes.JavaScriptValue>);
  }

  private call<Req, Res>(method: string, req: Req): Promise<Res> {
    const fn = (
      this.client as unknown as Record<string, (r: Req, cb: (e: grpcTypes.ServiceError | null, r: Res) => void) => void>
    )[method];
    if (fn === undefined) throw new TypeError(`no gRPC method ${method}`);
    const t0 = process.hrtime.bigint();
    return new Promise<Res>((resolve, reject) => {
      fn.call(this.client, req, (err, res) => {
        this.timings.push({ method, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
        if (err) reject(this.toError(method, err));
        else resolve(res);
      });
    });
  }

  private toError(method: string, err: grpcTypes.ServiceError): HostCallError {
    const e = new Error(`${method}: ${err.details}`) as Error & {
      grpcCode: number;
      details: string;
      initFailed?: { id: string; properties: Props; reasons: string[] };
    };
    e.grpcCode = err.code;
    e.details = err.details;
    const bin = err.metadata?.get("grpc-status-details-bin")[0];
    if (bin !== undefined && typeof bin !== "string") {
      const status = this.status.Status.deserializeBinary(new Uint8Array(bin));
      for (const any of status.getDetailsList()) {
        if (any.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
        const detail = this.prov.ErrorResourceInitFailed.deserializeBinary(any.getValue_asU8());
        e.initFailed = {
          id: detail.getId(),
          properties: (detail.getProperties()?.toJavaScript() ?? {}) as Props,
          reasons: detail.getReasonsList(),
        };
      }
    }
    return e;
  }
}
