/** Points the five providers at a devserver, as stack config would (both services, root tokens). */
import type { DevServer } from "../../devserver";
import { setStackConfig } from "./stack-config";

export function pointProvidersAt(dev: DevServer): void {
  setStackConfig({
    secretsAddress: dev.urls.secrets,
    secretsToken: dev.rootTokens.secrets,
    schedulerAddress: dev.urls.scheduler,
    schedulerToken: dev.rootTokens.scheduler,
  });
}
