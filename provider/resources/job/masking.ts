/**
 * How the Job provider's methods mask what they throw: each runs with the mask of its operation (see
 * ./secrets.ts), which `maskOf` in ./index.ts completes once the job is parsed. A module of its own: a
 * `delete` needs it without the rest of the Job code.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { show } from "../../log";
import { ResourceInitError } from "../common";
import { SECRET_SHOWN, maskError, maskText } from "./mask-text";
import { masksAnything, type SecretMask } from "./secrets";

/** The mask of the running operation: set from the inputs, completed once the job is parsed (`maskOf`). */
export const currentMask = new AsyncLocalStorage<{ mask: SecretMask }>();

/** Runs one method of the provider with `mask` as its operation's mask, masking what it throws. */
export function masked<T>(mask: SecretMask, run: () => Promise<T>): Promise<T> {
  // Nothing secret: no masking work at all.
  if (!masksAnything(mask)) return run();
  const scope = { mask };
  return currentMask.run(scope, run).catch(async (e: unknown) => Promise.reject(await maskFailure(e, scope.mask)));
}

/**
 * Masks a failure. An init error's detail (what the scheduler said, which groups failed, what was reverted)
 * is printed masked; the error itself, which Pulumi keeps in plaintext state as `initErrors`, says only what
 * happened to the resource.
 */
async function maskFailure(e: unknown, mask: SecretMask): Promise<unknown> {
  if (!(e instanceof ResourceInitError)) return maskError(e, mask);
  await show(maskText(e.message, mask));
  const generic =
    `Job resource "${e.id}" was written to the scheduler, but the operation did not finish; its detail was printed ` +
    `above with secret values shown as ${SECRET_SHOWN}. The job is kept in the stack; run \`pulumi up\` again to finish ` +
    "(or `pulumi refresh` to record what runs now).";
  const out = new ResourceInitError(generic, e.id, e.properties, [generic]);
  out.stack = `ResourceInitError: ${generic}`;
  return out;
}
