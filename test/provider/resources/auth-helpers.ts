/**
 * Shared set-up of the secrets tests over real HTTP: a devserver on loopback port 0, the provider's stack
 * config pointing at it, the cloud controls, and a client for out-of-band changes.
 */
import { afterAll, beforeAll } from "vitest";
import { startDevServer, type DevServer, type DevServerOptions } from "../../../devserver";
import { secretsControls, type SecretsControls } from "../../../devserver/secrets";
import { SecretsClient, type SecretsClientOptions } from "../../../provider/clients/secrets";
import { setStackConfig } from "../../helpers/stack-config";

/** A running devserver with the secrets provider pointed at it. */
export interface SecretsEnv {
  dev: DevServer;
  controls: SecretsControls;
  /** A root client for out-of-band changes and for reading what the provider did. */
  client: SecretsClient;
  /** Builds another client on the same server. */
  newClient(extra?: SecretsClientOptions): SecretsClient;
  /** Requests the secrets listener answered since the last reset, as `METHOD path`. */
  requests(): string[];
  close(): Promise<void>;
}

/** Starts a devserver (with `options`) and points the provider's stack config at it. */
export async function startSecretsEnv(options: DevServerOptions = {}): Promise<SecretsEnv> {
  const dev = await startDevServer(options);
  const controls = await secretsControls(dev);
  setStackConfig({ secretsAddress: dev.urls.secrets, secretsToken: dev.rootTokens.secrets });
  const newClient = (extra: SecretsClientOptions = {}) =>
    new SecretsClient({
      address: dev.urls.secrets,
      token: dev.rootTokens.secrets,
      env: {},
      metadataUrl: controls.cloud.metadataUrl,
      metadataRetry: { baseDelayMs: 1, maxDelayMs: 5, goneRetryMs: 50 },
      ...extra,
    });
  return {
    dev,
    controls,
    client: newClient(),
    newClient,
    requests: () => dev.requestLog.filter((e) => e.service === "secrets").map((e) => `${e.method} ${e.path}`),
    close: () => dev.close(),
  };
}

/**
 * Starts a devserver for the enclosing file or `describe` (beforeAll, closed in afterAll) with an auth method
 * of the cloud type enabled at `mount`, and hands it to `use`; the provider's stack config points at it.
 */
export function withSecretsEnv(mount: string, use: (env: SecretsEnv) => void = () => undefined): void {
  let env: SecretsEnv | undefined;
  beforeAll(async () => {
    env = await startSecretsEnv();
    await env.client.mounts.enable(mount, { type: env.controls.methodType });
    use(env);
  });
  afterAll(async () => {
    await env?.close();
  });
}

/** Runs `fn` with console.error silenced; resolves to what it returned and the lines it wrote. */
export async function capturingStderr<T>(fn: () => Promise<T>): Promise<{ value: T; lines: string[] }> {
  const lines: string[] = [];
  const orig = console.error;
  console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  try {
    return { value: await fn(), lines };
  } finally {
    console.error = orig;
  }
}
