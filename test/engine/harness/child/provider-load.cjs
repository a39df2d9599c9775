// Loads a resource's code the way the provider host does (the shim's require of the package's provider
// entry, then `provider(kind)` and a check), and reports which modules that loaded from files: zod's
// locale files, the library's own resource modules, zod's core.
"use strict";
const { setImmediate } = require("node:timers");
const { provider } = require("pulumi-secrets-scheduler/provider");
const job = provider("job");
const loaded = (part) => Object.keys(require.cache).filter((k) => k.includes(part)).map((k) => k.slice(k.lastIndexOf("/") + 1)).sort();
const atLoad = loaded("/node_modules/zod/v4/locales/");
const resourceFiles = loaded("/pulumi-secrets-scheduler/dist/provider/resources/");
const zodCoreFiles = loaded("/node_modules/zod/v4/core/");
const entryFiles = loaded("/pulumi-secrets-scheduler/dist/provider/");
job.check({}, { job: { ID: "load", Name: "load", Type: "batch", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] } }).then((checked) => {
  const frenchLocale = typeof require("zod").locales.fr;
  setImmediate(() => {
    process.stdout.write(JSON.stringify({ atLoad, resourceFiles, zodCoreFiles, entryFiles, checked: checked.inputs !== undefined, frenchLocale, afterUse: loaded("/node_modules/zod/v4/locales/").length }) + "\n");
  });
});
