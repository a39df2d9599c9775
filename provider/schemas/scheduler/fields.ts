/**
 * Field builders of the scheduler's wire records. The server is written in Go: nil slices, maps and
 * pointers come back as `null`, and `/v1/jobs/parse` without Canonicalize returns `null` for every unset
 * scalar too, so job-shaped fields accept `null` as well as absence. Every record is a loose object:
 * fields this library does not know survive a read-modify-write.
 */
import { z } from "zod";

// zod schemas are immutable, so every field of a kind shares one instance: the records below have hundreds
// of fields, and building two instances per field was most of the time it took to load these modules.
const STR = z.string().nullish();
const NUM = z.number().nullish();
const BOOL = z.boolean().nullish();
const STRING_MAP = z.record(z.string(), z.string()).nullish();

/** A string that may be absent or `null`. */
export const str = () => STR;
/** A number that may be absent or `null`. Go int64 values past 2^53 lose precision in JSON.parse; they stay numbers. */
export const num = () => NUM;
/** A boolean that may be absent or `null`. */
export const bool = () => BOOL;
/** A list that may be absent or `null`. */
export const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();
/** A string-keyed map that may be absent or `null`. */
export const map = <T extends z.ZodType>(value: T) => z.record(z.string(), value).nullish();
/** A map of strings (Meta, Env). */
export const stringMap = () => STRING_MAP;

/** Blocking-query fields some write responses repeat in their body. */
export const bodyMetaShape = {
  Index: num(),
  LastContact: num(),
  KnownLeader: bool(),
  NextToken: str(),
};
