import type { LookupAddress, LookupOptions } from "node:dns";

function bare(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/**
 * True for `localhost` and the names under `.localhost` (RFC 6761): the HTTP core connects to them on
 * 127.0.0.1 or ::1 itself (see {@link loopbackLookup}), never through /etc/hosts or DNS, as curl (7.78.0 and
 * later) and the browsers do, so such a name cannot lead off this machine.
 */
export function isLocalhostName(hostname: string): boolean {
  const h = bare(hostname);
  return h === "localhost" || h.endsWith(".localhost");
}

/**
 * The address lookup of a connection to a {@link isLocalhostName} name: 127.0.0.1, then ::1, with no
 * resolver asked (`net.connect`'s `lookup` option).
 */
export function loopbackLookup(
  _hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  const all: LookupAddress[] = [
    { address: "127.0.0.1", family: 4 },
    { address: "::1", family: 6 },
  ].filter((a) => options.family === undefined || options.family === 0 || options.family === a.family);
  const first = all[0] ?? { address: "127.0.0.1", family: 4 };
  if (options.all === true) callback(null, all.length > 0 ? all : [first]);
  else callback(null, first.address, first.family);
}

/**
 * True for a loopback host of a URL (`URL.hostname`): `localhost` (and names under `.localhost`, which the
 * HTTP core connects to on loopback itself), any address in 127.0.0.0/8, and ::1 (also as an IPv4-mapped
 * address).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = bare(hostname);
  if (isLocalhostName(h)) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  // The URL parser writes an IPv4-mapped ::ffff:127.0.0.1 as ::ffff:7f00:1.
  return /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
}
