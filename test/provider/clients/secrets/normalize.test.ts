/** The secrets service's names: mount paths and role names. */
import { describe, expect, it } from "vitest";
import { canonicalRoleName, encodeMount, trimMountPath } from "../../../../provider/clients/secrets/normalize";

describe("mount paths and role names", () => {
  it("trims slashes and encodes each segment on its own", () => {
    expect(trimMountPath("/cloud/")).toBe("cloud");
    expect(encodeMount("team/cloud")).toBe("team/cloud");
    expect(encodeMount("a b/c")).toBe("a%20b/c");
  });
  it("lowercases role names", () => {
    expect(canonicalRoleName("Web-App")).toBe("web-app");
  });
});
