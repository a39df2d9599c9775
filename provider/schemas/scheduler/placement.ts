/** Placement rules shared by jobs, groups and tasks: constraints, affinities, spreads. */
import { z } from "zod";
import { list, num, str } from "./fields";

/** A placement constraint. */
export const ConstraintSchema = z.looseObject({ LTarget: str(), RTarget: str(), Operand: str() });

/** A placement preference: a constraint with a weight (-100..100). */
export const AffinitySchema = z.looseObject({ LTarget: str(), RTarget: str(), Operand: str(), Weight: num() });

/** A spread target of a spread block. */
const SpreadTargetSchema = z.looseObject({ Value: str(), Percent: num() });
/** A spread block: distribute allocations over an attribute. */
export const SpreadSchema = z.looseObject({ Attribute: str(), Weight: num(), SpreadTarget: list(SpreadTargetSchema) });
