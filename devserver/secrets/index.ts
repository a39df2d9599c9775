import type { ServiceModule } from "../core";

/** Options of the secrets service module (placeholder until the service is written). */
export interface SecretsServiceOptions {
  readonly [key: string]: unknown;
}

/** Creates the secrets service module. Placeholder: no routes yet; the service owner replaces this file. */
export function createSecretsService(_options: SecretsServiceOptions = {}): ServiceModule {
  return { name: "secrets", routes: () => undefined };
}
