/** Results of the scheduler's write endpoints. */
import { z } from "zod";
import { bodyMetaShape, num, str } from "./fields";

/** Result of register, update, revert, evaluate, stop and scale (the common write result). */
export const WriteResultSchema = z.looseObject({
  EvalID: str(),
  EvalCreateIndex: num(),
  JobModifyIndex: num(),
  /** Warnings from validation (for example deprecated fields), as one text; empty when none. */
  Warnings: str(),
  VolumeEvalID: str(),
  VolumeEvalIndex: num(),
  ...bodyMetaShape,
});
/** Result of register, update, revert, evaluate, stop and scale. */
export type WriteResult = z.infer<typeof WriteResultSchema>;

/** Result of marking a version stable. */
export const StableResultSchema = z.looseObject({ JobModifyIndex: num(), ...bodyMetaShape });
/** Result of marking a version stable. */
export type StableResult = z.infer<typeof StableResultSchema>;

/** Result of dispatch and dispatch/payload. */
export const DispatchResultSchema = z.looseObject({
  /** ID of the child job, `<job_id>/dispatch-<number>-<suffix>`. */
  DispatchedJobID: str(),
  EvalID: str(),
  EvalCreateIndex: num(),
  JobCreateIndex: num(),
  ...bodyMetaShape,
});
/** Result of dispatch and dispatch/payload. */
export type DispatchResult = z.infer<typeof DispatchResultSchema>;

/** Result of a periodic force. */
export const PeriodicForceResultSchema = z.looseObject({ EvalID: str(), EvalCreateIndex: num(), ...bodyMetaShape });
/** Result of a periodic force. */
export type PeriodicForceResult = z.infer<typeof PeriodicForceResultSchema>;
