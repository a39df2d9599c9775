/**
 * The pieces provider/resources/definition.ts and setting-values.ts derive from a resource definition, on
 * a small definition with one field of each builder: the `check` schema, the key tables, comparisons, the
 * write body and the refresh rule.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineResource,
  echoedKeys,
  field,
  inputsSchema,
  replaceKeys,
  settingKeys,
  subSettingKeys,
  sourceKeys,
  unsetDefaults,
} from "../../../provider/resources/definition";
import {
  refreshedSetting,
  sameValue,
  settingDiffers,
  shownDefault,
  subWireBody,
  wireBody,
} from "../../../provider/resources/setting-values";

const DEF = defineResource({
  name: "Thing",
  module: "thing",
  doc: "A thing.",
  argsDoc: "Arguments of a thing.",
  id: "<name>",
  replaceOrder: "create-first",
  fields: {
    name: field.string({ doc: "Name.", kind: "source", required: true, replaceOnChange: true }),
    place: field.string({ doc: "Place.", kind: "source", default: "home", replaceOnChange: true }),
    tags: field.list({ doc: "Tags.", wire: "tags" }),
    cidrs: field.list({ doc: "CIDRs.", wire: "cidrs", canonical: (s) => (s.includes("/") ? s : `${s}/32`) }),
    ttl: field.duration({ doc: "TTL.", wire: "ttl" }),
    uses: field.number({ doc: "Uses.", wire: "uses" }),
    off: field.boolean({ doc: "Off.", wire: "off" }),
    mode: field.enum(["plain", "fancy"], { doc: "Mode.", wire: "mode" }),
    adopt: field.boolean({ doc: "Adopt." }),
    version: field.number({ doc: "Version.", kind: "output", required: true }),
  },
});

describe("a resource definition", () => {
  it("check schema: required fields required, defaults filled in, the rest optional, outputs left out", () => {
    const schema = inputsSchema(DEF);
    expect(Object.keys(schema.shape)).not.toContain("version");
    expect(schema.safeParse({}).success).toBe(false);
    expect(schema.parse({ name: "a", tags: "x, ,y", ttl: "1m" })).toEqual({
      name: "a",
      place: "home",
      tags: ["x", "y"],
      ttl: "1m",
    });
    expect(schema.safeParse({ name: "a", ttl: "soon" }).success).toBe(false);
    expect(schema.safeParse({ name: "a", mode: "odd" }).success).toBe(false);
    expect(z.toJSONSchema(schema, { io: "input" }).required).toEqual(["name"]);
  });

  it("key tables: the replacing keys, the settings with their wire names, in definition order", () => {
    expect(replaceKeys(DEF)).toEqual(["name", "place"]);
    expect(settingKeys(DEF).map(([k, f]) => [k, f.wire])).toEqual([
      ["tags", "tags"],
      ["cidrs", "cidrs"],
      ["ttl", "ttl"],
      ["uses", "uses"],
      ["off", "off"],
      ["mode", "mode"],
    ]);
  });

  it("write body: every setting, its zero when unset", () => {
    expect(wireBody(DEF, { name: "a" })).toEqual({ tags: [], cidrs: [], ttl: 0, uses: 0, off: false, mode: "plain" });
    expect(wireBody(DEF, { tags: [" t "], ttl: "2m", uses: 2, off: true, mode: "fancy" })).toMatchObject({
      tags: ["t"],
      ttl: 120,
      uses: 2,
      off: true,
      mode: "fancy",
    });
  });

  it("comparisons by meaning: lists as sets, canonical items, seconds, unset as the zero", () => {
    const f = DEF.fields;
    expect(sameValue(f.tags, ["a", "b"], ["b", "a", "a"])).toBe(true);
    expect(sameValue(f.tags, undefined, [])).toBe(true);
    expect(sameValue(f.tags, ["a"], [])).toBe(false);
    expect(sameValue(f.cidrs, ["10.0.0.1"], ["10.0.0.1/32"])).toBe(true);
    expect(sameValue(f.ttl, "1h", 3600)).toBe(true);
    expect(sameValue(f.ttl, undefined, 0)).toBe(true);
    expect(sameValue(f.uses, undefined, 0)).toBe(true);
    expect(sameValue(f.off, undefined, true)).toBe(false);
    expect(sameValue(f.mode, undefined, "plain")).toBe(true);
    expect(sameValue(f.mode, undefined, "fancy")).toBe(false);
  });

  it("refresh: the program's spelling when it means the same, nothing for an unset zero, else the server's value", () => {
    const [, ttl] = settingKeys(DEF).find(([k]) => k === "ttl") ?? [];
    const [, tags] = settingKeys(DEF).find(([k]) => k === "tags") ?? [];
    if (ttl === undefined || tags === undefined) throw new Error("fields missing");
    expect(refreshedSetting(ttl, "1h", { ttl: 3600 })).toBe("1h");
    expect(refreshedSetting(ttl, undefined, { ttl: 0 })).toBeUndefined();
    expect(refreshedSetting(ttl, "1h", { ttl: 60 })).toBe(60);
    expect(refreshedSetting(tags, undefined, { tags: null })).toBeUndefined();
    expect(refreshedSetting(tags, undefined, { tags: ["x", " "] })).toEqual(["x"]);
  });

  it("documented defaults: the filled-in default, a setting's zero, nothing for an option", () => {
    const f = DEF.fields;
    expect([f.place, f.tags, f.ttl, f.off, f.mode, f.adopt, f.name].map(shownDefault)).toEqual([
      "home",
      [],
      0,
      false,
      "plain",
      undefined,
      undefined,
    ]);
  });

  it("custom fields, unset meanings and the echo: a rule of any shape, a default the provider applies, every input echoed unless marked", () => {
    const d = defineResource({
      name: "Other",
      module: "other",
      doc: "Another thing.",
      argsDoc: "Arguments of another thing.",
      id: "<name>",
      replaceOrder: "create-first",
      fields: {
        name: field.string({ doc: "Name.", kind: "source", required: true, replaceOnChange: true }),
        body: field.custom({
          doc: "Body.",
          kind: "source",
          rule: z.record(z.string(), z.number()),
          sdkType: "Body",
          echo: false,
        }),
        wait: field.boolean({ doc: "Wait.", kind: "setting", unsetMeans: true }),
        mode: field.custom({
          doc: "Mode.",
          kind: "setting",
          rule: z.union([z.literal("a"), z.object({ b: z.string() })]),
          sdkType: '"a" | { b: string }',
          unsetMeans: "a",
        }),
        connection: field.connection("scheduler", "state"),
        hint: field.string({ doc: "Set by the SDK.", sdkArg: false, echo: false }),
        done: field.boolean({ doc: "Done.", kind: "output" }),
      },
    });
    const schema = inputsSchema(d);
    expect(schema.parse({ name: "n", body: { x: 1 }, mode: { b: "c" } })).toEqual({
      name: "n",
      body: { x: 1 },
      mode: { b: "c" },
    });
    expect(schema.safeParse({ name: "n", body: { x: "1" } }).success).toBe(false);
    // `check` leaves an unset meaning unset; the provider reads it from the table.
    expect(schema.parse({ name: "n" })).toEqual({ name: "n" });
    expect(unsetDefaults(d)).toEqual({ wait: true, mode: "a" });
    expect([d.fields.wait, d.fields.mode, d.fields.body].map(shownDefault)).toEqual([true, "a", undefined]);
    expect(d.fields.body.sdkType).toBe("Body");
    expect(d.fields.hint.sdkArg).toBe(false);
    expect(echoedKeys(d)).toEqual(["name", "wait", "mode", "connection"]);
    expect(sourceKeys(d)).toEqual(["name", "body"]);
    expect(sourceKeys(DEF)).toEqual(["name", "place"]);
    expect(echoedKeys(DEF)).toEqual(Object.keys(DEF.fields).filter((k) => k !== "version"));
  });
});

describe("an object field and a setting with a service default", () => {
  const BOX = defineResource({
    name: "Box",
    module: "box",
    doc: "A box.",
    argsDoc: "Arguments of a box.",
    id: "<name>",
    replaceOrder: "create-first",
    fields: {
      limits: field.object(
        {
          low: field.duration({ doc: "Low.", wire: "low" }),
          high: field.duration({ doc: "High.", wire: "high" }),
          names: field.list({ doc: "Names.", wire: "names", rule: z.array(z.string()), sdkType: "string[]" }),
          note: field.string({ doc: "Note." }),
        },
        {
          doc: "Limits.",
          kind: "setting",
          types: { input: { name: "LimitsArgs", doc: "L." }, output: { name: "Limits", doc: "L." } },
        },
        (v, ctx) => {
          if ((v.low ?? 0) === 7) ctx.addIssue({ code: "custom", path: ["low"], message: "not seven" });
        },
      ),
      retries: field.number({ doc: "Retries.", wire: "retries", unsetMeans: 3 }),
      delay: field.duration({ doc: "Delay.", wire: "delay", unsetMeans: 4 }),
      label: field.string({ doc: "Label.", wire: "label", unsetMeans: "" }),
    },
  });

  it("check: sub-fields checked, unknown keys and the cross-field rule refused, a service default not filled in", () => {
    const schema = inputsSchema(BOX);
    expect(schema.parse({ limits: { low: "1m", names: ["a"] } })).toEqual({ limits: { low: "1m", names: ["a"] } });
    expect(schema.safeParse({ limits: { low: "soon" } }).success).toBe(false);
    expect(schema.safeParse({ limits: { lower: 1 } }).success).toBe(false);
    expect(schema.safeParse({ limits: { low: 7 } }).error?.issues[0]).toMatchObject({
      path: ["limits", "low"],
      message: "not seven",
    });
    expect(schema.parse({})).toEqual({});
  });

  it("sub-fields with wire names, in order; the service default compared, written and documented", () => {
    expect(subSettingKeys(BOX.fields.limits).map(([k, f]) => [k, f.wire, f.type])).toEqual([
      ["low", "low", "duration"],
      ["high", "high", "duration"],
      ["names", "names", "list"],
    ]);
    const f = BOX.fields;
    expect(sameValue(f.retries, undefined, 3)).toBe(true);
    expect(sameValue(f.retries, undefined, 0)).toBe(false);
    expect(sameValue(f.delay, undefined, "4s")).toBe(true);
    expect(sameValue(f.delay, "0s", undefined)).toBe(false);
    expect(sameValue(f.label, undefined, "")).toBe(true);
    expect(wireBody(BOX, {})).toEqual({ retries: 3, delay: 4, label: "" });
    expect([f.retries, f.delay, f.label].map(shownDefault)).toEqual([3, 4, ""]);
  });
});

describe("whenUnset: how a setting the program leaves out is written, compared and refreshed", () => {
  const KEPT = defineResource({
    name: "Kept",
    module: "kept",
    doc: "Settings the service keeps when a write omits them.",
    argsDoc: "Arguments of a kept.",
    id: "<name>",
    replaceOrder: "create-first",
    fields: {
      always: field.number({ doc: "Always.", wire: "always", unsetMeans: 3 }),
      label: field.string({ doc: "Label.", wire: "label", unsetMeans: "", whenUnset: "clear-if-set" }),
      ttl: field.duration({ doc: "TTL.", wire: "ttl", unsetMeans: 3600, whenUnset: "clear-if-set" }),
      tags: field.list({ doc: "Tags.", wire: "tags", whenUnset: "leave" }),
      grace: field.duration({ doc: "Grace.", wire: "grace", whenUnset: "leave" }),
    },
  });
  const f = KEPT.fields;

  it('"clear-if-set": omitted unless set before, then sent as its unset meaning; set, sent', () => {
    expect(wireBody(KEPT, {})).toEqual({ always: 3 });
    expect(wireBody(KEPT, {}, { label: "", ttl: undefined })).toEqual({ always: 3 });
    expect(wireBody(KEPT, {}, { label: "x", ttl: 0 })).toEqual({ always: 3, label: "", ttl: 3600 });
    expect(wireBody(KEPT, { label: "y", ttl: "2h" })).toEqual({ always: 3, label: "y", ttl: 7200 });
    expect(sameValue(f.label, undefined, "")).toBe(true);
    expect(sameValue(f.ttl, undefined, 3600)).toBe(true);
  });

  it('"leave": only a value the program sets is written and compared; unset is never a change', () => {
    expect(wireBody(KEPT, { tags: [" a ", ""], grace: "1m" }, { tags: ["b"] })).toMatchObject({
      tags: ["a"],
      grace: 60,
    });
    expect(wireBody(KEPT, {}, { tags: ["b"], grace: 5 })).not.toHaveProperty("tags");
    expect(
      subWireBody(
        field.object(
          { tags: f.tags, grace: f.grace },
          {
            doc: "Box.",
            kind: "setting",
            types: { input: { name: "A", doc: "A." }, output: { name: "B", doc: "B." } },
          },
        ),
        { grace: 0 },
      ),
    ).toEqual({
      grace: 0,
    });
    expect(sameValue(f.grace, 0, undefined)).toBe(false);
    expect(sameValue(f.grace, undefined, undefined)).toBe(true);
    expect(sameValue(f.grace, "1m", 60)).toBe(true);
    expect(settingDiffers(f.grace, undefined, 60)).toBe(false);
    expect(settingDiffers(f.grace, 0, undefined)).toBe(true);
    expect(settingDiffers(f.ttl, undefined, 60)).toBe(true);
    expect(settingDiffers(f.ttl, undefined, "1h")).toBe(false);
  });

  it("refresh: a value the record lacks is the unset meaning; a left-out setting stays unset", () => {
    const [, ttl] = settingKeys(KEPT).find(([k]) => k === "ttl") ?? [];
    const [, grace] = settingKeys(KEPT).find(([k]) => k === "grace") ?? [];
    if (ttl === undefined || grace === undefined) throw new Error("no ttl or grace");
    expect(refreshedSetting(ttl, "1h", {})).toBe("1h");
    expect(refreshedSetting(ttl, undefined, {})).toBeUndefined();
    expect(refreshedSetting(ttl, "2h", {})).toBe(3600);
    expect(refreshedSetting(grace, undefined, { grace: 60 })).toBeUndefined();
    expect(refreshedSetting(grace, "1m", { grace: 60 })).toBe("1m");
    expect(refreshedSetting(grace, "1m", { grace: 90 })).toBe(90);
  });
});
