/**
 * Pulumi mocks for program-side tests: records every registration, and the additionalSecretOutputs each
 * one asked for (mocks do not apply that option, so it is read off the request to the monitor).
 */
import * as pulumi from "@pulumi/pulumi";

export interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

export interface MockRecorder {
  readonly registered: Registered[];
  /** additionalSecretOutputs of each registration, by resource name. */
  readonly secretOutputs: Map<string, string[]>;
}

interface RegisterRequest {
  getName(): string;
  getAdditionalsecretoutputsList(): string[];
}

/** Installs mocks whose resources get `state(args)` as their state; resolves to what they record. */
export async function installMocks(
  state: (args: pulumi.runtime.MockResourceArgs) => Record<string, unknown>,
): Promise<MockRecorder> {
  const rec: MockRecorder = { registered: [], secretOutputs: new Map() };
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        rec.registered.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown> });
        return { id: `${args.name}-id`, state: state(args) };
      },
      call() {
        throw new Error("no calls expected");
      },
    },
    "project",
    "stack",
    false,
  );
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(req: RegisterRequest, cb: unknown): unknown;
  };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    rec.secretOutputs.set(req.getName(), req.getAdditionalsecretoutputsList());
    return register(req, cb);
  };
  return rec;
}

/** Resolves to an output's value. */
export function outputValue<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply((v) => resolve(v)));
}
