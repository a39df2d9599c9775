// The three levels of a jobspec: the job, its groups and their tasks, each with its arguments and the
// blocks it nests (the shared blocks and the spec's shape are in job-schema.ts).
import {
  AFFINITY,
  ARTIFACT,
  CONSTRAINT,
  DISCOVERY,
  labelled,
  many,
  MIGRATE,
  NETWORK,
  one,
  RESCHEDULE,
  RESOURCES,
  RESTART,
  SCALING,
  SECRETS,
  SERVICE,
  SPREAD,
  TEMPLATE,
  UPDATE,
  type BlockSpec,
} from "./job-schema";

const TASK: BlockSpec = {
  attrs: {
    driver: "Driver:string",
    user: "User:string",
    kill_timeout: "KillTimeout:duration",
    leader: "Leader:bool",
    shutdown_delay: "ShutdownDelay:duration",
    kill_signal: "KillSignal:string",
    kind: "Kind:string",
  },
  blocks: {
    lifecycle: one("Lifecycle", { attrs: { hook: "Hook:string", sidecar: "Sidecar:bool" } }),
    config: one("Config", "free"),
    constraint: many("Constraints", CONSTRAINT),
    affinity: many("Affinities", AFFINITY),
    env: one("Env", "stringMap"),
    service: many("Services", SERVICE),
    resources: one("Resources", RESOURCES),
    restart: one("RestartPolicy", RESTART),
    meta: one("Meta", "stringMap"),
    logs: one("LogConfig", {
      attrs: {
        max_files: "MaxFiles:int",
        max_file_size: "MaxFileSizeMB:int",
        enabled: "Enabled:bool",
        disabled: "Disabled:bool",
      },
    }),
    artifact: many("Artifacts", ARTIFACT),
    vault: one("Secrets", SECRETS),
    consul: one("Discovery", DISCOVERY),
    template: many("Templates", TEMPLATE),
    dispatch_payload: one("DispatchPayload", { attrs: { file: "File:string" } }),
    volume_mount: many("VolumeMounts", {
      attrs: {
        volume: "Volume:string",
        destination: "Destination:string",
        read_only: "ReadOnly:bool",
        propagation_mode: "PropagationMode:string",
        selinux_label: "SELinuxLabel:string",
      },
    }),
    csi_plugin: one("CSIPluginConfig", {
      attrs: {
        id: "ID:string",
        type: "Type:string",
        mount_dir: "MountDir:string",
        stage_publish_base_dir: "StagePublishBaseDir:string",
        health_timeout: "HealthTimeout:duration",
      },
    }),
    scaling: labelled("ScalingPolicies", { ...SCALING, post: "taskScaling" }, "Name"),
    identity: many("Identities", {
      attrs: {
        name: "Name:string",
        aud: "Audience:strings",
        change_mode: "ChangeMode:string",
        change_signal: "ChangeSignal:string",
        env: "Env:bool",
        file: "File:bool",
        filepath: "Filepath:string",
        service_name: "ServiceName:string",
        ttl: "TTL:duration",
      },
    }),
    action: labelled("Actions", { attrs: { command: "Command:string", args: "Args:strings" } }, "Name"),
    schedule: one("Schedule", "generic"),
  },
};

const GROUP: BlockSpec = {
  post: "group",
  attrs: {
    count: "Count:int",
    shutdown_delay: "ShutdownDelay:duration",
    stop_after_client_disconnect: "StopAfterClientDisconnect:duration",
    max_client_disconnect: "MaxClientDisconnect:duration",
    prevent_reschedule_on_lost: "PreventRescheduleOnLost:bool",
  },
  blocks: {
    constraint: many("Constraints", CONSTRAINT),
    affinity: many("Affinities", AFFINITY),
    task: labelled("Tasks", TASK, "Name"),
    spread: many("Spreads", SPREAD),
    volume: {
      field: "Volumes",
      many: true,
      byLabel: true,
      labelField: "Name",
      target: {
        attrs: {
          type: "Type:string",
          source: "Source:string",
          read_only: "ReadOnly:bool",
          sticky: "Sticky:bool",
          access_mode: "AccessMode:string",
          attachment_mode: "AttachmentMode:string",
          per_alloc: "PerAlloc:bool",
        },
        blocks: {
          mount_options: one("MountOptions", {
            attrs: { fs_type: "FSType:string", mount_flags: "MountFlags:strings" },
          }),
        },
      },
    },
    restart: one("RestartPolicy", RESTART),
    disconnect: one("Disconnect", {
      attrs: {
        lost_after: "LostAfter:duration",
        stop_on_client_after: "StopOnClientAfter:duration",
        replace: "Replace:bool",
        reconcile: "Reconcile:string",
      },
    }),
    reschedule: one("ReschedulePolicy", RESCHEDULE),
    ephemeral_disk: one("EphemeralDisk", {
      attrs: { sticky: "Sticky:bool", migrate: "Migrate:bool", size: "SizeMB:int" },
    }),
    update: one("Update", UPDATE),
    migrate: one("Migrate", MIGRATE),
    network: many("Networks", NETWORK),
    meta: one("Meta", "stringMap"),
    service: many("Services", SERVICE),
    scaling: one("Scaling", SCALING),
    consul: one("Discovery", DISCOVERY),
    vault: one("Secrets", SECRETS),
  },
};

/** The body of `job "<id>" { ... }`. */
export const JOB: BlockSpec = {
  attrs: {
    region: "Region:string",
    namespace: "Namespace:string",
    id: "ID:string",
    name: "Name:string",
    type: "Type:string",
    priority: "Priority:int",
    all_at_once: "AllAtOnce:bool",
    datacenters: "Datacenters:strings",
    node_pool: "NodePool:string",
    consul_token: "DiscoveryToken:string",
    vault_token: "SecretsToken:string",
  },
  blocks: {
    constraint: many("Constraints", CONSTRAINT),
    affinity: many("Affinities", AFFINITY),
    group: labelled("TaskGroups", GROUP, "Name"),
    update: one("Update", UPDATE),
    multiregion: one("Multiregion", {
      attrs: {},
      blocks: {
        strategy: one("Strategy", { attrs: { max_parallel: "MaxParallel:int", on_failure: "OnFailure:string" } }),
        region: labelled(
          "Regions",
          {
            attrs: { count: "Count:int", datacenters: "Datacenters:strings", node_pool: "NodePool:string" },
            blocks: { meta: one("Meta", "stringMap") },
          },
          "Name",
        ),
      },
    }),
    spread: many("Spreads", SPREAD),
    periodic: one("Periodic", {
      post: "periodic",
      attrs: {
        enabled: "Enabled:bool",
        cron: "Spec:string",
        crons: "Specs:strings",
        prohibit_overlap: "ProhibitOverlap:bool",
        time_zone: "TimeZone:string",
      },
    }),
    parameterized: one("ParameterizedJob", {
      attrs: {
        payload: "Payload:string",
        meta_required: "MetaRequired:strings",
        meta_optional: "MetaOptional:strings",
      },
    }),
    reschedule: one("Reschedule", RESCHEDULE),
    migrate: one("Migrate", MIGRATE),
    meta: one("Meta", "stringMap"),
    ui: one("UI", "generic"),
    // Job-level `vault` and `task` blocks are handled by the decoder (inherited by tasks / lone groups).
    vault: one("Secrets", SECRETS),
    task: labelled("Tasks", TASK, "Name"),
  },
};
