/** startDevServer with the default modules hands out the scheduler's simulation controls. */
import { describe, expect, it } from "vitest";
import { createSecretsService, startDevServer } from "../../devserver";

describe("startDevServer", () => {
  it("exposes the scheduler control, and its options reach the scheduler", async () => {
    const dev = await startDevServer({ schedulerService: { nodes: { count: 2 } } });
    try {
      expect(dev.schedulerControl).toBeDefined();
      expect(dev.schedulerControl?.nodes()).toHaveLength(2);
    } finally {
      await dev.close();
    }
  });

  it("has no scheduler control when custom services are given", async () => {
    const dev = await startDevServer({ services: [createSecretsService()] });
    try {
      expect(dev.schedulerControl).toBeUndefined();
    } finally {
      await dev.close();
    }
  });
});
