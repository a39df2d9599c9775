/**
 * Stack config for tests that drive providers without a Pulumi engine: handed to the providers' public
 * `configure`, as the engine hands the whole stack config to every dynamic provider.
 */
import { CONFIG_NAMESPACE, configure } from "../../provider/config";

/** Replaces the stack config: this library's keys by name (`schedulerAddress`), `any` by full key (`app:x`). */
export function setStackConfig(values: Record<string, string>, any: Record<string, string> = {}): void {
  const all: Record<string, string> = { ...any };
  for (const [key, value] of Object.entries(values)) all[`${CONFIG_NAMESPACE}:${key}`] = value;
  // `configure` stores what it reads before it returns (its promise is the interface's): in place at once.
  void configure({ config: { get: (key) => all[key] } });
}
