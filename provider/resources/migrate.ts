/**
 * State migrations: every resource's outputs carry `schemaVersion`, the version of the layout they were
 * written in. Before any method sees stored state, {@link migrating} brings it to the current layout, one
 * step per version, so the resources' code knows one layout only.
 *
 * A step is a pure function per resource kind: `outputs` takes the outputs of version n and returns those of
 * version n + 1. Inputs the engine stored carry no version (the engine hands them back in `check`, and in a
 * refresh's `diff`): an `inputs` step rewrites an older form wherever it appears and leaves the current form
 * as it is, so every inputs step runs on every inputs object. Steps describe layouts that were once written,
 * so they name stored keys literally and never change afterwards; a new layout is a new step, which bumps
 * {@link SCHEMA_VERSION} (counted from the steps). Outputs of a version this code does not know (written by
 * a newer release) fail with a message to upgrade the library. This module imports no schema library: the
 * provider host wraps a kind with it before that kind's code loads (the registry of kinds, ./definitions, is
 * imported for its type only).
 */
import { UsageError } from "../errors";
import type { ProviderImpl } from "./common";
import type { ResourceKind } from "./definitions";

type Props = Record<string, unknown>;

/** One step from version n to n + 1 of one kind: what changed in its outputs, and in the inputs stored beside them. */
interface Step {
  readonly outputs?: (outputs: Props) => Props;
  readonly inputs?: (inputs: Props) => Props;
}

/**
 * Version 1 to 2. Version 1 is what every release up to 0.2.0 wrote (and what came before the first): its
 * outputs could also hold the shapes below, which version 2 never holds.
 */
const V1_TO_V2 = {
  /**
   * A Job's outputs no longer echo its sources nor keep allocations and per-group counts; which of the job's
   * values came from secrets is kept as `secretMask` (a Pulumi secret) instead of `secretInputs` beside the
   * echoed variables. Its inputs name what `check` added `__resolvedKeys` and the SDK's list of secret sources
   * `__secretInputs` (the engine's display leaves `__` names out of previews).
   */
  job: {
    outputs(o: Props): Props {
      const out = without(o, ["jobspec", "job", "variables", "secretInputs", "allocationIds", "groups"]);
      const mask = legacySecretMask(o.secretInputs, o.variables);
      if (mask !== undefined && out.secretMask === undefined) out.secretMask = mask;
      // An unsalted hash of the inputs: no longer compared; an empty one makes the next diff compare the job.
      if (typeof out.inputsHash === "string" && /^[0-9a-f]{32}$/.test(out.inputsHash)) out.inputsHash = "";
      return out;
    },
    inputs(i: Props): Props {
      if (i.resolvedKeys === undefined && i.secretInputs === undefined) return i;
      const out = without(i, ["resolvedKeys", "secretInputs"]);
      if (i.resolvedKeys !== undefined && out.__resolvedKeys === undefined) out.__resolvedKeys = i.resolvedKeys;
      if (i.secretInputs !== undefined && out.__secretInputs === undefined) out.__secretInputs = i.secretInputs;
      return out;
    },
  },
  /**
   * An AuthConfig refresh that found drift stored the secret's hash itself in the inputs (in plaintext); the
   * flag `clientSecretKept` says the same ("the secret state knows") without the value.
   */
  authConfig: {
    inputs(i: Props): Props {
      if (i.clientSecretHash === undefined) return i;
      return { ...without(i, ["clientSecretHash"]), clientSecretKept: true };
    },
  },
} satisfies Partial<Record<ResourceKind, Step>>;

/**
 * Every layout change, in order: the one at index n - 1 brings version n to n + 1, by kind (a kind it does
 * not name kept its layout). A new kind needs nothing here.
 */
const VERSIONS: readonly Partial<Record<ResourceKind, Step>>[] = [V1_TO_V2];

/** The version of the outputs' layout this code writes: one more than the steps, so a new step is the bump. */
export const SCHEMA_VERSION: number = VERSIONS.length + 1;

/** The resource kinds state migrations know: every kind of the registry. */
type MigratedKind = ResourceKind;

/**
 * The `secretMask` of a version 1 Job's outputs, from the names of its secret sources and its echoed
 * variables: one secret value of a variables map is kept as that value (with the configuration fields
 * masked); anything else (a secret jobspec, job or whole variables) masks the whole stored job.
 */
function legacySecretMask(sources: unknown, variables: unknown): Props | undefined {
  if (!Array.isArray(sources) || sources.length === 0) return undefined;
  const values: string[] = [];
  for (const name of sources) {
    const key = typeof name === "string" && name.startsWith("variables.") ? name.slice("variables.".length) : "";
    const vars = variables !== null && typeof variables === "object" ? (variables as Props) : undefined;
    const v = key !== "" && vars !== undefined && Object.hasOwn(vars, key) ? vars[key] : undefined;
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") return { all: true };
    values.push(String(v));
  }
  return { config: true, values };
}

function without(o: Props, keys: readonly string[]): Props {
  const out = { ...o };
  for (const k of keys) delete out[k];
  return out;
}

/**
 * Brings stored outputs of a kind to the current layout. Outputs without a version count as version 1 (the
 * steps leave what they do not name as it is); empty outputs (an import's read) stay empty. `id` names the
 * resource in the error about a layout this code does not know.
 */
function migrateOutputs<O>(kind: MigratedKind, outputs: O, id = ""): O {
  if (outputs === null || typeof outputs !== "object" || Object.keys(outputs).length === 0) return outputs;
  let o = outputs as Props;
  const stored = o.schemaVersion;
  const version = stored === undefined ? 1 : stored;
  if (version === SCHEMA_VERSION) return outputs;
  const what = `The state of the ${kind} resource${id !== "" ? ` "${id}"` : ""}`;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1)
    throw new UsageError(`${what} has schemaVersion ${JSON.stringify(version)}, which no release wrote.`);
  if (version > SCHEMA_VERSION)
    throw new UsageError(
      `${what} has layout version ${version}, written by a newer release of pulumi-secrets-scheduler than this one (which knows versions up to ${SCHEMA_VERSION}). Upgrade pulumi-secrets-scheduler in this project (\`npm install pulumi-secrets-scheduler@latest\`) and run the command again.`,
    );
  for (let v = version; v < SCHEMA_VERSION; v++) o = VERSIONS[v - 1]?.[kind]?.outputs?.(o) ?? o;
  return { ...o, schemaVersion: SCHEMA_VERSION } as O;
}

/**
 * Rewrites older forms in inputs the engine stored; current inputs come back unchanged.
 */
function migrateInputs<I>(kind: MigratedKind, inputs: I): I {
  if (inputs === null || typeof inputs !== "object") return inputs;
  let i = inputs as Props;
  for (const changes of VERSIONS) i = changes[kind]?.inputs?.(i) ?? i;
  return i as I;
}

/**
 * Wraps a kind's provider so that every method sees state in the current layout: the outputs of `diff`,
 * `read`, `update` and `delete`, and the stored inputs of `check` and `diff`.
 */
export function migrating<I, O>(kind: MigratedKind, impl: ProviderImpl<I, O>): ProviderImpl<I, O> {
  const ins = <T>(i: T): T => migrateInputs(kind, i);
  return {
    ...impl,
    check: async (olds, news) => impl.check(ins(olds), news),
    diff: async (id, olds, news) => impl.diff(id, migrateOutputs(kind, olds, id), ins(news)),
    read: async (id, props) => impl.read(id, migrateOutputs(kind, props, id)),
    update: async (id, olds, news) => impl.update(id, migrateOutputs(kind, olds, id), ins(news)),
    delete: async (id, props) => impl.delete(id, migrateOutputs(kind, props, id)),
  };
}
