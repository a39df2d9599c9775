/**
 * Why a Job's progress lines are stack-level messages (docs/rollouts.md): Pulumi's dynamic-provider host
 * gets the resource's URN with every request, but hands a provider method only the inputs (and the ID), no
 * URN and no logger, so the provider cannot name the resource in the engine's `Log` call. This drives the real
 * host over gRPC and fails when a Pulumi release starts passing more, the day the progress lines can move to
 * the Job.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../engine/harness/pack";

interface Message {
  setUrn(urn: string): void;
  setId(id: string): void;
  setProperties(s: unknown): void;
  setOlds(s: unknown): void;
  setNews(s: unknown): void;
}
type Unary = (
  req: Message,
  cb: (e: Error | null, res: { getProperties(): { toJavaScript(): unknown } }) => void,
) => void;

describe("Pulumi's dynamic-provider host", () => {
  it("passes a provider method no URN and nothing beyond its documented arguments", { timeout: 60_000 }, async () => {
    // What each method was given: how many arguments, and whether any of them holds a URN (the serialized
    // provider's own text, which spells the prefix, left out).
    const provider = {
      async create(...args: unknown[]) {
        const seen = JSON.stringify(args, (k, v: unknown) => (k === "__provider" ? undefined : v));
        return { id: "probe", outs: { count: args.length, urn: seen.includes("urn:pulumi:") } };
      },
      async update(...args: unknown[]) {
        const seen = JSON.stringify(args, (k, v: unknown) => (k === "__provider" ? undefined : v));
        return { outs: { count: args.length, urn: seen.includes("urn:pulumi:") } };
      },
    };
    const text = (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;

    const host = spawn(process.execPath, [require.resolve("@pulumi/pulumi/cmd/dynamic-provider"), "unused"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        createInterface({ input: host.stdout }).once("line", resolve);
        host.once("exit", (code) => reject(new Error(`the host exited with ${code}`)));
      });
      const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
      const { ResourceProviderClient } = require("@pulumi/pulumi/proto/provider_grpc_pb") as {
        ResourceProviderClient: new (
          addr: string,
          creds: unknown,
        ) => Record<"create" | "update", Unary> & {
          close(): void;
        };
      };
      const pb = require("@pulumi/pulumi/proto/provider_pb") as Record<
        "CreateRequest" | "UpdateRequest",
        new () => Message
      >;
      const { Struct } = require("google-protobuf/google/protobuf/struct_pb") as {
        Struct: { fromJavaScript(v: unknown): unknown };
      };
      const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const call = (method: "create" | "update", req: Message) =>
        new Promise<unknown>((resolve, reject) =>
          client[method](req, (e, res) => (e ? reject(e) : resolve(res.getProperties().toJavaScript()))),
        );
      const urn = "urn:pulumi:dev::probe::pulumi-nodejs:dynamic:Resource::web";
      const props = Struct.fromJavaScript({ __provider: text, name: "web" });

      const create = new pb.CreateRequest();
      create.setUrn(urn);
      create.setProperties(props);
      // create(inputs)
      expect(await call("create", create)).toMatchObject({ count: 1, urn: false });

      const update = new pb.UpdateRequest();
      update.setUrn(urn);
      update.setId("probe");
      update.setOlds(props);
      update.setNews(props);
      // update(id, olds, news)
      expect(await call("update", update)).toMatchObject({ count: 3, urn: false });
      client.close();
    } finally {
      host.kill();
    }
  });
});
