/**
 * A resource's `connection` input: the settings of the settings table (http/setting-table.ts) for one service,
 * as a value the program passes (the SDK's `schedulerConnection` / `secretsConnection`). Kept in the
 * resource's state, so refresh and destroy reach the cluster the resource lives on; a resource without one
 * uses stack config, then the environment. Moving a resource to another address is a replacement.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { z } from "zod";
import { ConfigError, type ServiceName } from "../errors";
import { connectionOptions } from "../config";
import { SETTINGS, type ConnectionSettings, type Setting } from "../http/setting-table";
import {
  CREDENTIALS_IN_ADDRESS,
  addressHasCredentials,
  optionsFromSettings,
  resolveConnection,
  type ConnectionOptions,
} from "../http/settings";
import { containsUnknown, requestName } from "./common";

/** A connection value as the provider receives it: the service it is for, and that service's settings. */
export type Connection<S extends ServiceName> = ConnectionSettings<S> & { service: S };

const FUNCTION: Record<ServiceName, string> = { secrets: "secretsConnection", scheduler: "schedulerConnection" };

/** The schema of one setting's value in a connection, by the setting's kind. */
function settingSchema(s: Setting): z.ZodType {
  switch (s.kind) {
    case "ms":
      return z.number().positive("must be a positive number of milliseconds");
    case "flag":
      return z.boolean();
    case "header-style":
      return z.enum(["spec", "real"]);
    case "url":
      return z
        .string()
        .min(1, "must not be empty")
        .refine((a) => !addressHasCredentials(a), CREDENTIALS_IN_ADDRESS);
    default:
      return s.refuseControl ? requestName() : z.string().min(1, "must not be empty");
  }
}

/** The schema of a `connection` input for a service: exactly the table's settings of that service. */
export function connectionSchema<S extends ServiceName>(service: S): z.ZodType<Connection<S>> {
  const shape: Record<string, z.ZodType> = {
    service: z.literal(service, {
      error: `must be a ${service === "secrets" ? "secrets service" : "scheduler"} connection: make it with ${FUNCTION[service]}(...)`,
    }),
  };
  for (const s of SETTINGS) if (s.service === service) shape[s.name] = settingSchema(s).optional();
  return z.strictObject(shape) as unknown as z.ZodType<Connection<S>>;
}

/** The connection options of a resource: its `connection` alone when it has one, else stack config and the environment. */
function optionsOf<S extends ServiceName>(service: S, connection: Connection<S> | undefined): ConnectionOptions {
  if (connection === undefined) return connectionOptions(service);
  const { service: _s, ...settings } = connection;
  return optionsFromSettings(service, settings as ConnectionSettings<S>);
}

/**
 * Returns the settings of a connection value (its service tag left out), for a client; throws a ConfigError
 * while a setting is not known yet (a preview: the operation that needs the server waits for `up`).
 */
export function settingsOf<S extends ServiceName>(connection: Connection<S>): ConnectionSettings<S> {
  if (containsUnknown(connection))
    throw new ConfigError("The resource's connection is not known yet (it comes from another resource's output).");
  const { service: _s, ...settings } = connection;
  return settings as ConnectionSettings<S>;
}

/**
 * Where a connection leads: the address (origin and path) and, for the secrets service, the namespace, which
 * holds its own mounts. Undefined when it cannot be told (settings missing or wrong): the operation that
 * needs the connection then says what is wrong.
 */
function placeOf<S extends ServiceName>(service: S, connection: Connection<S> | undefined): string | undefined {
  const all = optionsOf(service, connection);
  try {
    const c = resolveConnection(service, {
      address: all.address,
      namespace: all.namespace,
      optionsFrom: all.optionsFrom,
      ...(all.env !== undefined ? { env: all.env } : {}),
    });
    return JSON.stringify([c.origin + c.basePath, service === "secrets" ? (c.namespace ?? "") : ""]);
  } catch {
    return undefined;
  }
}

/** How a resource's connection changes between its state and its new inputs. */
export type ConnectionChange = "none" | "settings" | "moved";

/**
 * Compares the connection in state with the new one: `moved` when the new one leads elsewhere (another
 * address, or another secrets namespace; a connection added or removed counts by where stack config and the
 * environment lead), `settings` when only how it connects changed (a token, TLS, headers, a timeout: an
 * update, which keeps the new settings in state), else `none`. A place not known yet at preview is a move.
 */
export function connectionChange<S extends ServiceName>(
  service: S,
  olds: Connection<S> | undefined,
  news: Connection<S> | undefined,
): ConnectionChange {
  if (JSON.stringify(sorted(olds)) === JSON.stringify(sorted(news))) return "none";
  if (news !== undefined && (containsUnknown(news.address) || containsUnknown(news.namespace))) return "moved";
  if (news !== undefined && containsUnknown(news)) return "settings";
  const before = placeOf(service, olds);
  const after = placeOf(service, news);
  return before !== undefined && after !== undefined && before !== after ? "moved" : "settings";
}

function sorted(c: object | undefined): unknown {
  if (c === undefined) return null;
  return Object.fromEntries(Object.entries(c).sort(([a], [b]) => a.localeCompare(b)));
}

/** The diff of a resource moved to another cluster: created there first, then deleted here. */
export const MOVED: dynamic.DiffResult = Object.freeze({
  changes: true,
  replaces: ["connection"],
  deleteBeforeReplace: false,
});
