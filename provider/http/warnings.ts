/**
 * The provider's one way of printing a warning: a `warning: ` line on stderr, which the Pulumi CLI shows
 * (a dynamic provider host has no logger of its own; see resources/host-log.ts). Resources and the HTTP
 * core both print through here. Never pass secret values.
 */

const shown = new Set<string>();

/** Writes a warning to stderr, where the Pulumi CLI (or a program's console) shows it. */
export function printWarning(message: string): void {
  console.error(`warning: ${message}`);
}

/** Writes a warning once per process for each `key` (e.g. once per address). */
export function printWarningOnce(key: string, message: string): void {
  if (shown.has(key)) return;
  shown.add(key);
  printWarning(message);
}

/**
 * True for a loopback host of a URL (`URL.hostname`): `localhost` (and names under `.localhost`), any
 * address in 127.0.0.0/8, and ::1 (also as an IPv4-mapped address).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  // The URL parser writes an IPv4-mapped ::ffff:127.0.0.1 as ::ffff:7f00:1.
  return /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
}
