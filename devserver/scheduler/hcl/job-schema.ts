// Which jobspec arguments and blocks exist and which job API field each becomes. The names and field
// mappings follow the `hcl:"..."` tags of the scheduler's public Go client structs (api/jobs.go,
// api/tasks.go, api/resources.go, api/services.go, api/constraint.go); field names use the spec's
// neutral words (vault_token -> SecretsToken, consul_token -> DiscoveryToken, vault {} -> Secrets).
// Here: the shape of a block's spec and the blocks the levels share or nest (placement, policies, networks,
// services, resources, templates); the job, group and task bodies are in job-levels.ts.

/** How an argument value is converted: mirrors the Go field type it decodes into. */
export type Kind = "string" | "int" | "number" | "bool" | "duration" | "strings" | "stringMap" | "any";

/** What a nested block decodes into. */
type BlockTarget =
  | BlockSpec
  /** Driver config: any values; object-literal arguments become one-element lists, as in the real decoder. */
  | "free"
  /** map[string]string, from `name { k = v }` or `name = { k = v }`. */
  | "stringMap"
  /** map[string][]string (check headers). */
  | "stringListMap"
  /** Blocks modelled loosely: snake_case names become PascalCase, nested blocks become objects or lists. */
  | "generic";

export interface BlockRef {
  readonly field: string;
  readonly target: BlockTarget;
  /** Repeated block: collected into a list in source order. */
  readonly many?: boolean;
  /** Label handling: the field the single label is stored in. */
  readonly labelField?: string;
  /** Collect labelled blocks into a map keyed by label instead of a list. */
  readonly byLabel?: boolean;
}

/** Decoder steps that run after a block's fields are decoded (see job.ts). */
export type PostStep =
  | "constraint"
  | "affinity"
  | "network"
  | "template"
  | "changeScript"
  | "secrets"
  | "periodic"
  | "groupScaling"
  | "taskScaling"
  | "group";

export interface BlockSpec {
  /** argument name -> "Field:kind" */
  readonly attrs: Readonly<Record<string, string>>;
  readonly blocks?: Readonly<Record<string, BlockRef>>;
  readonly post?: PostStep;
}

export const one = (field: string, target: BlockTarget): BlockRef => ({ field, target });
export const many = (field: string, target: BlockTarget): BlockRef => ({ field, target, many: true });
export const labelled = (field: string, target: BlockTarget, labelField: string): BlockRef => ({
  field,
  target,
  many: true,
  labelField,
});

export const CONSTRAINT: BlockSpec = {
  post: "constraint",
  attrs: {
    attribute: "attribute:string",
    operator: "operator:string",
    value: "value:string",
    distinct_property: "distinct_property:string",
    distinct_hosts: "distinct_hosts:bool",
    regexp: "regexp:string",
    version: "version:string",
    semver: "semver:string",
    set_contains: "set_contains:string",
    set_contains_all: "set_contains_all:string",
    set_contains_any: "set_contains_any:string",
    attribute_is_set: "attribute_is_set:string",
    attribute_is_not_set: "attribute_is_not_set:string",
  },
};

export const AFFINITY: BlockSpec = {
  post: "affinity",
  attrs: {
    attribute: "attribute:string",
    operator: "operator:string",
    value: "value:string",
    weight: "weight:int",
    regexp: "regexp:string",
    version: "version:string",
    semver: "semver:string",
    set_contains: "set_contains:string",
    set_contains_all: "set_contains_all:string",
    set_contains_any: "set_contains_any:string",
  },
};

export const SPREAD: BlockSpec = {
  attrs: { attribute: "Attribute:string", weight: "Weight:int" },
  blocks: { target: labelled("SpreadTarget", { attrs: { percent: "Percent:int" } }, "Value") },
};

export const UPDATE: BlockSpec = {
  attrs: {
    stagger: "Stagger:duration",
    max_parallel: "MaxParallel:int",
    health_check: "HealthCheck:string",
    min_healthy_time: "MinHealthyTime:duration",
    healthy_deadline: "HealthyDeadline:duration",
    progress_deadline: "ProgressDeadline:duration",
    canary: "Canary:int",
    auto_revert: "AutoRevert:bool",
    auto_promote: "AutoPromote:bool",
  },
};

export const MIGRATE: BlockSpec = {
  attrs: {
    max_parallel: "MaxParallel:int",
    health_check: "HealthCheck:string",
    min_healthy_time: "MinHealthyTime:duration",
    healthy_deadline: "HealthyDeadline:duration",
  },
};

export const RESTART: BlockSpec = {
  attrs: {
    interval: "Interval:duration",
    attempts: "Attempts:int",
    delay: "Delay:duration",
    mode: "Mode:string",
    render_templates: "RenderTemplates:bool",
  },
};

export const RESCHEDULE: BlockSpec = {
  attrs: {
    attempts: "Attempts:int",
    interval: "Interval:duration",
    delay: "Delay:duration",
    delay_function: "DelayFunction:string",
    max_delay: "MaxDelay:duration",
    unlimited: "Unlimited:bool",
  },
};

const PORT: BlockSpec = {
  attrs: {
    static: "Value:int",
    to: "To:int",
    host_network: "HostNetwork:string",
    ignore_collision: "IgnoreCollision:bool",
  },
};

export const NETWORK: BlockSpec = {
  post: "network",
  attrs: {
    mode: "Mode:string",
    device: "Device:string",
    cidr: "CIDR:string",
    ip: "IP:string",
    hostname: "Hostname:string",
    mbits: "MBits:int",
  },
  blocks: {
    dns: one("DNS", {
      attrs: { servers: "Servers:strings", searches: "Searches:strings", options: "Options:strings" },
    }),
    port: labelled("DynamicPorts", PORT, "Label"),
    reserved_ports: labelled("ReservedPorts", PORT, "Label"),
  },
};

const CHECK_RESTART: BlockSpec = {
  attrs: { limit: "Limit:int", grace: "Grace:duration", ignore_warnings: "IgnoreWarnings:bool" },
};

const CHECK: BlockSpec = {
  attrs: {
    name: "Name:string",
    type: "Type:string",
    command: "Command:string",
    args: "Args:strings",
    path: "Path:string",
    protocol: "Protocol:string",
    port: "PortLabel:string",
    expose: "Expose:bool",
    address_mode: "AddressMode:string",
    advertise: "Advertise:string",
    interval: "Interval:duration",
    timeout: "Timeout:duration",
    initial_status: "InitialStatus:string",
    notes: "Notes:string",
    tls_server_name: "TLSServerName:string",
    tls_skip_verify: "TLSSkipVerify:bool",
    method: "Method:string",
    grpc_service: "GRPCService:string",
    grpc_use_tls: "GRPCUseTLS:bool",
    task: "TaskName:string",
    success_before_passing: "SuccessBeforePassing:int",
    failures_before_critical: "FailuresBeforeCritical:int",
    failures_before_warning: "FailuresBeforeWarning:int",
    body: "Body:string",
    on_update: "OnUpdate:string",
  },
  blocks: { header: one("Header", "stringListMap"), check_restart: one("CheckRestart", CHECK_RESTART) },
};

export const SERVICE: BlockSpec = {
  attrs: {
    name: "Name:string",
    tags: "Tags:strings",
    canary_tags: "CanaryTags:strings",
    enable_tag_override: "EnableTagOverride:bool",
    port: "PortLabel:string",
    address_mode: "AddressMode:string",
    address: "Address:string",
    task: "TaskName:string",
    on_update: "OnUpdate:string",
    provider: "Provider:string",
    cluster: "Cluster:string",
    kind: "Kind:string",
  },
  blocks: {
    check: many("Checks", CHECK),
    check_restart: one("CheckRestart", CHECK_RESTART),
    connect: one("Connect", "generic"),
    meta: one("Meta", "stringMap"),
    canary_meta: one("CanaryMeta", "stringMap"),
    tagged_addresses: one("TaggedAddresses", "stringMap"),
    identity: one("Identity", "generic"),
    weights: one("Weights", { attrs: { passing: "Passing:int", warning: "Warning:int" } }),
  },
};

const DEVICE: BlockSpec = {
  attrs: { count: "Count:int" },
  blocks: { constraint: many("Constraints", CONSTRAINT), affinity: many("Affinities", AFFINITY) },
};

export const RESOURCES: BlockSpec = {
  attrs: {
    cpu: "CPU:int",
    cores: "Cores:int",
    memory: "MemoryMB:int",
    memory_max: "MemoryMaxMB:int",
    disk: "DiskMB:int",
    iops: "IOPS:int",
    secrets: "SecretsMB:int",
  },
  blocks: {
    network: many("Networks", NETWORK),
    device: labelled("Devices", DEVICE, "Name"),
    numa: one("NUMA", "generic"),
  },
};

export const SECRETS: BlockSpec = {
  post: "secrets",
  attrs: {
    policies: "Policies:strings",
    role: "Role:string",
    namespace: "Namespace:string",
    cluster: "Cluster:string",
    env: "Env:bool",
    disable_file: "DisableFile:bool",
    change_mode: "ChangeMode:string",
    change_signal: "ChangeSignal:string",
    allow_token_expiration: "AllowTokenExpiration:bool",
  },
};

export const DISCOVERY: BlockSpec = {
  attrs: { namespace: "Namespace:string", cluster: "Cluster:string", partition: "Partition:string" },
};

export const TEMPLATE: BlockSpec = {
  post: "template",
  attrs: {
    source: "SourcePath:string",
    destination: "DestPath:string",
    data: "EmbeddedTmpl:string",
    change_mode: "ChangeMode:string",
    change_signal: "ChangeSignal:string",
    splay: "Splay:duration",
    perms: "Perms:string",
    uid: "Uid:int",
    gid: "Gid:int",
    left_delimiter: "LeftDelim:string",
    right_delimiter: "RightDelim:string",
    env: "Envvars:bool",
    vault_grace: "VaultGrace:duration",
    error_on_missing_key: "ErrMissingKey:bool",
    once: "Once:bool",
  },
  blocks: {
    change_script: one("ChangeScript", {
      post: "changeScript",
      attrs: {
        command: "Command:string",
        args: "Args:strings",
        timeout: "Timeout:duration",
        fail_on_error: "FailOnError:bool",
      },
    }),
    wait: one("Wait", { attrs: { min: "Min:duration", max: "Max:duration" } }),
  },
};

export const ARTIFACT: BlockSpec = {
  attrs: {
    source: "GetterSource:string",
    mode: "GetterMode:string",
    insecure: "GetterInsecure:bool",
    destination: "RelativeDest:string",
    chown: "Chown:bool",
  },
  blocks: { options: one("GetterOptions", "stringMap"), headers: one("GetterHeaders", "stringMap") },
};

export const SCALING: BlockSpec = {
  post: "groupScaling",
  attrs: { min: "Min:int", max: "Max:int", enabled: "Enabled:bool", type: "Type:string" },
  blocks: { policy: one("Policy", "free") },
};
