// The addresses a joining member tries, from the tcp-ip member list (cluster.md "Join and
// membership"): `host` means the base port and the next two (like the reference's port try count of
// 3), `host:port` one address, `host:p1-p2` every port of the range (at most PORTS_PER_ENTRY_MAX).
// Duplicates are dropped; the order of the list is kept.

export const BASE_PORT_TRIES = 3;
export const PORTS_PER_ENTRY_MAX = 100;

export function expandJoinAddresses(members: readonly string[], basePort: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (host: string, port: number): void => {
    const a = `${host}:${port}`;
    if (!seen.has(a)) {
      seen.add(a);
      out.push(a);
    }
  };
  for (const raw of members) {
    const s = raw.trim();
    const { host, ports } = split(s);
    if (ports === null) {
      for (let i = 0; i < BASE_PORT_TRIES && basePort + i <= 65535; i++) add(host, basePort + i);
      continue;
    }
    const dash = ports.indexOf('-');
    const from = Number(dash < 0 ? ports : ports.slice(0, dash));
    const to = dash < 0 ? from : Number(ports.slice(dash + 1));
    for (let p = from; p <= to && p - from < PORTS_PER_ENTRY_MAX; p++) add(host, p);
  }
  return out;
}

function split(s: string): { host: string; ports: string | null } {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    const host = s.slice(1, close);
    const rest = s.slice(close + 1);
    return { host, ports: rest.startsWith(':') ? rest.slice(1) : null };
  }
  const colon = s.lastIndexOf(':');
  if (colon < 0 || s.indexOf(':') !== colon) return { host: s, ports: null };
  return { host: s.slice(0, colon), ports: s.slice(colon + 1) };
}
