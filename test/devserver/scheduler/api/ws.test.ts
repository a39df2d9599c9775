import { describe, expect, it } from "vitest";
import { acceptKey } from "../../../../devserver/scheduler/api/ws";

describe("acceptKey", () => {
  it("computes the RFC 6455 accept key", () => {
    expect(acceptKey("dGhlIHNhbXBsZSBub25jZQ==")).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  });
});
