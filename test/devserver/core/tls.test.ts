import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestCertificates, startServiceHost, type DevServer, type ServiceModule } from "../../../devserver/core";

const hello: ServiceModule = {
  name: "secrets",
  routes: (r) => r.get("/v1/hello", () => ({ json: { ok: true } }), { auth: false }),
};
const certs = createTestCertificates();
const stranger = createTestCertificates("another CA");

async function get(url: string, connect: Record<string, string>): Promise<number> {
  const agent = new Agent({ connect });
  try {
    const res = await request(url, { dispatcher: agent });
    await res.body.text();
    return res.statusCode;
  } finally {
    await agent.close();
  }
}

describe("TLS", () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startServiceHost({ services: [hello], tls: { cert: certs.server.cert, key: certs.server.key } });
  });
  afterAll(() => server.close());

  it("serves HTTPS that a client trusting the CA accepts", async () => {
    expect(server.urls.secrets).toMatch(/^https:\/\/127\.0\.0\.1:/);
    expect(await get(`${server.urls.secrets}/v1/hello`, { ca: certs.ca.cert })).toBe(200);
    expect(await get(`${server.urls.secrets.replace("127.0.0.1", "localhost")}/v1/hello`, { ca: certs.ca.cert })).toBe(
      200,
    );
  });

  it("is rejected by a client that does not trust the CA", async () => {
    await expect(get(`${server.urls.secrets}/v1/hello`, { ca: stranger.ca.cert })).rejects.toThrow(/certificate/i);
  });
});

describe("mutual TLS", () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startServiceHost({
      services: [hello],
      tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert, requestClientCert: true },
    });
  });
  afterAll(() => server.close());

  it("accepts a client certificate signed by the CA", async () => {
    expect(
      await get(`${server.urls.secrets}/v1/hello`, {
        ca: certs.ca.cert,
        cert: certs.client.cert,
        key: certs.client.key,
      }),
    ).toBe(200);
  });

  it("refuses a client without a certificate", async () => {
    await expect(get(`${server.urls.secrets}/v1/hello`, { ca: certs.ca.cert })).rejects.toThrow();
    expect(server.requestLog).toHaveLength(1);
  });

  it("refuses a client certificate from another CA", async () => {
    await expect(
      get(`${server.urls.secrets}/v1/hello`, {
        ca: certs.ca.cert,
        cert: stranger.client.cert,
        key: stranger.client.key,
      }),
    ).rejects.toThrow();
    expect(server.requestLog).toHaveLength(1);
  });
});
