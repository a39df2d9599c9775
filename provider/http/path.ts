/**
 * Request paths built from caller input. Every dynamic segment is percent-encoded on its own, and a segment
 * that would change which endpoint is called is refused before anything is sent: an empty segment (a
 * doubled or trailing slash), and the dot segments `.` and `..`, which the URL rules (RFC 3986 §5.2.4)
 * resolve away — a server or a normalising proxy in front of it would serve another path.
 */
import { UsageError } from "../errors";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Returns why `segment` cannot be one path segment, or undefined when it can. */
export function segmentProblem(segment: string): string | undefined {
  if (segment === "") return "must not be empty";
  if (segment === "." || segment === "..") return 'must not be "." or ".." (a dot segment addresses another path)';
  if (LONE_SURROGATE.test(segment)) return "must be well-formed Unicode text (it holds a lone surrogate)";
  return undefined;
}

/** Returns one path segment percent-encoded; throws UsageError naming `what` when it cannot be one. */
export function encodeSegment(segment: string | number, what = "a path segment"): string {
  const s = String(segment);
  const problem = segmentProblem(s);
  if (problem !== undefined) throw new UsageError(`${what} ${problem}.`);
  return encodeURIComponent(s);
}

/** Encodes each segment of a path: `encodePath("/v1/job", id)` → `/v1/job/<encoded id>`. */
export function encodePath(prefix: string, ...segments: Array<string | number>): string {
  let out = prefix;
  for (const s of segments) out += "/" + encodeSegment(s);
  return out;
}

/**
 * Encodes a `/`-separated path of segments (a nested mount such as `team/cloud`), each on its own;
 * throws UsageError naming `what` when a segment is empty, `.` or `..`.
 */
export function encodeSegments(path: string, what: string): string {
  return path
    .split("/")
    .map((s) => encodeSegment(s, `each segment of ${what}`))
    .join("/");
}
