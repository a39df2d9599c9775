/**
 * State and stored inputs of an older layout as a resource's provider sees them: handed through `migrating`,
 * the wrapper the provider entry (provider/index.ts) puts around every kind, to a provider whose `read`
 * answers with the state it was handed and whose `check` with the stored inputs it was handed.
 */
import type { ProviderImpl, ProviderKind } from "../../provider";
import { migrating } from "../../provider/resources/migrate";

type Props = Record<string, unknown>;

const unused = (): never => {
  throw new Error("only read and check hand state back");
};

/** Answers `read` with the state and `check` with the stored inputs it is handed. */
const handedBack: ProviderImpl = {
  check: async (olds) => ({ inputs: olds }),
  read: async (id, props) => ({ id, props }),
  diff: unused,
  create: unused,
  update: unused,
  delete: unused,
};

/**
 * The outputs a kind's provider is handed for stored `outputs` (rejects as the provider entry does on a
 * layout no release of this code wrote); `id` names the resource in that error.
 */
export async function migratedOutputs<O extends object>(kind: ProviderKind, outputs: O, id = ""): Promise<O> {
  return (await migrating(kind, handedBack).read(id, outputs as Props)).props as O;
}

/** The stored inputs a kind's provider is handed by `check`. */
export async function migratedInputs<I extends object>(kind: ProviderKind, inputs: I): Promise<I> {
  return (await migrating(kind, handedBack).check(inputs as Props, {})).inputs as I;
}
