// Loads a resource's code the way the provider host does (the shim's require of the package's provider
// entry, then `provider(kind)`), and reports which of zod's locale files that loaded.
"use strict";
const { provider } = require("pulumi-secrets-scheduler/provider");
provider("job");
const zodLocales = () => Object.keys(require.cache).filter((k) => k.includes("/node_modules/zod/v4/locales/")).map((k) => k.slice(k.lastIndexOf("/") + 1)).sort();
const atLoad = zodLocales();
const frenchLocale = typeof require("zod").locales.fr;
process.stdout.write(JSON.stringify({ atLoad, frenchLocale, afterUse: zodLocales().length }) + "\n");
