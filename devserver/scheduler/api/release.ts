// Older releases (the devserver's `release` option): routes a release lacks behave as that release's router
// makes them behave. Unknown job sub-paths fall through to the job register, read and deregister handlers,
// so the tag route answers 400 "Job must be specified", an untag stops a job that does not exist (nothing
// written, index 0), `/dispatch/payload` fails to decode its body as a job, and the actions list finds no
// job; `diff_version` and `diff_tag` are ignored.
import { DevHttpError } from "../../core";
import type { JsonObject } from "../state/json";

/** The first release with each feature that older releases lack. */
const FIRST_RELEASE = {
  jobActions: [1, 7],
  versionTags: [1, 9],
  diffVersion: [1, 9],
  dispatchPayload: [1, 10],
} as const;

/** A feature that only newer releases have. */
export type ReleaseFeature = keyof typeof FIRST_RELEASE;

/** Returns a test of whether a release (e.g. "1.6.5"; undefined = the newest) has a feature. */
export function releaseFeatures(release: string | undefined): (feature: ReleaseFeature) => boolean {
  if (release === undefined) return () => true;
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(release);
  if (m === null) throw new TypeError(`release must look like "1.6.5", got "${release}"`);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return (feature) => {
    const [fMajor, fMinor] = FIRST_RELEASE[feature];
    return major > fMajor || (major === fMajor && minor >= fMinor);
  };
}

/** What the job register handler answers a body that is not a job registration (Go's JSON decoder texts). */
export function registerHandlerRefusal(raw: Buffer): DevHttpError {
  const text = raw.toString("utf8");
  const first = text.trimStart()[0];
  if (raw.length === 0) return new DevHttpError(400, "Request body is empty");
  if (first === undefined) return new DevHttpError(400, "EOF");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new DevHttpError(400, `invalid character '${first}' looking for beginning of value`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    const kind = Array.isArray(body) ? "array" : typeof body === "boolean" ? "bool" : typeof body;
    if (body !== null)
      return new DevHttpError(400, `json: cannot unmarshal ${kind} into Go value of type api.JobRegisterRequest`);
    return new DevHttpError(400, "Job must be specified");
  }
  if ((body as JsonObject).Job === undefined || (body as JsonObject).Job === null)
    return new DevHttpError(400, "Job must be specified");
  return new DevHttpError(400, "Job ID does not match name");
}

/** The deregister handler's answer for a job that does not exist: nothing written, every index 0. */
export function deregisterNothing(): JsonObject {
  return {
    EvalID: "",
    EvalCreateIndex: 0,
    JobModifyIndex: 0,
    VolumeEvalID: "",
    VolumeEvalIndex: 0,
    Index: 0,
    LastContact: 0,
    KnownLeader: false,
    NextToken: "",
  };
}
