/** Zod schemas of every scheduler record, with their inferred types. */
export * from "./common";
export * from "./placement";
export * from "./task";
export * from "./job";
export * from "./status";
export * from "./diff";
