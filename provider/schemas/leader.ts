/**
 * The secrets service's leader status, `GET /v1/sys/leader` (no token needed): whether it runs as a cluster
 * and which node is active. Its own module: the HTTP core reads it to follow a standby's redirect, and
 * loads nothing else of the secrets service's schemas for that.
 */
import { z } from "zod";

/** The fields this library reads; the others are kept. */
export const LeaderStatusSchema = z.looseObject({
  ha_enabled: z.boolean().optional(),
  leader_address: z.string().optional(),
});
