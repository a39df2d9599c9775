/**
 * What the Pulumi engine does with a provider's answers, for tests that drive providers directly: one `up`
 * step per call (create without state, else diff and update), an init error's ID and properties kept as the
 * new state (and the next `up` forced to update it, as the engine does for a resource with init errors), a
 * plain error leaving state as it was.
 */
import type { ProviderImpl } from "../../provider/resources/common";

/** A resource as state holds it. */
export interface Stated {
  id: string;
  outs: Record<string, unknown>;
  /** The last create or update ended with an init error. */
  initError?: boolean;
}

/** What one step did. */
export interface StepResult {
  state: Stated | undefined;
  /** The step's error, if it failed. */
  error?: Error;
  /** What the step ran: nothing (no changes), a create or an update. */
  ran: "same" | "create" | "update";
}

/** Runs `check` like the engine, failing on check failures. */
export async function checked(
  impl: ProviderImpl,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const r = await impl.check(olds, news);
  if (r.failures && r.failures.length > 0) throw new Error(`check failed: ${JSON.stringify(r.failures)}`);
  return r.inputs as Record<string, unknown>;
}

/** One `pulumi up` of one resource (replacements are not expected here). */
export async function upStep(
  impl: ProviderImpl,
  state: Stated | undefined,
  news: Record<string, unknown>,
): Promise<StepResult> {
  const inputs = await checked(impl, state?.outs ?? {}, news);
  const ran: StepResult["ran"] = state === undefined ? "create" : "update";
  try {
    if (state === undefined) {
      const r = await impl.create(inputs);
      return { state: { id: r.id, outs: (r.outs ?? {}) as Record<string, unknown> }, ran };
    }
    const d = await impl.diff(state.id, state.outs, inputs);
    if (!d.changes && !state.initError) return { state, ran: "same" };
    if (d.replaces && d.replaces.length > 0) throw new Error(`unexpected replacement of ${d.replaces.join(", ")}`);
    const u = await impl.update(state.id, state.outs, inputs);
    return { state: { id: state.id, outs: (u.outs ?? {}) as Record<string, unknown> }, ran };
  } catch (e) {
    const ie = e as { id?: unknown; properties?: Record<string, unknown> };
    if (typeof ie.id === "string" && ie.id !== "") {
      return { state: { id: ie.id, outs: ie.properties ?? {}, initError: true }, error: e as Error, ran };
    }
    return { state, error: e as Error, ran };
  }
}

/** One `pulumi destroy` of one resource; the state stays when it fails. */
export async function destroyStep(
  impl: ProviderImpl,
  state: Stated,
): Promise<{ state: Stated | undefined; error?: Error }> {
  try {
    await impl.delete(state.id, state.outs);
    return { state: undefined };
  } catch (e) {
    return { state, error: e as Error };
  }
}
