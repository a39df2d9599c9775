// The job shim. Its path is stored in every stack that uses the resource: never rename or move it.
import { makeShim } from "./make";

export = makeShim("job");
