/**
 * What an AuthMount is on the wire and in state: its types, its settings (the ones fixed at enable time,
 * the tuned ones), the bodies of a tune, and the state of an applied or unfinished mount. The provider is
 * ./auth-mount.ts; its writes are ./auth-mount-write.ts, its refresh ./auth-mount-read.ts.
 */
import type { z } from "zod";
import type { FoundMount } from "../clients/secrets";
import { durationWire } from "../values";
import type { TuneRequest } from "../schemas/secrets";
import { warn } from "./auth-common";
import type { ResourceInitError } from "./common";
import { inputsSchema, settingKeys, subSettingKeys, type InputsOf, type OutputsOf } from "./definition";
import { sameValue, subWireBody, wireBodyOf } from "./setting-values";
import { authMountDefinition as DEF } from "./definitions/auth-mount";
import { stateOf, unfinished } from "./record";

export const RESOURCE = DEF.name;

/** Tune settings of a mount; only the ones set are managed. TTLs are seconds or duration strings. */
export type MountTune = NonNullable<z.infer<typeof DEF.fields.tune.schema>>;

/** The inputs of an AuthMount after `check`. */
export const AuthMountInputsSchema = inputsSchema(DEF);

/** The inputs of an AuthMount. */
export type AuthMountInputs = InputsOf<typeof DEF>;

/** The outputs (state) of an AuthMount: every input plus the accessor, and `incomplete` after an unfinished create. */
export type AuthMountOutputs = OutputsOf<typeof DEF>;

/** The mount's settings in its record (the mount list's entry): the ones fixed at enable time, and the description. */
export const SETTINGS = settingKeys(DEF);
/** The top-level settings a tune changes (the ones fixed at enable time replace the mount instead). */
const TUNED = SETTINGS.filter(([, f]) => !f.replaceOnChange);
type TuneKey = keyof MountTune;
export const TUNE = subSettingKeys<TuneKey>(DEF.fields.tune);
/** Tune settings as the server writes them (a tune read's answer, or a mount list entry's `config`). */
export type TuneValues = Partial<Record<string, unknown>>;

/**
 * Returns the tune request for the tune fields set in `tune` (see `subWireBody`). The tune endpoint takes
 * its TTLs as duration strings, and clears a list only when sent `[""]`.
 */
export function tuneRequest(tune: MountTune | undefined): TuneRequest {
  const out = subWireBody(DEF.fields.tune, tune);
  for (const [, f] of TUNE) {
    const v = out[f.wire];
    if (f.type === "duration" && typeof v === "number") out[f.wire] = durationWire(v);
    else if (f.type === "list" && Array.isArray(v) && v.length === 0) out[f.wire] = [""];
  }
  return out as TuneRequest;
}

/** The body of a tune: the top-level settings, the tune settings set, and a new plugin version. */
export function tuneBody(news: AuthMountInputs, pluginVersion: { plugin_version?: string }): TuneRequest {
  return { ...wireBodyOf(TUNED, news), ...tuneRequest(news.tune), ...pluginVersion } as TuneRequest;
}

/** True when a mount is what these inputs enable (the settings fixed at enable time, and the description). */
export function sameMount(m: FoundMount, inputs: AuthMountInputs): boolean {
  return m.type === inputs.type && SETTINGS.every(([k, f]) => sameValue(f, inputs[k], m[f.wire]));
}

/** The tune field that pins a new plugin version, when the user set one the mount does not have. */
export function pluginVersionTune(
  news: AuthMountInputs,
  before: { pluginVersion?: string | undefined; plugin_version?: string | undefined },
): { plugin_version?: string } {
  if (news.pluginVersion === undefined || news.pluginVersion === (before.pluginVersion ?? before.plugin_version))
    return {};
  void warn(
    RESOURCE,
    news.path,
    `plugin version ${news.pluginVersion} is set; the mount runs it after the plugin is reloaded`,
  );
  return { plugin_version: news.pluginVersion };
}

/** The state of an applied mount: its inputs and its accessor. */
export function mountOutputs(inputs: AuthMountInputs, accessor: string): AuthMountOutputs {
  return stateOf({ ...inputs, accessor });
}

/** The sentence of a mount kept in state as unfinished. */
export function keptSentence(inputs: AuthMountInputs): string {
  return `The mount at "${inputs.path}/" is kept in the stack as unfinished; run \`pulumi up\` again to finish.`;
}

/** The init error of a create or update that may have enabled the mount without finishing. */
export function unfinishedMount(inputs: AuthMountInputs, accessor: string, e: Error): ResourceInitError {
  return unfinished(e, inputs.path, mountOutputs(inputs, accessor), keptSentence(inputs));
}
