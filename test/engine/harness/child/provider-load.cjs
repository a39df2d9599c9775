// Loads a resource's code the way the provider host does (the shim's require of the package's provider
// entry, then `provider(kind)` and a check), and reports which modules that loaded from files: zod's
// locale files, the library's own resource modules, zod's core; and Node's compile cache as the load left
// it, and whether jose (ESM-only, imported dynamically) loads in the same process.
"use strict";
/* global Buffer */
const Module = require("node:module");
const { setImmediate } = require("node:timers");
const { provider } = require("pulumi-secrets-scheduler/provider");
const job = provider("job");
const loaded = (part) =>
  Object.keys(require.cache)
    .filter((k) => k.includes(part))
    .map((k) => k.slice(k.lastIndexOf("/") + 1))
    .sort();
const atLoad = loaded("/node_modules/zod/v4/locales/");
const resourceFiles = loaded("/pulumi-secrets-scheduler/dist/provider/resources/");
const zodCoreFiles = loaded("/node_modules/zod/v4/core/");
const entryFiles = loaded("/pulumi-secrets-scheduler/dist/provider/");
// Node >= 22.1 has a compile cache; this says where this process's goes (undefined: off or none).
const compileCache = typeof Module.enableCompileCache === "function";
const compileCacheDir = typeof Module.getCompileCacheDir === "function" ? (Module.getCompileCacheDir() ?? null) : null;
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
const jwt = `${b64({ alg: "RS256", typ: "JWT" })}.${b64({ aud: "load", iss: "i", sub: "s", exp: Math.floor(Date.now() / 1000) + 600 })}.x`;
job
  .check(
    {},
    {
      job: {
        ID: "load",
        Name: "load",
        Type: "batch",
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
      },
    },
  )
  .then(async (checked) => {
    const frenchLocale = typeof require("zod").locales.fr;
    const jwtAudience = (await require("pulumi-secrets-scheduler/clients").secrets.checkJwt(jwt)).aud;
    setImmediate(() => {
      process.stdout.write(
        JSON.stringify({
          atLoad,
          resourceFiles,
          zodCoreFiles,
          entryFiles,
          checked: checked.inputs !== undefined,
          frenchLocale,
          afterUse: loaded("/node_modules/zod/v4/locales/").length,
          node: process.version,
          compileCache,
          compileCacheDir,
          jwtAudience,
        }) + "\n",
      );
    });
  });
