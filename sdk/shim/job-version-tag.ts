// Generated from the registry (provider/resources/definitions/index.ts) by `npm run generate`: do not edit.
// The jobVersionTag shim. Its path is stored in every stack that uses the resource: never rename or move it.
import { makeShim } from "./make";

export = makeShim("jobVersionTag");
