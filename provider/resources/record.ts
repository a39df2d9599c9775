/**
 * The lifecycle every record resource shares (AuthMount, AuthConfig, AuthRole, JobVersionTag): one object
 * on a service, at a place its inputs name. {@link recordProvider} owns the flow of each provider method:
 * - create: read what is at the place, refuse someone else's object (unless `adopt`), write, read an
 *   unanswered write back, and keep an object whose write's outcome stays unknown in state as unfinished;
 * - update: store what needs no write (a mount that moved with its objects, a change of state only), else
 *   write as create does;
 * - read: the object as the service holds it, in the program's spelling; nothing when it is gone;
 * - delete.
 * A resource gives only its own rules ({@link RecordRules}): where its object lives, how it is read,
 * written and removed, what its state keeps, and its checks.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { ResourceError } from "../errors";
import {
  ResourceInitError,
  canonicalJson,
  definedDeep,
  writeWithReadBack,
  type ProviderImpl,
  type ReadBack,
} from "./common";
import type { ReadYourWritePolicy } from "./common";
import { SCHEMA_VERSION } from "./migrate";

/** What every record resource's inputs have: where it connects, and whether create takes over an object. */
export interface RecordInputs {
  readonly connection?: unknown;
  readonly adopt?: boolean | undefined;
}

/** What an update does: store the state with what is `kept` (nothing to write), or write `news` from `from`. */
type UpdatePlan<I, B, L> = { keep: L } | { news: I; from: B };

/**
 * The rules of one record resource. `I` are its checked inputs, `O` its state, `P` where its object lives,
 * `R` the object as the service reports it, `B` what a write starts from (the object before it), and `L`
 * what state keeps beside the inputs that only the write (or a read) tells (an accessor, a hash, a time).
 */
export interface RecordRules<I extends RecordInputs, O extends object, P, R, B, L> {
  /** The resource's name, such as `AuthRole` (the start of every message). */
  readonly resource: string;
  check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<dynamic.CheckResult<I>>;
  diff(olds: O, news: I): Promise<dynamic.DiffResult>;
  /** Where the object of these inputs lives. */
  place(i: I): P;
  /** Where the object of a state lives: from the state, else from its ID. */
  locate(id: string, props: Partial<O>): P;
  /** The ID of the object at a place. */
  id(p: P): string;
  /** Reads the object; undefined when there is none. */
  fetch(p: P, connection: I["connection"]): Promise<R | undefined>;
  /** Removes the object. */
  remove(p: P, connection: I["connection"]): Promise<unknown>;
  /** The inputs a refresh stores: the service's values, in the spelling of `props` where they mean the same. */
  observed(props: Partial<O>, p: P, rec: R): I;
  /** The state of applied inputs. */
  outputs(i: I, learned: L): O;
  /**
   * Create: what the write starts from, given the object `found` at the place (undefined when none or
   * not read); throws to refuse the object (see {@link refuseUnlessOwn}). `prepare` runs first, before any
   * request (AuthConfig reads its write-only secret there); `fetches: false` skips reading the place.
   */
  readonly create: {
    prepare?(inputs: I): I;
    fetches?: boolean;
    start(news: I, found: R | undefined, p: P): Promise<B> | B;
  };
  /** Update: what needs no write, else what to write from (see {@link movedWithMount}). */
  update(olds: O, inputs: I, id: string): Promise<UpdatePlan<I, B, L>>;
  /**
   * Writes `news` over `from` and resolves to what the state learns; a write whose outcome stays unknown
   * rejects with an `outcome_unknown` {@link ResourceError} (see {@link confirmedWrite}), which the driver
   * turns into an unfinished object in state.
   */
  write(news: I, from: B): Promise<L>;
  /** The ID and the learned part of the state that an unfinished write keeps, and how the message ends. */
  readonly unfinished: {
    at(news: I, from: B): { id: string; learned: L };
    /** The sentence after the error's message, such as "It is kept in the stack as unfinished; ...". */
    sentence(news: I): string;
  };
  /** Refresh: how the object is read (default `fetch`), what state learns from it, and the inputs it stores. */
  readonly refresh: {
    fetch?(p: P, props: Partial<O>): Promise<R | undefined>;
    /** What the read returns when the object is gone (default: nothing). */
    gone?: dynamic.ReadResult<O>;
    /** The ID the read returns (default: the place's). */
    id?(id: string, p: P): string;
    learned(props: Partial<O>, p: P, rec: R): L;
    /** The inputs the engine stores; undefined keeps the ones it has (default: the observed inputs). */
    inputs?(observed: I, outs: O, props: Partial<O>, rec: R): Partial<O> | undefined;
  };
}

/** The ID of an object in state that did not finish, its state, and the sentence that says so. */
export function unfinished<O extends object>(e: Error, id: string, outs: O, sentence: string): ResourceInitError {
  return new ResourceInitError(`${e.message}. ${sentence}`, id, { ...outs, incomplete: true });
}

/** The sentence of a write whose outcome stayed unknown: the next `up` writes again. */
export const WRITE_AGAIN = "It is kept in the stack as unfinished; run `pulumi up` again to write it.";

/** The state's schema version joined to applied inputs (and what the write learned), unset keys left out. */
export function stateOf<T extends object>(values: T): T & { schemaVersion: number } {
  return definedDeep({ ...values, schemaVersion: SCHEMA_VERSION });
}

/** Builds a provider from a record resource's rules. */
export function recordProvider<I extends RecordInputs, O extends object, P, R, B, L>(
  r: RecordRules<I, O, P, R, B, L>,
): ProviderImpl<I, O> {
  async function written(news: I, inputs: I, from: B): Promise<L> {
    try {
      return await r.write(news, from);
    } catch (e) {
      if (!ResourceError.is(e, "outcome_unknown")) throw e;
      const { id, learned } = r.unfinished.at(news, from);
      throw unfinished(e, id, r.outputs(inputs, learned), r.unfinished.sentence(inputs));
    }
  }
  return {
    check: (olds, news) => r.check(olds, news),
    diff: (_id, olds, news) => r.diff(olds, news),
    async create(inputs) {
      const news = r.create.prepare?.(inputs) ?? inputs;
      const p = r.place(inputs);
      const found = r.create.fetches === false ? undefined : await r.fetch(p, inputs.connection);
      const from = await r.create.start(news, found, p);
      return { id: r.id(p), outs: r.outputs(inputs, await written(news, inputs, from)) };
    },
    async update(id, olds, inputs) {
      const plan = await r.update(olds, inputs, id);
      if ("keep" in plan) return { outs: r.outputs(inputs, plan.keep) };
      return { outs: r.outputs(inputs, await written(plan.news, inputs, plan.from)) };
    },
    async read(id, props) {
      const old: Partial<O> = props ?? {};
      const p = r.locate(id, old);
      const rec = await (r.refresh.fetch ?? ((at: P) => r.fetch(at, (old as RecordInputs).connection)))(p, old);
      if (rec === undefined) return r.refresh.gone ?? {};
      const inputs = r.observed(old, p, rec);
      const outs = r.outputs(inputs, r.refresh.learned(old, p, rec));
      const stored =
        r.refresh.inputs === undefined ? (inputs as unknown as O) : r.refresh.inputs(inputs, outs, old, rec);
      const readId = r.refresh.id?.(id, p) ?? r.id(p);
      // Pulumi types ReadResult.inputs as the outputs type; the engine stores it as the new inputs.
      return stored === undefined ? { id: readId, props: outs } : { id: readId, props: outs, inputs: stored as O };
    },
    async delete(id, props) {
      const old: Partial<O> = props ?? {};
      await r.remove(r.locate(id, old), (old as RecordInputs).connection);
    },
  };
}

/**
 * Create's refusal of someone else's object: an object that holds exactly what this resource writes is
 * the one an earlier, unconfirmed create wrote (its answer lost), and writing it again is safe; any other
 * object at the place is refused unless `adopt` is set. `taken` says what is there.
 */
export function refuseUnlessOwn<I extends RecordInputs, R>(
  resource: string,
  id: string,
  news: I,
  found: R | undefined,
  holds: (rec: R, i: I) => boolean,
  taken: string,
): void {
  if (found !== undefined && news.adopt !== true && !holds(found, news))
    throw new ResourceError("already_exists", `${resource} "${id}": ${taken}`);
}

/** How a write is told apart from the object before it by reading the object back. */
export interface ReadBackRules<I, R> {
  fetch(): Promise<R | undefined>;
  /** True when the object as read holds what `i` writes. */
  holds(rec: R, i: I): boolean;
  /**
   * True when the object held what the write reports already (`before` means the same as `news`), and the
   * write carries a part the service never reports (a secret): reading cannot tell whether that went.
   */
  unreported?(before: I, news: I): boolean;
}

/**
 * Writes with {@link writeWithReadBack}: an unanswered write is read back until it shows; the object gone or
 * still as before means not applied, as written means applied, anything else is unknown.
 */
export async function confirmedWrite<I, R>(
  what: string,
  send: () => Promise<void>,
  news: I,
  before: I | undefined,
  rules: ReadBackRules<I, R>,
  policy: ReadYourWritePolicy,
): Promise<void> {
  const readBack = async (): Promise<ReadBack> => {
    const rec = await rules.fetch();
    if (rec === undefined) return "not-applied";
    if (rules.holds(rec, news))
      return before !== undefined && rules.unreported?.(before, news) === true ? "unsure" : "applied";
    return before !== undefined && rules.holds(rec, before) ? "not-applied" : "unsure";
  };
  await writeWithReadBack(what, send, readBack, policy);
}

/**
 * True when an update has nothing to write: only the mount's path or accessor changed, the mount having
 * moved with its objects (`sys/remount`, see `mountFollow`), and one read finds the object at the new path
 * holding what the program says. Anything else (another setting, a new connection, nothing there) writes.
 * `stateOnly` names the keys the comparison leaves out besides the mount's (a secret and its hash).
 */
export async function movedWithMount<I extends { mount: string; mountAccessor?: string | undefined }, R>(
  olds: Partial<I> & { mount?: string; mountAccessor?: string | undefined },
  news: I,
  stateOnly: readonly string[],
  read: () => Promise<R | undefined>,
  holds: (rec: R) => boolean,
): Promise<boolean> {
  const rest = (o: object) => {
    const r: Record<string, unknown> = { ...o };
    for (const k of ["mount", "mountAccessor", "schemaVersion", "__provider", ...stateOnly]) delete r[k];
    return canonicalJson(definedDeep(r));
  };
  if (olds.mount === news.mount && olds.mountAccessor === news.mountAccessor) return false;
  if (rest(olds) !== rest(news)) return false;
  const rec = await read();
  return rec !== undefined && holds(rec);
}
