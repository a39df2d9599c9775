// Reports what a program loads when it imports the package root, and that the lazy `clients` still works.
"use strict";
const loaded = () => {
  const keys = Object.keys(require.cache);
  return {
    undici: keys.some((k) => k.includes("/node_modules/undici/")),
    zod: keys.some((k) => k.includes("/node_modules/zod/")),
  };
};
const root = require("pulumi-secrets-scheduler");
const afterImport = loaded();
const resources = ["AuthMount", "AuthConfig", "AuthRole", "Job", "JobVersionTag"].map((n) => typeof root[n]);
const clientKeys = Object.keys(root.clients).sort();
const schedulerClient = typeof root.clients.SchedulerClient;
const afterClients = loaded();
process.stdout.write(JSON.stringify({ afterImport, resources, clientKeys, schedulerClient, afterClients }) + "\n");
