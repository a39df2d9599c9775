/**
 * One definition per resource: each field is declared once, with its doc, its kind, its zod rule and (for a
 * setting that maps 1:1 onto the service's record) its wire name; everything else is derived from it:
 * - on the provider side: here, the `check` schema ({@link inputsSchema}) and the diff's key tables
 *   ({@link replaceKeys}, {@link settingKeys}); in ./setting-values.ts, what a setting's value means: the
 *   comparisons (`sameValue`), the write body (`wireBody`) and the refresh mapping (`refreshedSetting`);
 * - by `npm run generate` (codegen/; test/generated.test.ts fails while a file is stale): the SDK's `*Args`
 *   interface and its resource class (`sdk/generated/<module>.ts`), the shim (`sdk/shim/<module>.ts`) and its
 *   package export, and the reference page (`docs/reference/<module>.md`).
 *
 * Adding a field to a resource: one line in its definition under ./definitions/, such as
 *   `tokenFoo: field.duration({ doc: "What it does.", wire: "token_foo" }),`
 * then its wire name in the record's wire schemas (provider/schemas/: the definition's `_Wire` type fails the
 * typecheck until each has it), `npm run generate`, the field in the devserver, and a test. A setting with a
 * wire name is checked, diffed, written and refreshed with no further code; a field without one (an alias, a
 * provider option) only needs the code that gives it its meaning.
 *
 * Adding a resource: write ./definitions/<module>.ts with {@link defineResource}, register it in
 * ./definitions/index.ts (the registry), build the provider from the derived pieces and add its `require` to
 * the provider entry's table (../index.ts; the typecheck asks for it), then run `npm run generate`, which
 * writes its SDK class, shim, package export and reference page. A resource that is one record on a service
 * gives its own rules to `recordProvider` (./record.ts), which owns the lifecycle.
 *
 * Kinds: a `source` says which object the resource is or where it lives (a change usually replaces), a
 * `setting` is a value of the object on the service, an `option` steers the provider only (never sent),
 * an `output` is computed by the provider and kept in state. `secret` marks a value kept as a Pulumi secret:
 * the generated SDK wraps a secret input with `pulumi.secret` and lists every secret field among the
 * resource's additional secret outputs (`<name>Options`). An output that is secret only when what it came
 * from was (`secret: "sourced"`) is wrapped by the provider itself, which knows its origin. A value no
 * builder's type fits (a map, a union) is a `field.custom` with its SDK type written out in `sdkType`.
 *
 * A setting is written as its `unsetMeans` (else its type's zero) when the program leaves it out, so the
 * service holds what the program says; `whenUnset` names the two other rules services have: "clear-if-set"
 * (the service keeps a value a write omits: sent empty only to clear one set before) and "leave" (only
 * the values the program sets are written, compared and refreshed).
 */
import { z } from "zod";
import type { ServiceName } from "../errors";
import { StringOrListSchema, cleanList, durationSeconds } from "../values";
import { connectionSchema } from "./connection";

/** The doc of a resource's `connection` input, by service; {@link NEW_SETTINGS_DOC} follows it. */
const CONNECTION_DOC: Readonly<Record<ServiceName, string>> = {
  secrets:
    "The secrets service this lives on, made with `secretsConnection({...})`; default: stack config, then the environment. " +
    "Kept in state, so refresh and destroy reach it even after the program or stack config changed. " +
    "Another address (or secrets namespace) replaces the resource: created there, then deleted here.",
  scheduler:
    "The scheduler this lives on, made with `schedulerConnection({...})`; default: stack config, then the " +
    "environment. Kept in state, so refresh and destroy reach it even after the program or stack config " +
    "changed. Another address replaces the resource: created there, then deleted here.",
};

/**
 * What an update does when only how a resource connects changed (a new token, TLS setting, header style or
 * timeout; the same place): `writes` the object to the service again, `reads` it back and writes nothing, or
 * `state`: stores the new settings and sends no request. test/reference-claims.test.ts holds each resource's
 * to what its update does.
 */
export type NewSettings = "writes" | "reads" | "state";

/** The sentence of a connection's doc and of the reference page's replace rules for each {@link NewSettings}. */
export const NEW_SETTINGS_DOC: Readonly<Record<NewSettings, string>> = {
  writes:
    "A new token, TLS setting, header style or timeout is an update that writes the object to the service again with it.",
  reads:
    "A new token, TLS setting, header style or timeout is an update that reads the object back with it and writes nothing.",
  state:
    "A new token, TLS setting, header style or timeout is an update that only stores it in state: no request is sent.",
};

/** What a field holds; it picks the SDK type, the default rule and how values compare. */
type ValueType = "string" | "number" | "boolean" | "list" | "duration" | "enum" | "connection" | "object" | "custom";

/** The role of a field (see the top of this file). */
type FieldKind = "source" | "setting" | "option" | "output";

/** A plain value the docs can show. */
export type Shown = string | number | boolean | readonly string[];

/** One field of a resource. */
export interface Field<S extends z.ZodType = z.ZodType> {
  readonly type: ValueType;
  readonly kind: FieldKind;
  /** The one doc of the field: the SDK's JSDoc of the input and the output, and the reference page. */
  readonly doc: string;
  /** A different doc for the SDK output property (what state holds, when it differs from the input). */
  readonly outputDoc?: string;
  /** The `check` rule, `.optional()` or `.default()` already applied. */
  readonly schema: S;
  /** The program must set it. */
  readonly required: boolean;
  /** What the field means when the program leaves it out (filled in by `check` for a non-setting). */
  readonly default?: Shown;
  readonly replaceOnChange: boolean;
  readonly secret: boolean;
  /** An output the provider returns as a secret when it came from one (`secret: "sourced"`). */
  readonly sourcedSecret: boolean;
  /** The key in the service's record, for a setting that maps 1:1 onto it. */
  readonly wire?: string;
  /** Applied to each value (each item of a list) before comparing. */
  readonly canonical?: (v: string) => string;
  /** Enum values (an enum's SDK type and docs). */
  readonly values?: readonly string[];
  /** The service of a connection field. */
  readonly service?: ServiceName;
  /** What an update does when a connection field's settings change but not its place. */
  readonly newSettings?: NewSettings;
  /** Declared as an output property of the SDK class. */
  readonly sdkOutput: boolean;
  /** What a change does, for the reference page, where "replaces" or "updates" does not say it. */
  readonly change?: string;
  /** The sub-fields of an object field, and the names and docs of its SDK input and output interfaces. */
  readonly object?: ObjectShape;
  /** The SDK input type inside `pulumi.Input<...>`, written out (a `custom` field's, or one the type's rule does not fit). */
  readonly sdkType?: string;
  /** The SDK output type inside `pulumi.Output<...>`, written out (for a value the provider always resolves). */
  readonly sdkOutputType?: string;
  /** False for an input the SDK class sets itself: not an argument of the SDK's `*Args`. */
  readonly sdkArg: boolean;
  /**
   * What the field means when unset (`check` leaves it unset): documented, compared and written as such for a
   * setting, and applied by the provider where it is used (see {@link unsetDefaults}).
   */
  readonly unsetMeans?: Shown;
  /** False for an input that state does not copy into the outputs (see {@link echoedKeys}). */
  readonly echo: boolean;
  /**
   * How a setting the program leaves out is written and compared (default: written as its unset meaning, so
   * the service holds what the program says). `"clear-if-set"`: the service keeps a value a write omits, so an
   * unset one is omitted, and sent as its unset meaning only to clear a value set before. `"leave"`: only a
   * value the program sets is written, compared and refreshed; leaving it out keeps the service's value.
   */
  readonly whenUnset?: WhenUnset;
}

/** See {@link Field.whenUnset}. */
type WhenUnset = "clear-if-set" | "leave";

/** The sub-fields of an object field and its SDK interfaces. */
export interface ObjectShape {
  readonly fields: Record<string, Field>;
  readonly input: { readonly name: string; readonly doc: string };
  readonly output: { readonly name: string; readonly doc: string };
}

interface FieldOptions<S extends z.ZodType = z.ZodType> {
  doc: string;
  outputDoc?: string;
  /** The rule (default: the type's usual rule). */
  rule?: S;
  kind?: FieldKind;
  required?: boolean;
  default?: Shown;
  replaceOnChange?: boolean;
  secret?: boolean | "sourced";
  wire?: string;
  canonical?: (v: string) => string;
  sdkOutput?: boolean;
  change?: string;
  sdkType?: string;
  sdkOutputType?: string;
  sdkArg?: boolean;
  unsetMeans?: Shown;
  echo?: boolean;
  whenUnset?: WhenUnset;
}

/** The rule of a field: the one given, else the type's usual rule `D`. */
type RuleOf<O, D extends z.ZodType> = O extends { rule: infer S extends z.ZodType } ? S : D;

/** The final schema of a field: the rule as given when required, else with `.default()` or `.optional()`. */
type Final<S extends z.ZodType, O> = O extends { required: true }
  ? S
  : O extends { default: Shown }
    ? z.ZodDefault<S>
    : z.ZodOptional<S>;

/** The kind of a field: as given, else a setting when it has a wire name, else an option. */
type KindOf<O> = O extends { kind: infer K extends FieldKind } ? K : O extends { wire: string } ? "setting" : "option";

/** A field as its builder returns it: its final schema and its kind kept in the type. */
type Built<D extends z.ZodType, O> = Field<Final<RuleOf<O, D>, O>> & { readonly kind: KindOf<O> } & UnsetOf<O> &
  EchoOf<O> &
  WireOf<O>;

/** A field's `unsetMeans`, kept in its type (so {@link unsetDefaults} is typed). */
type UnsetOf<O> = O extends { unsetMeans: infer U extends Shown } ? { readonly unsetMeans: U } : unknown;

/** A field's `echo: false`, kept in its type (so {@link echoedKeys} is typed). */
type EchoOf<O> = O extends { echo: false } ? { readonly echo: false } : unknown;

/** A field's wire name, kept in its type (so {@link WireNames} can hold the wire schemas to the definitions). */
type WireOf<O> = O extends { wire: infer W extends string } ? { readonly wire: W } : unknown;

function make<D extends z.ZodType, O extends FieldOptions<z.ZodType>>(
  type: ValueType,
  usual: D,
  o: O,
  extra: Partial<Field> = {},
): Built<D, O> {
  const rule: z.ZodType = o.rule ?? usual;
  const schema =
    o.required === true ? rule : o.default !== undefined ? rule.default(o.default as never) : rule.optional();
  return {
    type,
    kind: o.kind ?? (o.wire !== undefined ? "setting" : "option"),
    doc: o.doc,
    ...(o.outputDoc !== undefined && { outputDoc: o.outputDoc }),
    schema,
    required: o.required === true,
    ...(o.default !== undefined && { default: o.default }),
    replaceOnChange: o.replaceOnChange === true,
    secret: o.secret === true,
    sourcedSecret: o.secret === "sourced",
    ...(o.wire !== undefined && { wire: o.wire }),
    ...(o.canonical !== undefined && { canonical: o.canonical }),
    sdkOutput: o.sdkOutput ?? true,
    ...(o.change !== undefined && { change: o.change }),
    ...(o.sdkType !== undefined && { sdkType: o.sdkType }),
    ...(o.sdkOutputType !== undefined && { sdkOutputType: o.sdkOutputType }),
    sdkArg: o.sdkArg ?? true,
    ...(o.unsetMeans !== undefined && { unsetMeans: o.unsetMeans }),
    echo: o.echo ?? true,
    ...(o.whenUnset !== undefined && { whenUnset: o.whenUnset }),
    ...extra,
  } as Built<D, O>;
}

const DURATION = z
  .union([z.number().int(), z.string()])
  .refine((v) => durationSeconds(v) !== undefined, 'must be a duration: seconds, or a string such as "90s" or "1h"')
  .refine((v) => (durationSeconds(v) ?? 0) >= 0, "must not be negative");
const LIST = StringOrListSchema.transform(cleanList);

/** The rule of a list whose items must each pass `item`. */
export function listOf(item: z.ZodType<string, string>) {
  return LIST.pipe(z.array(item));
}

/** The field builders, one per {@link ValueType}. */
export const field = {
  string: <const O extends FieldOptions<z.ZodType>>(o: O) => make("string", z.string(), o),
  number: <const O extends FieldOptions<z.ZodType>>(o: O) => make("number", z.number(), o),
  boolean: <const O extends FieldOptions<z.ZodType>>(o: O) => make("boolean", z.boolean(), o),
  /** A list given as an array or a comma-separated string; blanks dropped; compared as a set. */
  list: <const O extends FieldOptions<z.ZodType>>(o: O) => make("list", LIST, o),
  /** Seconds, or a duration string such as "90s" or "1h"; compared in seconds. */
  duration: <const O extends FieldOptions<z.ZodType>>(o: O) => make("duration", DURATION, o),
  /** One of `values`; the first is what an unset setting writes. */
  enum: <const V extends readonly [string, ...string[]], const O extends FieldOptions<z.ZodType>>(values: V, o: O) =>
    make("enum", z.enum(values) as z.ZodEnum<{ [K in V[number]]: K }>, o, { values }),
  /**
   * Where the resource lives: a connection made with `secretsConnection` or `schedulerConnection`, kept in
   * state and never an SDK output; its doc is the service's, then what an update does with new settings
   * (`newSettings`, see {@link NewSettings}).
   */
  connection: <const Svc extends ServiceName>(service: Svc, newSettings: NewSettings) =>
    make(
      "connection",
      connectionSchema(service),
      {
        doc: `${CONNECTION_DOC[service]} ${NEW_SETTINGS_DOC[newSettings]}`,
        sdkOutput: false,
        kind: "source" as const,
      },
      { service, newSettings },
    ),
  /**
   * An object of sub-fields (each made with a builder above; their doc, rule, type and wire name count),
   * unknown keys refused; `refine` adds rules across sub-fields. The SDK gets an input and an output
   * interface of the sub-fields, named in `types`.
   */
  object: <
    const S extends Record<string, Field>,
    const O extends FieldOptions<z.ZodType> & { types: Pick<ObjectShape, "input" | "output"> },
  >(
    fields: S,
    o: O,
    refine?: (value: z.output<z.ZodObject<{ [K in keyof S]: S[K]["schema"] }>>, ctx: z.RefinementCtx) => void,
  ) => {
    const shape = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.schema]));
    const rule = z.strictObject(shape) as unknown as z.ZodObject<{ [K in keyof S]: S[K]["schema"] }, z.core.$strict>;
    const built = make("object", refine === undefined ? rule : rule.superRefine(refine), o, {
      object: { fields, ...o.types },
    });
    // The sub-fields kept in the type, for their wire names (see WireNames).
    return built as Omit<typeof built, "object"> & {
      readonly object: Omit<ObjectShape, "fields"> & { readonly fields: S };
    };
  },
  /** Any value its `rule` takes (an object, a map, a union), with its SDK type written out in `sdkType`. */
  custom: <const O extends FieldOptions<z.ZodType> & { rule: z.ZodType; sdkType: string }>(o: O) =>
    make("custom", o.rule, o),
};

/** The sub-fields of an object field that have wire names: `[key, field]`, in definition order; `K` names the keys. */
export function subSettingKeys<K extends string>(f: Field): [K, Field & { wire: string }][] {
  return Object.entries(f.object?.fields ?? {}).filter(
    (e): e is [K, Field & { wire: string }] => e[1].wire !== undefined,
  );
}

/** A resource's definition: its fields, in the order the SDK and the docs list them. */
export interface ResourceDefinition<F extends Record<string, Field> = Record<string, Field>> {
  /** The class name, such as `AuthRole`. */
  readonly name: string;
  /** The file stem of its SDK class and shim, such as `auth-role`. */
  readonly module: string;
  /** What the resource is (the class's doc). */
  readonly doc: string;
  /** The doc of its `*Args` interface. */
  readonly argsDoc: string;
  /** The form of its ID. */
  readonly id: string;
  /**
   * How the engine replaces it (the diff's `deleteBeforeReplace`): `delete-first` where the new object would
   * take the old one's place (one path holds one mount), `create-first` where a replacement always has another
   * ID. A move to another cluster is always created first. test/reference-claims.test.ts holds it to the diff.
   */
  readonly replaceOrder: "delete-first" | "create-first";
  /** What else replaces it, or how an update is made, in a sentence or two for the reference page. */
  readonly notes?: string;
  /**
   * Import lines the generated SDK file needs for the types `sdkType`/`sdkOutputType` name and the functions
   * `sdkComputed` calls (paths from sdk/generated/).
   */
  readonly sdkImports?: readonly string[];
  /**
   * The inputs the SDK class computes itself (exactly the fields with `sdkArg: false`): per key, a TypeScript
   * expression of the class's `args`. What it calls is hand-written SDK code, imported by `sdkImports`.
   */
  readonly sdkComputed?: Readonly<Record<string, string>>;
  /** The SDK class's `args` may be left out (every argument optional, and none needed). */
  readonly sdkArgsOptional?: boolean;
  readonly fields: F;
}

/** Declares a resource (an identity function that keeps the fields' types). */
export function defineResource<const F extends Record<string, Field>>(d: ResourceDefinition<F>): ResourceDefinition<F> {
  return d;
}

type InputKeys<F> = { [K in keyof F]: F[K] extends { kind: "output" } ? never : K }[keyof F];
type OutputKeys<F> = { [K in keyof F]: F[K] extends { kind: "output" } ? K : never }[keyof F];
type ShapeOf<F, K extends keyof F> = { [P in K]: F[P] extends Field<infer S> ? S : never };

/** The inputs `check` returns, from a definition. */
export type InputsOf<D> =
  D extends ResourceDefinition<infer F> ? z.infer<z.ZodObject<ShapeOf<F, InputKeys<F>>>> : never;
/** The state of a resource: its inputs and its outputs. */
export type OutputsOf<D> =
  D extends ResourceDefinition<infer F> ? InputsOf<D> & z.infer<z.ZodObject<ShapeOf<F, OutputKeys<F>>>> : never;

/** The wire names of the input fields of `F` (those declared with `wire`). */
type WireNamesOf<F> = {
  [K in keyof F]: F[K] extends { kind: "output" }
    ? never
    : F[K] extends { readonly wire: infer W extends string }
      ? W
      : never;
}[keyof F];

/**
 * The wire names of a definition's settings: the keys `wireBody` writes and `refreshedSetting` reads
 * (./setting-values.ts). With `K`, the wire names of the sub-settings of its object field `K` (`subWireBody`'s keys).
 */
export type WireNames<D, K extends string = never> =
  D extends ResourceDefinition<infer F>
    ? [K] extends [never]
      ? WireNamesOf<F>
      : F[K] extends { readonly object: { readonly fields: infer S } }
        ? WireNamesOf<S>
        : never
    : never;

/** The keys of a wire schema's shape (a zod object's, or the one a preprocess step reads into), else of a type. */
type WireKeysOf<S> = S extends { shape: infer X } ? keyof X : S extends { out: { shape: infer X } } ? keyof X : keyof S;

/** The keys every schema (or type) of `S` has. */
type CommonWireKeys<S extends readonly unknown[]> = S extends readonly [infer H, ...infer T]
  ? WireKeysOf<H> & CommonWireKeys<T>
  : PropertyKey;

/**
 * Holds the wire records written by hand (zod schemas of requests and responses, or request types) to a
 * definition: it compiles only when each of `S` has every wire name of `N` (see {@link WireNames}), so a setting
 * added to a definition but forgotten in a wire schema fails the typecheck. The schemas may have more fields
 * (aliases, values set by code, fields the provider does not manage) and stay loose objects. Each definition
 * holds its schemas in a `_Wire` type after it.
 */
export type WiredBy<S extends readonly unknown[], N extends CommonWireKeys<S>> = {
  readonly schemas: S;
  readonly names: N;
};

function entries<F extends Record<string, Field>>(d: ResourceDefinition<F>): [keyof F & string, Field][] {
  return Object.entries(d.fields) as [keyof F & string, Field][];
}

/** The `check` schema: every input field's rule. */
export function inputsSchema<F extends Record<string, Field>>(
  d: ResourceDefinition<F>,
): z.ZodObject<ShapeOf<F, InputKeys<F>>> {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, f] of entries(d)) if (f.kind !== "output") shape[k] = f.schema;
  return z.object(shape) as unknown as z.ZodObject<ShapeOf<F, InputKeys<F>>>;
}

/** The keys whose change replaces the resource, in definition order. */
export function replaceKeys<F extends Record<string, Field>>(d: ResourceDefinition<F>): (InputKeys<F> & string)[] {
  return entries(d)
    .filter(([, f]) => f.replaceOnChange && f.kind !== "output")
    .map(([k]) => k as InputKeys<F> & string);
}

/** The settings that map 1:1 onto the service's record: `[key, field]` with the field's `wire` name set. */
export function settingKeys<F extends Record<string, Field>>(
  d: ResourceDefinition<F>,
): [InputKeys<F> & string, Field & { wire: string }][] {
  return entries(d).filter(
    (e): e is [InputKeys<F> & string, Field & { wire: string }] => e[1].wire !== undefined && e[1].kind !== "output",
  );
}

/**
 * The inputs state copies into the outputs, in definition order: every input but those marked `echo: false`.
 * A new field is echoed unless its definition says otherwise, so no table can leave it out.
 */
export function echoedKeys<F extends Record<string, Field>>(d: ResourceDefinition<F>): (EchoedKeys<F> & string)[] {
  return entries(d)
    .filter(([, f]) => f.kind !== "output" && f.echo)
    .map(([k]) => k as EchoedKeys<F> & string);
}

type EchoedKeys<F> = { [K in InputKeys<F>]: F[K] extends { echo: false } ? never : K }[InputKeys<F>];

/** The keys that say which object the resource is or where it lives (its connection aside), in definition order. */
export function sourceKeys<F extends Record<string, Field>>(d: ResourceDefinition<F>): (InputKeys<F> & string)[] {
  return entries(d)
    .filter(([, f]) => f.kind === "source" && f.type !== "connection")
    .map(([k]) => k as InputKeys<F> & string);
}

type UnsetKeys<F> = { [K in keyof F]: F[K] extends { unsetMeans: Shown } ? K : never }[keyof F];

/** What each field with an `unsetMeans` means when unset, by key. */
export function unsetDefaults<F extends Record<string, Field>>(
  d: ResourceDefinition<F>,
): { readonly [K in UnsetKeys<F>]: F[K] extends { unsetMeans: infer U } ? U : never } {
  const out: Record<string, unknown> = {};
  for (const [k, f] of entries(d)) if (f.unsetMeans !== undefined) out[k] = f.unsetMeans;
  return Object.freeze(out) as { readonly [K in UnsetKeys<F>]: F[K] extends { unsetMeans: infer U } ? U : never };
}
