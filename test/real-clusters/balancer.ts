/**
 * A round-robin TCP balancer on loopback, as a user's load balancer in front of a three-node cluster: each
 * new connection goes to the next node in turn; a node that refuses the connection is skipped for the next
 * one, and a connection that no node accepts is closed at once (as a balancer with no healthy target does).
 * It forwards bytes only: TLS, HTTP and keep-alive are the client's and the node's business.
 */
import * as net from "node:net";

export interface Balancer {
  /** `http://127.0.0.1:<port>`: the one address the library is given. */
  readonly url: string;
  readonly port: number;
  /** Connections accepted so far and, per target, how many it took. */
  readonly stats: { connections: number; perTarget: Map<string, number> };
  close(): Promise<void>;
}

/** `targets` are `host:port` strings; read on every connection, so a caller may change the list. */
export async function startBalancer(targets: () => readonly string[], port = 0): Promise<Balancer> {
  let next = 0;
  const stats = { connections: 0, perTarget: new Map<string, number>() };
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    stats.connections++;
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    client.pause();
    const list = targets();
    const start = next++;
    const attempt = (tried: number): void => {
      if (tried >= list.length || client.destroyed) {
        client.destroy();
        return;
      }
      const target = list[(start + tried) % list.length] ?? "";
      const [host, p] = splitHostPort(target);
      const upstream = net.connect({ host, port: p });
      let connected = false;
      upstream.on("error", () => {
        if (connected) upstream.destroy();
        else attempt(tried + 1);
      });
      upstream.once("connect", () => {
        connected = true;
        stats.perTarget.set(target, (stats.perTarget.get(target) ?? 0) + 1);
        open.add(upstream);
        upstream.on("close", () => {
          open.delete(upstream);
          client.destroy();
        });
        client.on("close", () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("balancer: no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function splitHostPort(target: string): [string, number] {
  const i = target.lastIndexOf(":");
  return [target.slice(0, i), Number(target.slice(i + 1))];
}
