// Request helpers shared by the scheduler's routes: query parsing with the server's error texts and the
// dependencies every route needs.
import { DevHttpError, type DevRequest, type ServiceContext } from "../../core";
import type { ActionRunner } from "./action";
import type { Engine } from "../sim/engine";
import type { GarbageCollector } from "../sim/gc";
import { isObject, type JsonObject } from "../state/json";
import type { JobOps } from "../ops/jobs";
import type { ReleaseFeature } from "./release";
import type { Store } from "../state/store";

/** What route modules share. */
export interface RouteDeps {
  readonly ctx: ServiceContext;
  readonly store: Store;
  readonly engine: Engine;
  readonly ops: JobOps;
  readonly gc: GarbageCollector;
  readonly region: string;
  readonly serviceProviders: readonly string[];
  readonly actionRunner: ActionRunner;
  /** Whether the release this server acts as has a feature (always true unless `release` was set). */
  readonly has: (feature: ReleaseFeature) => boolean;
}

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Parses a boolean query parameter like Go's strconv.ParseBool; absent means false. */
export function boolParam(req: DevRequest, name: string): boolean {
  const v = req.query.get(name);
  if (v === null || v === "") return false;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new DevHttpError(
    500,
    `Failed to parse value of ${JSON.stringify(name)} (${v}) as a bool: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`,
  );
}

/** Parses an integer query parameter; undefined when absent. */
export function intParam(req: DevRequest, name: string): number | undefined {
  const v = req.query.get(name);
  if (v === null || v === "") return undefined;
  if (!/^-?[0-9]+$/.test(v))
    throw new DevHttpError(
      400,
      `Failed to parse value of ${JSON.stringify(name)} (${v}) as an int: strconv.Atoi: parsing ${JSON.stringify(v)}: invalid syntax`,
    );
  return Number(v);
}

/** Returns the JSON body as an object ({} when empty); 400 when it is not an object. */
export function bodyObject(req: DevRequest): JsonObject {
  const b = req.json();
  if (b === undefined || b === null) return {};
  if (!isObject(b)) throw new DevHttpError(400, "Request body decode failed: body must be a JSON object");
  return b;
}

/** Checks an evaluation priority override (1-100) with the server's 400 text. */
export function checkEvalPriority(p: number): void {
  if (p !== 0 && (p < 1 || p > 100)) throw new DevHttpError(400, "Eval priority must be between 1 and 100 inclusively");
}

/** Returns the job ID path parameter. */
export function jobIdParam(req: DevRequest): string {
  return req.params.job_id ?? "";
}

/** Returns the index response header of a write. */
export function writeHeaders(deps: RouteDeps, index: number): Record<string, string> {
  return { [deps.ctx.headerNames.index]: String(index) };
}
