/**
 * The validation corpus: bad and good inputs of the five resources, each with the property its failure
 * must name (or, for a good case, the input it exercises) and the rule's source. Bad cases must fail at
 * `check` with nothing sent; good path inputs are created and their first request line on the wire is
 * compared exactly.
 */

export type ResourceName = "AuthMount" | "AuthConfig" | "AuthRole" | "Job" | "JobVersionTag";

export interface CorpusCase {
  resource: ResourceName;
  name: string;
  inputs: Record<string, unknown>;
  bad: boolean;
  /** The property a bad case's failure names; for a good case, the input it exercises. */
  property: string;
  /** Where the rule comes from: a spec section or the real service's behaviour. */
  source: string;
  /** Good path inputs: the first request line `create` sends (method, path, query). */
  line?: string;
}

// Sources, by name.
const RFC_DOTS =
  "RFC 3986 §5.2.4: '.' and '..' segments are removed by path normalisation (real OpenBao answers 307 to another path; nginx normalises)";
const SECRETS_MOUNT = "spec secrets-cloud-auth.md Endpoints: <mount> is a path segment; real Vault/OpenBao mount paths";
const VAULT_TOKEN_MOUNT = "real Vault/OpenBao: the token/ auth method is built in and cannot be disabled or remounted";
const VAULT_TUNE = "real Vault/OpenBao sys/auth tune: listing_visibility, token_type values, TTL durations";
const CONFIG_RECORD =
  "spec secrets-cloud-auth.md Method configuration record: tenant_id and client_id UUID, resource URL";
const AZURE_CONFIG =
  "real azure auth plugin path_config.go: environment names, max_retries/retry durations (TypeInt/TypeDuration parse digits)";
const ENTRA_AUDIENCE = "real Entra ID: application ID URIs (api://<app id>) are token audiences";
const ROLE_RECORD = "spec secrets-cloud-auth.md Role record; real Vault role name rule (path_role.go, tokenutil)";
const TOKENUTIL =
  "real Vault sdk/helper/tokenutil: token_ttl <= token_max_ttl, batch tokens cannot be periodic or limited, CIDRs";
const NOMAD_JOB = "real Nomad 1.6.5 nomad/structs Job.Validate";
const NOMAD_TG = "real Nomad 1.6.5 nomad/structs TaskGroup.Validate";
const NOMAD_TASK = "real Nomad 1.6.5 nomad/structs Task.Validate";
const NOMAD_UPDATE = "real Nomad 1.6.5 nomad/structs UpdateStrategy.Validate";
const NOMAD_ADMISSION =
  "real Nomad 1.6.5 nomad/job_endpoint_hooks.go jobValidate (priority 1..job_max_priority=100, payload, core type)";
const NOMAD_REGISTER = "real Nomad 1.6.5 nomad/job_endpoint.go Register: 'job can't be submitted with Dispatched set'";
const NOMAD_ROUTE =
  "real Nomad 1.6.5 command/agent/job_endpoint.go JobSpecificRequest: the decoded path is routed by suffix";
const NOMAD_TAG_ROUTE =
  "real Nomad >= 1.9 version tags: the path is split on '/' (404 invalid job tag endpoint); spec Version tags";
const SPEC_REGISTER =
  "spec scheduler-jobs-api.md POST /v1/jobs: Job required, EvalPriority integer (0 = the job priority)";
const SPEC_PARSE =
  "spec scheduler-jobs-api.md POST /v1/jobs/parse: JobHCL required (real Nomad: 400 Job spec is empty)";
const SPEC_TAG = "spec scheduler-jobs-api.md Version tags; real Nomad: description under 1000 characters";
const PROVIDER =
  "provider contract (pulumi-dynamic-providers.md): check refuses an input the resource does not have, by name";
const PROTO = "JavaScript: a __proto__ key assigned to an object swaps its prototype; refused by name";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "00000002-0000-0000-c000-000000000000";
const CONFIG = { tenantId: TENANT, resource: "https://management.azure.com/", clientId: CLIENT };
const ROLE = { name: "web", boundServicePrincipalIds: ["sp-1"] };
const TASK = { Name: "t", Driver: "docker", Config: { image: "busybox:1" } };
const GROUP = { Name: "g", Tasks: [TASK] };

/** A job object that passes every rule; `over` replaces top-level fields. */
export function jobObject(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { ID: "corpus", Type: "service", Datacenters: ["dc1"], TaskGroups: [GROUP], ...over };
}
/** A job object whose first task group gets `over`. */
function groupJob(over: Record<string, unknown>, type = "service"): Record<string, unknown> {
  return jobObject({ Type: type, TaskGroups: [{ ...GROUP, ...over }] });
}
/** A job object whose first task gets `over`. */
function taskJob(over: Record<string, unknown>): Record<string, unknown> {
  return jobObject({ TaskGroups: [{ ...GROUP, Tasks: [{ ...TASK, ...over }] }] });
}

const cases: CorpusCase[] = [];
const bad = (
  resource: ResourceName,
  name: string,
  inputs: Record<string, unknown>,
  property: string,
  source: string,
): void => {
  cases.push({ resource, name, inputs, bad: true, property, source });
};
const good = (
  resource: ResourceName,
  name: string,
  inputs: Record<string, unknown>,
  property: string,
  source: string,
  line?: string,
): void => {
  cases.push({ resource, name, inputs, bad: false, property, source, ...(line !== undefined ? { line } : {}) });
};

// ---------------------------------------------------------------------------------------------------------
// Mount paths of the three auth resources: dot segments and bad shapes.

const DOT_PATHS = [
  "..",
  ".",
  "../sys",
  "../mounts/kv",
  "cloud/..",
  "cloud/../..",
  "a/./b",
  "../cloud",
  "./cloud",
  "team/../../sys/mounts/kv",
];
const BAD_SHAPES = ["my cloud", "a//b", "a?b", "a#b", "a%2e%2e", "", "/", "clöud", "a\\b"];
const mountInputs = {
  AuthMount: (p: unknown) => ({ path: p, type: "kv" }),
  AuthConfig: (p: unknown) => ({ ...CONFIG, mount: p }),
  AuthRole: (p: unknown) => ({ ...ROLE, mount: p }),
} as const;
const mountProperty = { AuthMount: "path", AuthConfig: "mount", AuthRole: "mount" } as const;
for (const r of ["AuthMount", "AuthConfig", "AuthRole"] as const) {
  for (const p of DOT_PATHS)
    bad(r, `${mountProperty[r]} ${JSON.stringify(p)} (dot segment)`, mountInputs[r](p), mountProperty[r], RFC_DOTS);
  for (const p of BAD_SHAPES)
    bad(r, `${mountProperty[r]} ${JSON.stringify(p)} (bad shape)`, mountInputs[r](p), mountProperty[r], SECRETS_MOUNT);
  bad(r, `${mountProperty[r]} not a string`, mountInputs[r](5), mountProperty[r], SECRETS_MOUNT);
  bad(r, "unknown input", { ...mountInputs[r]("cloud"), descripton: "typo" }, "descripton", PROVIDER);
  bad(
    r,
    "own __proto__ key",
    { ...mountInputs[r]("cloud"), ...JSON.parse('{"__proto__":{"adopt":true}}') },
    "__proto__",
    PROTO,
  );
  bad(
    r,
    "swapped prototype",
    Object.setPrototypeOf({ ...mountInputs[r]("cloud") }, { adopt: true }),
    "__proto__",
    PROTO,
  );
}

// ---------------------------------------------------------------------------------------------------------
// AuthMount

bad("AuthMount", "path of the token method", { path: "token" }, "path", VAULT_TOKEN_MOUNT);
bad("AuthMount", "type with a slash", { type: "a/b" }, "type", SECRETS_MOUNT);
bad("AuthMount", "type empty", { type: "" }, "type", SECRETS_MOUNT);
bad("AuthMount", "type dot segment walk", { type: "../kv" }, "type", SECRETS_MOUNT);
bad("AuthMount", "local not a boolean", { local: "yes" }, "local", "real Vault sys/auth: local is a bool");
bad("AuthMount", "sealWrap not a boolean", { sealWrap: 1 }, "sealWrap", "real Vault sys/auth: seal_wrap is a bool");
bad(
  "AuthMount",
  "description not a string",
  { description: 5 },
  "description",
  "real Vault sys/auth: description is a string",
);
bad("AuthMount", "adopt not a boolean", { adopt: "true" }, "adopt", PROVIDER);
bad("AuthMount", "TTL not a duration", { tune: { defaultLeaseTtl: "soon" } }, "tune.defaultLeaseTtl", VAULT_TUNE);
bad("AuthMount", "negative TTL", { tune: { maxLeaseTtl: -1 } }, "tune.maxLeaseTtl", VAULT_TUNE);
bad("AuthMount", "TTL of another type", { tune: { maxLeaseTtl: true } }, "tune.maxLeaseTtl", VAULT_TUNE);
bad(
  "AuthMount",
  "default TTL above max",
  { tune: { defaultLeaseTtl: "2h", maxLeaseTtl: "1h" } },
  "tune.defaultLeaseTtl",
  VAULT_TUNE,
);
bad(
  "AuthMount",
  "unknown listing visibility",
  { tune: { listingVisibility: "public" } },
  "tune.listingVisibility",
  VAULT_TUNE,
);
bad("AuthMount", "token type of roles", { tune: { tokenType: "default" } }, "tune.tokenType", VAULT_TUNE);
bad(
  "AuthMount",
  "header list not a list",
  { tune: { passthroughRequestHeaders: "X-A" } },
  "tune.passthroughRequestHeaders",
  VAULT_TUNE,
);
bad(
  "AuthMount",
  "header list item not a string",
  { tune: { allowedResponseHeaders: ["ok", 5] } },
  "tune.allowedResponseHeaders[1]",
  VAULT_TUNE,
);
bad("AuthMount", "unknown tune field", { tune: { forceNoCache: true } }, "tune.forceNoCache", VAULT_TUNE);
bad("AuthMount", "tune not an object", { tune: "fast" }, "tune", VAULT_TUNE);
good("AuthMount", "defaults", {}, "path", SECRETS_MOUNT);
good("AuthMount", "nested path", { path: "team/cloud2" }, "path", SECRETS_MOUNT, "POST /v1/sys/auth/team/cloud2");
good("AuthMount", "slashes trimmed", { path: "/trimmed/" }, "path", SECRETS_MOUNT, "POST /v1/sys/auth/trimmed");
good("AuthMount", "dots inside a name", { path: "a..b" }, "path", RFC_DOTS, "POST /v1/sys/auth/a..b");
good("AuthMount", "three dots is a name", { path: "..." }, "path", RFC_DOTS, "POST /v1/sys/auth/...");
good("AuthMount", "leading dot name", { path: ".hidden" }, "path", RFC_DOTS, "POST /v1/sys/auth/.hidden");
good("AuthMount", "word characters", { path: "x.y-z_1" }, "path", SECRETS_MOUNT, "POST /v1/sys/auth/x.y-z_1");
good(
  "AuthMount",
  "tune durations as text and seconds",
  { path: "tuned", tune: { defaultLeaseTtl: "1h", maxLeaseTtl: 7200 } },
  "tune",
  VAULT_TUNE,
  "POST /v1/sys/auth/tuned",
);

// ---------------------------------------------------------------------------------------------------------
// AuthConfig

bad("AuthConfig", "tenant not a UUID", { ...CONFIG, tenantId: "contoso" }, "tenantId", CONFIG_RECORD);
bad("AuthConfig", "tenant empty", { ...CONFIG, tenantId: "" }, "tenantId", CONFIG_RECORD);
bad("AuthConfig", "tenant not a string", { ...CONFIG, tenantId: 5 }, "tenantId", CONFIG_RECORD);
bad("AuthConfig", "tenant in braces", { ...CONFIG, tenantId: `{${TENANT}}` }, "tenantId", CONFIG_RECORD);
bad(
  "AuthConfig",
  "tenant 31 digits",
  { ...CONFIG, tenantId: "72f988bf86f141af91ab2d7cd011db4" },
  "tenantId",
  CONFIG_RECORD,
);
bad("AuthConfig", "missing tenant", { resource: CONFIG.resource }, "tenantId", CONFIG_RECORD);
bad("AuthConfig", "client id not a UUID", { ...CONFIG, clientId: "app" }, "clientId", CONFIG_RECORD);
bad(
  "AuthConfig",
  "resource without a scheme",
  { ...CONFIG, resource: "management.example.com" },
  "resource",
  ENTRA_AUDIENCE,
);
bad("AuthConfig", "resource host:port", { ...CONFIG, resource: "localhost:8080" }, "resource", ENTRA_AUDIENCE);
bad("AuthConfig", "resource with spaces", { ...CONFIG, resource: "https://a b/" }, "resource", ENTRA_AUDIENCE);
bad("AuthConfig", "resource empty", { ...CONFIG, resource: "" }, "resource", ENTRA_AUDIENCE);
bad("AuthConfig", "resource not a string", { ...CONFIG, resource: 5 }, "resource", ENTRA_AUDIENCE);
bad("AuthConfig", "missing resource", { tenantId: TENANT }, "resource", CONFIG_RECORD);
bad("AuthConfig", "unknown environment", { ...CONFIG, environment: "AzureGermanCloud" }, "environment", AZURE_CONFIG);
bad("AuthConfig", "negative retries", { ...CONFIG, maxRetries: -1 }, "maxRetries", AZURE_CONFIG);
bad("AuthConfig", "fractional retries", { ...CONFIG, maxRetries: 1.5 }, "maxRetries", AZURE_CONFIG);
bad("AuthConfig", "retries in words", { ...CONFIG, maxRetries: "three" }, "maxRetries", AZURE_CONFIG);
bad("AuthConfig", "negative retries as text", { ...CONFIG, maxRetries: "-1" }, "maxRetries", AZURE_CONFIG);
bad("AuthConfig", "retries a boolean", { ...CONFIG, maxRetries: true }, "maxRetries", AZURE_CONFIG);
bad("AuthConfig", "retry delay not a duration", { ...CONFIG, retryDelay: "soon" }, "retryDelay", AZURE_CONFIG);
bad("AuthConfig", "negative retry delay", { ...CONFIG, retryDelay: -1 }, "retryDelay", AZURE_CONFIG);
bad("AuthConfig", "max retry delay a boolean", { ...CONFIG, maxRetryDelay: true }, "maxRetryDelay", AZURE_CONFIG);
bad("AuthConfig", "root password ttl an object", { ...CONFIG, rootPasswordTtl: {} }, "rootPasswordTtl", AZURE_CONFIG);
bad("AuthConfig", "empty client secret", { ...CONFIG, clientSecret: "" }, "clientSecret", CONFIG_RECORD);
good(
  "AuthConfig",
  "dashless tenant UUID",
  { ...CONFIG, tenantId: TENANT.replace(/-/g, "") },
  "tenantId",
  "real azure auth plugin: tenant_id is any string; the directory takes GUIDs without dashes",
);
good(
  "AuthConfig",
  "application ID URI audience",
  { ...CONFIG, resource: `api://${CLIENT}` },
  "resource",
  ENTRA_AUDIENCE,
);
good("AuthConfig", "retries as digits", { ...CONFIG, maxRetries: "3" }, "maxRetries", AZURE_CONFIG);
good(
  "AuthConfig",
  "environment in lower case",
  { ...CONFIG, environment: "azurepubliccloud" },
  "environment",
  AZURE_CONFIG,
);
good("AuthConfig", "zero retry delay", { ...CONFIG, retryDelay: 0 }, "retryDelay", AZURE_CONFIG);
good("AuthConfig", "default mount", { ...CONFIG }, "mount", SECRETS_MOUNT, "GET /v1/auth/cloud/config");
good(
  "AuthConfig",
  "nested mount",
  { ...CONFIG, mount: "team/cloud" },
  "mount",
  SECRETS_MOUNT,
  "GET /v1/auth/team/cloud/config",
);
good(
  "AuthConfig",
  "mount with dots inside a name",
  { ...CONFIG, mount: "c..d" },
  "mount",
  RFC_DOTS,
  "GET /v1/auth/c..d/config",
);

// ---------------------------------------------------------------------------------------------------------
// AuthRole

for (const n of ["..", ".", "a/b", "../x", "", "web app", "web-", "-web", "wéb", "a?b"]) {
  bad(
    "AuthRole",
    `name ${JSON.stringify(n)}`,
    { ...ROLE, name: n },
    "name",
    n === ".." || n === "." || n === "../x" ? RFC_DOTS : ROLE_RECORD,
  );
}
bad("AuthRole", "name not a string", { ...ROLE, name: 5 }, "name", ROLE_RECORD);
bad("AuthRole", "missing name", { boundServicePrincipalIds: ["sp"] }, "name", ROLE_RECORD);
bad(
  "AuthRole",
  "policies and tokenPolicies differ",
  { ...ROLE, policies: ["a"], tokenPolicies: ["b"] },
  "policies",
  ROLE_RECORD,
);
bad(
  "AuthRole",
  "no bound constraint",
  { name: "web", tokenPolicies: ["p"] },
  "boundServicePrincipalIds",
  "real azure auth plugin: a role needs a bound constraint",
);
bad("AuthRole", "ttl above max ttl", { ...ROLE, tokenTtl: "2h", tokenMaxTtl: 3600 }, "tokenTtl", TOKENUTIL);
bad("AuthRole", "batch with a period", { ...ROLE, tokenType: "batch", tokenPeriod: "1h" }, "tokenPeriod", TOKENUTIL);
bad("AuthRole", "batch with a use count", { ...ROLE, tokenType: "batch", tokenNumUses: 3 }, "tokenNumUses", TOKENUTIL);
bad("AuthRole", "negative ttl", { ...ROLE, tokenTtl: -5 }, "tokenTtl", TOKENUTIL);
bad("AuthRole", "ttl a boolean", { ...ROLE, tokenTtl: true }, "tokenTtl", TOKENUTIL);
bad("AuthRole", "negative use count", { ...ROLE, tokenNumUses: -1 }, "tokenNumUses", TOKENUTIL);
bad("AuthRole", "fractional use count", { ...ROLE, tokenNumUses: 1.5 }, "tokenNumUses", TOKENUTIL);
bad("AuthRole", "use count in words", { ...ROLE, tokenNumUses: "many" }, "tokenNumUses", TOKENUTIL);
bad("AuthRole", "CIDR prefix too long", { ...ROLE, tokenBoundCidrs: ["10.0.0.0/33"] }, "tokenBoundCidrs[0]", TOKENUTIL);
bad("AuthRole", "CIDR not an address", { ...ROLE, tokenBoundCidrs: ["ok", "abc"] }, "tokenBoundCidrs[1]", TOKENUTIL);
bad("AuthRole", "token type of mounts", { ...ROLE, tokenType: "default-service" }, "tokenType", TOKENUTIL);
bad("AuthRole", "bound list a number", { ...ROLE, boundGroupIds: 5 }, "boundGroupIds", ROLE_RECORD);
bad("AuthRole", "bound list item a number", { ...ROLE, boundLocations: ["eu", 5] }, "boundLocations[1]", ROLE_RECORD);
bad(
  "AuthRole",
  "no default policy not a boolean",
  { ...ROLE, tokenNoDefaultPolicy: "no" },
  "tokenNoDefaultPolicy",
  TOKENUTIL,
);
good(
  "AuthRole",
  "name lower-cased",
  { ...ROLE, name: "Web.App-1" },
  "name",
  ROLE_RECORD,
  "GET /v1/auth/cloud/role/web.app-1",
);
good(
  "AuthRole",
  "name on a nested mount",
  { ...ROLE, mount: "team/cloud", name: "api_1" },
  "mount",
  SECRETS_MOUNT,
  "GET /v1/auth/team/cloud/role/api_1",
);
good(
  "AuthRole",
  "use count as digits",
  { ...ROLE, name: "digits", tokenNumUses: "3" },
  "tokenNumUses",
  "real Vault tokenutil: token_num_uses is TypeInt (digits parse)",
);
good(
  "AuthRole",
  "lists as comma text",
  { name: "csv", boundSubscriptionIds: "s1, s2", boundServicePrincipalIds: "sp" },
  "boundSubscriptionIds",
  ROLE_RECORD,
);
good("AuthRole", "bare IP as CIDR", { ...ROLE, tokenBoundCidrs: ["10.0.0.1"] }, "tokenBoundCidrs", TOKENUTIL);

// ---------------------------------------------------------------------------------------------------------
// Job: the job object

const badJob = (name: string, job: Record<string, unknown>, property: string, source: string): void =>
  bad("Job", name, { job, waitForDeployment: false }, property, source);
for (const id of [
  ".",
  "..",
  "x/plan",
  "x/versions",
  "x/evaluate",
  "x/tag",
  "x/periodic/force",
  "x/dispatch/payload",
  "a//b",
  "../jobs",
  "a/./b",
  "/a",
  "a/",
]) {
  badJob(
    `ID ${JSON.stringify(id)} (another endpoint)`,
    jobObject({ ID: id }),
    "job.ID",
    id.includes("/") && /[a-z]$/.test(id) && !id.startsWith("..") ? NOMAD_ROUTE : RFC_DOTS,
  );
}
badJob("ID with a space", jobObject({ ID: "a b" }), "job.ID", NOMAD_JOB);
badJob("ID with NUL", jobObject({ ID: "a\u0000b" }), "job.ID", NOMAD_JOB);
badJob("ID empty", jobObject({ ID: "" }), "job.ID", NOMAD_JOB);
badJob("ID missing", jobObject({ ID: undefined }), "job.ID", NOMAD_JOB);
badJob("ID a number", jobObject({ ID: 5 }), "job.ID", NOMAD_JOB);
badJob("register body instead of a job", { Job: jobObject() }, "job.ID", SPEC_REGISTER);
badJob("Name empty", jobObject({ Name: "" }), "job.Name", NOMAD_JOB);
badJob("Name with NUL", jobObject({ Name: "a\u0000" }), "job.Name", NOMAD_JOB);
for (const t of ["daemon", "SERVICE", "Batch", "", "core"])
  badJob(`Type ${JSON.stringify(t)}`, jobObject({ Type: t }), "job.Type", t === "core" ? NOMAD_ADMISSION : NOMAD_JOB);
badJob("Type a number", jobObject({ Type: 1 }), "job.Type", NOMAD_JOB);
for (const p of [101, -5, 1.5, 1000])
  badJob(`Priority ${p}`, jobObject({ Priority: p }), "job.Priority", NOMAD_ADMISSION);
badJob(
  "Priority as text",
  jobObject({ Priority: "50" }),
  "job.Priority",
  "real Nomad: the register body is decoded as JSON into integers",
);
badJob("no TaskGroups", jobObject({ TaskGroups: undefined }), "job.TaskGroups", NOMAD_JOB);
badJob("empty TaskGroups", jobObject({ TaskGroups: [] }), "job.TaskGroups", NOMAD_JOB);
badJob("TaskGroups null", jobObject({ TaskGroups: null }), "job.TaskGroups", NOMAD_JOB);
badJob("TaskGroups not a list", jobObject({ TaskGroups: { g: GROUP } }), "job.TaskGroups", NOMAD_JOB);
badJob("group without tasks", groupJob({ Tasks: undefined }), "job.TaskGroups[0].Tasks", NOMAD_TG);
badJob("group with an empty task list", groupJob({ Tasks: [] }), "job.TaskGroups[0].Tasks", NOMAD_TG);
badJob("group without a name", groupJob({ Name: undefined }), "job.TaskGroups[0].Name", NOMAD_TG);
badJob("group with an empty name", groupJob({ Name: "" }), "job.TaskGroups[0].Name", NOMAD_TG);
badJob("group name repeated", jobObject({ TaskGroups: [GROUP, GROUP] }), "job.TaskGroups[1].Name", NOMAD_JOB);
badJob("Count -1", groupJob({ Count: -1 }), "job.TaskGroups[0].Count", NOMAD_TG);
badJob(
  "Count 1.5",
  groupJob({ Count: 1.5 }),
  "job.TaskGroups[0].Count",
  "real Nomad: Count is an integer (JSON decode refuses 1.5)",
);
badJob(
  "Count as text",
  groupJob({ Count: "3" }),
  "job.TaskGroups[0].Count",
  "real Nomad: the register body is decoded as JSON into integers",
);
badJob("system Count 2", groupJob({ Count: 2 }, "system"), "job.TaskGroups[0].Count", NOMAD_JOB);
badJob("negative group ShutdownDelay", groupJob({ ShutdownDelay: -1 }), "job.TaskGroups[0].ShutdownDelay", NOMAD_JOB);
badJob(
  "negative MaxClientDisconnect",
  groupJob({ MaxClientDisconnect: -1 }),
  "job.TaskGroups[0].MaxClientDisconnect",
  NOMAD_TG,
);
badJob(
  "second group without tasks",
  jobObject({ TaskGroups: [GROUP, { Name: "h", Tasks: [] }] }),
  "job.TaskGroups[1].Tasks",
  NOMAD_TG,
);
badJob("task without a name", taskJob({ Name: undefined }), "job.TaskGroups[0].Tasks[0].Name", NOMAD_TASK);
badJob("task name with a slash", taskJob({ Name: "a/b" }), "job.TaskGroups[0].Tasks[0].Name", NOMAD_TASK);
badJob("task name with a backslash", taskJob({ Name: "a\\b" }), "job.TaskGroups[0].Tasks[0].Name", NOMAD_TASK);
badJob(
  "task name repeated",
  jobObject({ TaskGroups: [{ ...GROUP, Tasks: [TASK, TASK] }] }),
  "job.TaskGroups[0].Tasks[1].Name",
  NOMAD_TG,
);
badJob("task without a driver", taskJob({ Driver: undefined }), "job.TaskGroups[0].Tasks[0].Driver", NOMAD_TASK);
badJob("task with an empty driver", taskJob({ Driver: "" }), "job.TaskGroups[0].Tasks[0].Driver", NOMAD_TASK);
badJob("negative KillTimeout", taskJob({ KillTimeout: -1 }), "job.TaskGroups[0].Tasks[0].KillTimeout", NOMAD_TASK);
badJob(
  "two leaders",
  jobObject({
    TaskGroups: [
      {
        ...GROUP,
        Tasks: [
          { ...TASK, Leader: true },
          { ...TASK, Name: "u", Leader: true },
        ],
      },
    ],
  }),
  "job.TaskGroups[0].Tasks",
  NOMAD_TG,
);
badJob("Update.MaxParallel -1", jobObject({ Update: { MaxParallel: -1 } }), "job.Update.MaxParallel", NOMAD_UPDATE);
badJob(
  "group Update.MaxParallel -1",
  groupJob({ Update: { MaxParallel: -1 } }),
  "job.TaskGroups[0].Update.MaxParallel",
  NOMAD_UPDATE,
);
badJob("Update.Canary -1", jobObject({ Update: { Canary: -1 } }), "job.Update.Canary", NOMAD_UPDATE);
badJob(
  "Update.MinHealthyTime -1",
  jobObject({ Update: { MinHealthyTime: -1 } }),
  "job.Update.MinHealthyTime",
  NOMAD_UPDATE,
);
badJob(
  "Update.ProgressDeadline -1",
  jobObject({ Update: { ProgressDeadline: -1 } }),
  "job.Update.ProgressDeadline",
  NOMAD_UPDATE,
);
badJob(
  "group Update.HealthyDeadline 0",
  groupJob({ Update: { HealthyDeadline: 0 } }),
  "job.TaskGroups[0].Update.HealthyDeadline",
  NOMAD_UPDATE,
);
badJob(
  "group Update.Stagger 0",
  groupJob({ Update: { Stagger: 0 } }),
  "job.TaskGroups[0].Update.Stagger",
  NOMAD_UPDATE,
);
badJob(
  "Update.HealthCheck unknown",
  jobObject({ Update: { HealthCheck: "http" } }),
  "job.Update.HealthCheck",
  NOMAD_UPDATE,
);
badJob("Update.MaxParallel 1.5", jobObject({ Update: { MaxParallel: 1.5 } }), "job.Update.MaxParallel", NOMAD_UPDATE);
badJob("Dispatched true", jobObject({ Dispatched: true }), "job.Dispatched", NOMAD_REGISTER);
badJob("Payload set", jobObject({ Type: "batch", Payload: "aGk=" }), "job.Payload", NOMAD_ADMISSION);
badJob("Datacenter empty", jobObject({ Datacenters: ["dc1", ""] }), "job.Datacenters[1]", NOMAD_JOB);
badJob("Datacenters not a list", jobObject({ Datacenters: "dc1" }), "job.Datacenters", NOMAD_JOB);
badJob("periodic service job", jobObject({ Periodic: { Enabled: true, Spec: "@daily" } }), "job.Periodic", NOMAD_JOB);
badJob(
  "periodic without a spec",
  jobObject({ Type: "batch", Periodic: { SpecType: "cron" } }),
  "job.Periodic.Spec",
  "real Nomad 1.6.5 PeriodicConfig.Validate: a spec is required",
);
badJob(
  "parameterized service job",
  jobObject({ ParameterizedJob: { Payload: "optional" } }),
  "job.ParameterizedJob",
  NOMAD_JOB,
);
badJob(
  "parameterized payload rule unknown",
  jobObject({ Type: "batch", ParameterizedJob: { Payload: "maybe" } }),
  "job.ParameterizedJob.Payload",
  "real Nomad 1.6.5 ParameterizedJobConfig.Validate",
);
badJob(
  "Meta value a number",
  jobObject({ Meta: { a: 1 } }),
  "job.Meta.a",
  "spec scheduler-jobs-api.md Job: Meta is a map of string to string",
);
badJob("nested __proto__ key", jobObject({ Meta: JSON.parse('{"__proto__":{"x":"y"}}') }), "job.Meta.__proto__", PROTO);
badJob(
  "nested swapped prototype",
  jobObject({ TaskGroups: [Object.setPrototypeOf({ ...GROUP }, { Count: 9 })] }),
  "job.TaskGroups[0].__proto__",
  PROTO,
);

// Job: the other inputs

const SPEC = 'job "x" {}';
bad("Job", "jobspec and job both", { jobspec: SPEC, job: jobObject() }, "job", SPEC_REGISTER);
bad("Job", "neither jobspec nor job", {}, "jobspec", SPEC_REGISTER);
bad("Job", "jobspec empty", { jobspec: "" }, "jobspec", SPEC_PARSE);
bad("Job", "jobspec only whitespace", { jobspec: " \n\t " }, "jobspec", SPEC_PARSE);
bad("Job", "jobspec not a string", { jobspec: 5 }, "jobspec", SPEC_PARSE);
bad("Job", "job not an object", { job: "web" }, "job", SPEC_REGISTER);
bad("Job", "variables with a job object", { job: jobObject(), variables: "x = 1" }, "variables", SPEC_PARSE);
bad(
  "Job",
  "variable name with a space",
  { jobspec: SPEC, variables: { "bad name": "v" } },
  "variables.bad name",
  "HCL2 identifiers (var-file names)",
);
bad("Job", "variable value a list", { jobspec: SPEC, variables: { image: ["a"] } }, "variables.image", SPEC_PARSE);
bad(
  "Job",
  "variable value null-ish object",
  { jobspec: SPEC, variables: { image: { a: 1 } } },
  "variables.image",
  SPEC_PARSE,
);
bad("Job", "variables a number", { jobspec: SPEC, variables: 5 }, "variables", SPEC_PARSE);
bad(
  "Job",
  "deploymentTimeout not a duration",
  { jobspec: SPEC, deploymentTimeout: "hunter2-not-a-duration" },
  "deploymentTimeout",
  PROVIDER,
);
bad("Job", "deploymentTimeout negative", { jobspec: SPEC, deploymentTimeout: -5 }, "deploymentTimeout", PROVIDER);
bad("Job", "deploymentTimeout a boolean", { jobspec: SPEC, deploymentTimeout: true }, "deploymentTimeout", PROVIDER);
bad("Job", "evalPriority 101", { jobspec: SPEC, evalPriority: 101 }, "evalPriority", SPEC_REGISTER);
bad("Job", "evalPriority -1", { jobspec: SPEC, evalPriority: -1 }, "evalPriority", SPEC_REGISTER);
bad("Job", "evalPriority 1.5", { jobspec: SPEC, evalPriority: 1.5 }, "evalPriority", SPEC_REGISTER);
bad(
  "Job",
  "onDeploymentFailure unknown",
  { jobspec: SPEC, onDeploymentFailure: "rollback" },
  "onDeploymentFailure",
  PROVIDER,
);
bad(
  "Job",
  "namespace empty",
  { jobspec: SPEC, namespace: "" },
  "namespace",
  "spec scheduler-jobs-api.md: every endpoint takes a namespace",
);
bad("Job", "region empty", { jobspec: SPEC, region: "" }, "region", "real Nomad: ?region= selects the region");
bad("Job", "purgeOnDestroy not a boolean", { jobspec: SPEC, purgeOnDestroy: "yes" }, "purgeOnDestroy", PROVIDER);
bad("Job", "unknown input", { jobspec: SPEC, jobSpec: "typo" }, "jobSpec", PROVIDER);
bad(
  "Job",
  "own __proto__ key",
  { jobspec: SPEC, ...JSON.parse('{"__proto__":{"purgeOnDestroy":true,"namespace":"other"}}') },
  "__proto__",
  PROTO,
);
bad("Job", "swapped prototype", Object.setPrototypeOf({ jobspec: SPEC }, { purgeOnDestroy: true }), "__proto__", PROTO);

const goodJob = (name: string, job: Record<string, unknown>, property: string, source: string, line?: string): void =>
  good("Job", name, { job, waitForDeployment: false, purgeOnDestroy: true }, property, source, line);
const Q = "?namespace=default&region=global";
goodJob("plain ID", jobObject({ ID: "web-1" }), "job.ID", NOMAD_JOB, `DELETE /v1/job/web-1${Q}&purge=true`);
goodJob(
  "ID with slashes of a child job",
  jobObject({ ID: "a/b/dispatch-1", Type: "batch" }),
  "job.ID",
  NOMAD_ROUTE,
  `DELETE /v1/job/a%2Fb%2Fdispatch-1${Q}&purge=true`,
);
goodJob("ID with dots", jobObject({ ID: "app.v2" }), "job.ID", RFC_DOTS, `DELETE /v1/job/app.v2${Q}&purge=true`);
goodJob("ID three dots", jobObject({ ID: "..." }), "job.ID", RFC_DOTS, `DELETE /v1/job/...${Q}&purge=true`);
goodJob(
  "ID with a query character",
  jobObject({ ID: "x?y#z" }),
  "job.ID",
  "RFC 3986: '?' and '#' are encoded in a segment",
  `DELETE /v1/job/x%3Fy%23z${Q}&purge=true`,
);
goodJob(
  "ID that looks encoded",
  jobObject({ ID: "%2e%2e" }),
  "job.ID",
  RFC_DOTS,
  `DELETE /v1/job/%252e%252e${Q}&purge=true`,
);
goodJob(
  "ID non-ASCII",
  jobObject({ ID: "ünï" }),
  "job.ID",
  "RFC 3986: UTF-8 percent-encoding",
  `DELETE /v1/job/%C3%BCn%C3%AF${Q}&purge=true`,
);
goodJob(
  "ID named like an endpoint",
  jobObject({ ID: "plan" }),
  "job.ID",
  NOMAD_ROUTE,
  `DELETE /v1/job/plan${Q}&purge=true`,
);
goodJob(
  "ID ending in a longer word",
  jobObject({ ID: "a/planner" }),
  "job.ID",
  NOMAD_ROUTE,
  `DELETE /v1/job/a%2Fplanner${Q}&purge=true`,
);
goodJob("ID ending in force alone", jobObject({ ID: "backup/force" }), "job.ID", NOMAD_ROUTE);
goodJob(
  "Priority 0 (server default)",
  jobObject({ ID: "prio0", Priority: 0 }),
  "job.Priority",
  "real Nomad 1.6.5 jobCanonicalizer: priority 0 takes the default",
);
goodJob(
  "Count 0",
  jobObject({ ID: "count0", TaskGroups: [{ ...GROUP, Count: 0 }] }),
  "job.TaskGroups[0].Count",
  NOMAD_TG,
);
goodJob(
  "batch periodic",
  jobObject({ ID: "cron", Type: "batch", Periodic: { Enabled: true, Spec: "@daily", SpecType: "cron" } }),
  "job.Periodic",
  NOMAD_JOB,
);
goodJob(
  "sysbatch parameterized",
  jobObject({ ID: "param", Type: "sysbatch", ParameterizedJob: { Payload: "forbidden" } }),
  "job.ParameterizedJob",
  NOMAD_JOB,
);
goodJob(
  "copied from a read",
  jobObject({ ID: "copied2", Version: 3, Status: "running", JobModifyIndex: 9, Stable: true, Dispatched: false }),
  "job.Version",
  "real Nomad: the server overwrites its own fields; the provider strips them",
);
good("Job", "evalPriority 0 (the job priority)", { jobspec: SPEC, evalPriority: 0 }, "evalPriority", SPEC_REGISTER);
good(
  "Job",
  "deploymentTimeout 0 (no own limit)",
  { jobspec: SPEC, deploymentTimeout: 0 },
  "deploymentTimeout",
  PROVIDER,
);
good(
  "Job",
  "deploymentTimeout as a Go duration",
  { jobspec: SPEC, deploymentTimeout: "1h30m" },
  "deploymentTimeout",
  PROVIDER,
);
good(
  "Job",
  "variables of the three types",
  { jobspec: SPEC, variables: { image: "a", n: 3, on: true } },
  "variables",
  SPEC_PARSE,
);

// ---------------------------------------------------------------------------------------------------------
// JobVersionTag

const TAG = { jobId: "tagged", name: "v1", version: 0 };
for (const id of ["..", ".", "a/b", "../jobs", "x/versions/y"]) {
  bad(
    "JobVersionTag",
    `jobId ${JSON.stringify(id)}`,
    { ...TAG, jobId: id },
    "jobId",
    id.includes("/") ? NOMAD_TAG_ROUTE : RFC_DOTS,
  );
}
for (const n of ["..", ".", "a/b", "../x", "x/../y", "/"]) {
  bad(
    "JobVersionTag",
    `name ${JSON.stringify(n)}`,
    { ...TAG, name: n },
    "name",
    n.includes("/") ? NOMAD_TAG_ROUTE : RFC_DOTS,
  );
}
bad("JobVersionTag", "jobId empty", { ...TAG, jobId: "" }, "jobId", SPEC_TAG);
bad("JobVersionTag", "jobId missing", { name: "v1" }, "jobId", SPEC_TAG);
bad("JobVersionTag", "jobId a number", { ...TAG, jobId: 5 }, "jobId", SPEC_TAG);
bad("JobVersionTag", "name empty", { ...TAG, name: "" }, "name", SPEC_TAG);
bad("JobVersionTag", "name a number", { ...TAG, name: 5 }, "name", SPEC_TAG);
bad("JobVersionTag", "version -1", { ...TAG, version: -1 }, "version", SPEC_TAG);
bad("JobVersionTag", "version 1.5", { ...TAG, version: 1.5 }, "version", SPEC_TAG);
bad(
  "JobVersionTag",
  "version as text",
  { ...TAG, version: "3" },
  "version",
  "real Nomad: the tag body is decoded as JSON into an integer",
);
bad("JobVersionTag", "description too long", { ...TAG, description: "x".repeat(1000) }, "description", SPEC_TAG);
bad("JobVersionTag", "namespace empty", { ...TAG, namespace: "" }, "namespace", SPEC_TAG);
bad("JobVersionTag", "unknown input", { ...TAG, tag: "typo" }, "tag", PROVIDER);
bad(
  "JobVersionTag",
  "own __proto__ key",
  { ...TAG, ...JSON.parse('{"__proto__":{"namespace":"other"}}') },
  "__proto__",
  PROTO,
);
bad(
  "JobVersionTag",
  "swapped prototype",
  Object.setPrototypeOf({ ...TAG }, { description: "from the prototype" }),
  "__proto__",
  PROTO,
);
const T = "?namespace=default";
good(
  "JobVersionTag",
  "plain name",
  { ...TAG, name: "v1.0" },
  "name",
  SPEC_TAG,
  `POST /v1/job/tagged/versions/v1.0/tag${T}`,
);
good(
  "JobVersionTag",
  "name with a space",
  { ...TAG, name: "release 2" },
  "name",
  SPEC_TAG,
  `POST /v1/job/tagged/versions/release%202/tag${T}`,
);
good(
  "JobVersionTag",
  "name three dots",
  { ...TAG, name: "..." },
  "name",
  RFC_DOTS,
  `POST /v1/job/tagged/versions/.../tag${T}`,
);
good(
  "JobVersionTag",
  "name that looks encoded",
  { ...TAG, name: "%2e%2e" },
  "name",
  RFC_DOTS,
  `POST /v1/job/tagged/versions/%252e%252e/tag${T}`,
);
good(
  "JobVersionTag",
  "name with query characters",
  { ...TAG, name: "a?b#c" },
  "name",
  "RFC 3986: '?' and '#' are encoded in a segment",
  `POST /v1/job/tagged/versions/a%3Fb%23c/tag${T}`,
);
good(
  "JobVersionTag",
  "name with a backslash",
  { ...TAG, name: "a\\b" },
  "name",
  "RFC 3986: '\\' is encoded in a segment",
  `POST /v1/job/tagged/versions/a%5Cb/tag${T}`,
);
good(
  "JobVersionTag",
  "description under 1000",
  { ...TAG, name: "described", description: "x".repeat(999) },
  "description",
  SPEC_TAG,
);

/** Every case of the corpus. */
export const CORPUS: readonly CorpusCase[] = cases;
