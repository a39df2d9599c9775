/**
 * The options every zod parse in this library passes. zod compiles a parser for each object schema the
 * first time that schema parses (with `new Function`): 13-20 ms for the Job record, against 6 ms for the
 * interpreted path, and over 200 Job records the two paths took the same time on this project's machines.
 * A provider host parses a handful of records per command, so compiling never pays. Set per call, not
 * with `z.config`, so other zod users in the same process keep their own setting.
 */
import type { z } from "zod";

export const PARSE_OPTIONS: Readonly<z.core.ParseContext<z.core.$ZodIssue>> = Object.freeze({ jitless: true });
