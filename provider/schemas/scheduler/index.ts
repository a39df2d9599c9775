/** Zod schemas of every scheduler record, with their inferred types. */
export * from "./common";
export * from "./job";
export * from "./status";
export * from "./diff";
