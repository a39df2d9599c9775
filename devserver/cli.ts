import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isLoopbackHost } from "./core";
import { REAL_HEADER_NAMES, secretsControls, startDevServer, type DevServerOptions } from "./index";

const USAGE = `Usage: node dist/devserver/cli.js [options]
  --host <addr>             loopback address to bind (default 127.0.0.1); other addresses are refused
  --allow-non-loopback      let --host be a non-loopback address. This exposes both services to the network,
                            over plain HTTP unless --tls-cert: every API to whoever holds a token (the root
                            tokens are printed at start and kept in --persist), and to anyone the endpoints that
                            need no token (health, logins; with --no-acl the whole scheduler API). The cloud
                            metadata service, whose token endpoint needs no authentication, stays on 127.0.0.1.
  --host-name <name>        a name clients reach it by besides loopback ones and --host (repeatable); requests
                            whose Host or Origin names anything else are refused (DNS rebinding, web pages)
  --secrets-port <n>        secrets service port (default 8200; 0 = any free port)
  --scheduler-port <n>      scheduler port (default 4646; 0 = any free port)
  --secrets-token <t>       fixed root token of the secrets service (default: random or persisted)
  --scheduler-token <t>     fixed root token of the scheduler (default: random or persisted)
  --persist <file>          keep state in this JSON file across restarts
  --no-acl                  do not enforce scheduler ACLs (the secrets service always checks tokens)
  --real-header-names       use X-Vault-* / X-Nomad-* header names instead of the spec's X-Svc-*
  --deployment-ms <n>       time a simulated deployment takes to become healthy (default 300)
  --scheduler-release <v>   act as an older scheduler release, e.g. 1.6.5 (no version tags, diff_version,
                            dispatch/payload or job actions); default: the newest
  --no-remount              act as a secrets service before 1.10: no sys/remount (404 unsupported path)
  --workload-identity       accept identity_token_audience on the method config (enterprise edition)
  --secrets-release <r>     act as another secrets server: openbao-2.6.2 (its azure plugin: no plugin
                            versions in the catalog, workload-identity fields ignored); default: Vault
  --tls-cert <file> --tls-key <file> [--tls-ca <file> [--tls-client-cert]]   serve HTTPS (mutual TLS with the last flag)
  --help`;

function port(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new TypeError(`port must be an integer 0-65535, got ${value}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: "string" },
      "allow-non-loopback": { type: "boolean" },
      "host-name": { type: "string", multiple: true },
      "secrets-port": { type: "string" },
      "scheduler-port": { type: "string" },
      "secrets-token": { type: "string" },
      "scheduler-token": { type: "string" },
      persist: { type: "string" },
      "no-acl": { type: "boolean" },
      "real-header-names": { type: "boolean" },
      "deployment-ms": { type: "string" },
      "scheduler-release": { type: "string" },
      "no-remount": { type: "boolean" },
      "workload-identity": { type: "boolean" },
      "secrets-release": { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "tls-ca": { type: "string" },
      "tls-client-cert": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const real = values["real-header-names"] === true;
  const certFile = values["tls-cert"];
  const keyFile = values["tls-key"];
  if ((certFile === undefined) !== (keyFile === undefined)) throw new TypeError("--tls-cert and --tls-key go together");
  const caFile = values["tls-ca"];
  const options: DevServerOptions = {
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values["allow-non-loopback"] === true ? { allowNonLoopback: true } : {}),
    ...(values["host-name"] !== undefined ? { hostNames: values["host-name"] } : {}),
    acl: values["no-acl"] !== true,
    ...(values.persist !== undefined ? { persistPath: values.persist } : {}),
    secretsService: {
      ...(values["no-remount"] === true ? { remount: false } : {}),
      ...(values["workload-identity"] === true ? { workloadIdentity: true } : {}),
      ...(values["secrets-release"] !== undefined ? { release: values["secrets-release"] } : {}),
    },
    schedulerService: {
      ...(values["deployment-ms"] !== undefined ? { deploymentMs: port(values["deployment-ms"], 300) } : {}),
      ...(values["scheduler-release"] !== undefined ? { release: values["scheduler-release"] } : {}),
    },
    secrets: {
      port: port(values["secrets-port"], 8200),
      ...(values["secrets-token"] !== undefined ? { rootToken: values["secrets-token"] } : {}),
      ...(real ? { headerNames: REAL_HEADER_NAMES.secrets } : {}),
    },
    scheduler: {
      port: port(values["scheduler-port"], 4646),
      ...(values["scheduler-token"] !== undefined ? { rootToken: values["scheduler-token"] } : {}),
      ...(real ? { headerNames: REAL_HEADER_NAMES.scheduler } : {}),
    },
    ...(certFile !== undefined && keyFile !== undefined
      ? {
          tls: {
            cert: readFileSync(certFile),
            key: readFileSync(keyFile),
            ...(caFile !== undefined ? { ca: readFileSync(caFile) } : {}),
            requestClientCert: values["tls-client-cert"] === true,
          },
        }
      : {}),
  };
  const server = await startDevServer(options);
  if (values.host !== undefined && !isLoopbackHost(values.host)) {
    console.warn(
      `devserver: WARNING: listening on ${values.host}, not loopback: anyone who can reach it can use every endpoint ` +
        `that needs no token${options.acl === false ? " (with --no-acl: the whole scheduler API)" : ""}, and the root ` +
        `tokens below give full control${options.tls === undefined ? "; traffic, tokens included, is plain HTTP" : ""}.`,
    );
  }
  console.log(`devserver: secrets service at ${server.urls.secrets}, scheduler at ${server.urls.scheduler}`);
  const cloud = (await secretsControls(server)).cloud;
  console.log(
    `devserver: cloud directory and metadata service at ${cloud.url} (metadata: ${cloud.metadataUrl}/metadata/...)`,
  );
  if (values.persist !== undefined) console.log(`devserver: state persisted in ${values.persist}`);
  console.log("Point the library and the examples at it (root tokens; keep them out of shared logs):");
  console.log(`  export SECRETS_ADDR=${server.urls.secrets}`);
  console.log(`  export SECRETS_TOKEN=${server.rootTokens.secrets}`);
  console.log(`  export SCHEDULER_ADDR=${server.urls.scheduler}`);
  console.log(`  export SCHEDULER_TOKEN=${server.rootTokens.scheduler}`);
  if (real) console.log("  export SECRETS_HEADER_STYLE=real SCHEDULER_HEADER_STYLE=real");
  if (options.tls !== undefined) {
    const ca = caFile ?? "<file of the CA that signed --tls-cert>";
    console.log(`  export SECRETS_CACERT=${ca} SCHEDULER_CACERT=${ca}`);
    if (values["tls-client-cert"] === true) {
      console.log("  export SECRETS_CLIENT_CERT=<client cert> SECRETS_CLIENT_KEY=<client key> (same for SCHEDULER_)");
    }
  }
  console.log("Press Ctrl+C to stop.");
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("devserver: close failed:", err instanceof Error ? err.message : err);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  console.error(`devserver: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
