/**
 * The AuthMount's fields (see ../definition.ts): one line per field; the SDK class, `check`, the diff's key
 * tables, the tune request's wire names and docs/reference/auth-mount.md all come from here.
 */
import { z } from "zod";
import { durationSeconds } from "../../values";
import { mountPathSchema } from "../auth-common";
import type {
  EnableRequestSchema,
  MountConfigSchema,
  MountEntrySchema,
  TuneRequestSchema,
  TuneResponseSchema,
} from "../../schemas/secrets";
import { defineResource, field, type WireNames, type WiredBy } from "../definition";

const duration = z.union([z.number().int().nonnegative(), z.string()]).refine((v) => {
  const s = durationSeconds(v);
  return s !== undefined && s >= 0;
}, 'must be a non-negative duration: seconds, or a string such as "90s", "1h30m" or "768h"');

/** A tune list: an array of strings (no comma-separated form), compared as a set. */
const tuneList = <const W extends string>(doc: string, wire: W) =>
  field.list({ doc, wire, rule: z.array(z.string()), sdkType: "pulumi.Input<string>[]", whenUnset: "leave" });

/** The AuthMount: every field, in the order the SDK and the reference page list them. */
export const authMountDefinition = defineResource({
  name: "AuthMount",
  module: "auth-mount",
  sdkArgsOptional: true,
  doc: "An auth method mount of the secrets service.",
  argsDoc: "Arguments of an {@link AuthMount}.",
  id: "<path>",
  replaceOrder: "delete-first",
  notes:
    "A new `path` moves the mount in place with the service's `sys/remount` (releases 1.10 and later, OpenBao): the accessor, config and roles move with it, and every token issued under the old path is revoked. Where the server has no remount, or `disableRemount` is set, a new path replaces the mount. Replacements delete first (one path holds one mount); the config and roles go with the mount. Only the tune settings the program sets are sent and compared; removing one leaves the service's value as it is. See [Moving a mount](../resources.md#moving-a-mount-remount).",
  fields: {
    path: field.string({
      doc:
        "Path to enable the method at, without slashes (default `cloud`). A change moves the mount in place with " +
        "the service's `sys/remount` (releases 1.10 and later, OpenBao): its accessor, config and roles move with " +
        "it, but every token issued under the old path is revoked and logins must use the new path. Where the " +
        "server has no remount, or `disableRemount` is set, a change replaces the mount (config and roles deleted). " +
        "Pass `mount.path` to AuthConfig and AuthRole so they follow it.",
      outputDoc: "Path of the mount, without slashes.",
      kind: "source",
      rule: mountPathSchema(
        "must be one or more segments of letters, digits, '_', '-' or '.', separated by '/'",
      ).refine((p) => p !== "token", 'the token method at "token/" is built in and cannot be managed'),
      required: true,
      default: "cloud",
      change: "moves (`sys/remount`), or replaces where it cannot",
    }),
    type: field.string({
      doc: "Method type (default `cloud`). A change replaces the mount, deleting its config and roles.",
      outputDoc: "Method type.",
      kind: "source",
      rule: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a method type name such as "cloud"'),
      default: "cloud",
      replaceOnChange: true,
    }),
    description: field.string({
      doc: "Description shown in the mount list; changes in place.",
      wire: "description",
      unsetMeans: "",
    }),
    tune: field.object(
      {
        defaultLeaseTtl: field.duration({
          doc: 'Default lease TTL: seconds, or a duration such as `"1h"`.',
          rule: duration,
          wire: "default_lease_ttl",
          whenUnset: "leave",
        }),
        maxLeaseTtl: field.duration({
          doc: 'Maximum lease TTL: seconds, or a duration such as `"768h"`.',
          rule: duration,
          wire: "max_lease_ttl",
          whenUnset: "leave",
        }),
        listingVisibility: field.enum(["", "hidden", "unauth"], {
          doc: '`""`, `"hidden"` or `"unauth"` (listed in the unauthenticated UI).',
          wire: "listing_visibility",
          unsetMeans: "",
          whenUnset: "leave",
        }),
        tokenType: field.enum(["default-service", "default-batch", "service", "batch"], {
          doc: '`"default-service"`, `"default-batch"`, `"service"` or `"batch"`.',
          wire: "token_type",
          whenUnset: "leave",
        }),
        auditNonHmacRequestKeys: tuneList("Request keys the audit log keeps unhashed.", "audit_non_hmac_request_keys"),
        auditNonHmacResponseKeys: tuneList(
          "Response keys the audit log keeps unhashed.",
          "audit_non_hmac_response_keys",
        ),
        passthroughRequestHeaders: tuneList(
          "Request headers passed through to the method.",
          "passthrough_request_headers",
        ),
        allowedResponseHeaders: tuneList("Response headers the method may set.", "allowed_response_headers"),
      },
      {
        doc: "Tune settings; change in place. Removing one leaves the service's value as it is.",
        kind: "setting",
        whenUnset: "leave",
        types: {
          input: {
            name: "AuthMountTuneArgs",
            doc: "Tune settings of an {@link AuthMount}; only the ones set are managed and compared.",
          },
          output: {
            name: "MountTune",
            doc: "Tune settings of a mount; only the ones set are managed. TTLs are seconds or duration strings.",
          },
        },
      },
      (t, ctx) => {
        if (t.defaultLeaseTtl === undefined || t.maxLeaseTtl === undefined) return;
        const d = durationSeconds(t.defaultLeaseTtl) ?? 0;
        const m = durationSeconds(t.maxLeaseTtl) ?? 0;
        if (m > 0 && d > m)
          ctx.addIssue({ code: "custom", path: ["defaultLeaseTtl"], message: "must not be larger than maxLeaseTtl" });
      },
    ),
    local: field.boolean({
      doc: "Keep the mount local to this cluster (not replicated). A change replaces the mount.",
      wire: "local",
      replaceOnChange: true,
    }),
    sealWrap: field.boolean({
      doc: "Seal-wrap the mount's storage. A change replaces the mount.",
      wire: "seal_wrap",
      replaceOnChange: true,
    }),
    pluginVersion: field.string({
      doc:
        'Plugin version the mount runs, a semantic version such as `"v0.21.0"` (registered in the server\'s ' +
        "plugin catalog). Sent on enable; a change tunes the mount in place and runs after the plugin is " +
        "reloaded. Removing it leaves the mount's version as it is.",
      kind: "setting",
      whenUnset: "leave",
      rule: z
        .string()
        .regex(
          /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/,
          'must be a semantic version such as "v0.21.0"',
        ),
    }),
    disableRemount: field.boolean({
      doc: "Replace the mount on a path change instead of moving it with `sys/remount` (default false).",
    }),
    adopt: field.boolean({
      doc:
        "Take over a method already enabled at `path` instead of failing (`pulumi import` does not work for " +
        "dynamic resources). Only a mount of the same type, local and sealWrap can be adopted.",
    }),
    connection: field.connection("secrets", "writes"),
    accessor: field.string({
      doc: "Accessor of the mount (`auth_<type>_<hex>`), for policies and identity aliases.",
      kind: "output",
      required: true,
    }),
    incomplete: field.boolean({
      doc: "Set when the create did not finish (the enable unconfirmed, or the mount not read back): the next `up` finishes it.",
      kind: "output",
      sdkOutput: false,
    }),
    schemaVersion: field.number({ doc: "The version of the state's shape.", kind: "output", required: true }),
  },
});

/**
 * The mount's wire schemas, written by hand, name every setting above (one they lack fails the typecheck): the
 * enable request and the mount list's entry its settings, the tune request and answer and the entry's `config`
 * its tune settings.
 */
type _Wire = [
  WiredBy<[typeof EnableRequestSchema, typeof MountEntrySchema], WireNames<typeof authMountDefinition>>,
  WiredBy<
    [typeof TuneRequestSchema, typeof TuneResponseSchema, typeof MountConfigSchema],
    WireNames<typeof authMountDefinition, "tune">
  >,
];
