// Which local address a member uses, and what its listeners bind. Pure: the runtime passes the
// machine's addresses (os.networkInterfaces(), flattened) in; the loader passes the same list to
// refuse `<interfaces>` that match nothing before anything listens.
//
// The choice, in order (docs/config.md "Which address a member uses"):
// 1. `public-address`, when it is an IP address of this machine;
// 2. with `<interfaces enabled="true">`, the first local address, in the order the OS lists them,
//    that matches a pattern; then an exact pattern address inside a loopback network (Linux routes
//    all of 127.0.0.0/8 to `lo` though it lists only 127.0.0.1, so 127.0.0.11 is bindable);
// 3. otherwise the first non-loopback IPv4 address, else 127.0.0.1 (what the member always did).
// Then `grid.socket.bind.any` (default true, as in the reference) decides: true binds every
// listener on 0.0.0.0 and lets the OS pick the source of outgoing member connections; false binds
// every listener on the chosen address only and makes outgoing member connections leave from it.
// The member advertises `public-address` when one is set, else the chosen address.
import { exactAddress, matchesPattern, parseInterfacePattern, parseIpv4, type InterfacePattern } from './interface-pattern.js';

/** One address of one network interface, as os.networkInterfaces() lists it. */
export interface LocalInterface {
  /** The interface's name (`lo`, `eth0`), for logs. */
  readonly name: string;
  readonly address: string;
  readonly family: 'IPv4' | 'IPv6';
  /** A loopback interface. */
  readonly internal: boolean;
  /** `address/prefix-length`, or null when the OS does not say. */
  readonly cidr: string | null;
}

/** The parts of a configuration the choice reads (a Config and a Draft both fit). */
export interface AddressSettings {
  readonly network: {
    readonly publicAddress: string | null;
    readonly interfaces: { readonly enabled: boolean; readonly interfaces: readonly string[] };
  };
  readonly properties: { readonly socketBindAny: boolean };
}

export interface AddressChoice {
  /** The local address this member uses. */
  readonly local: string;
  /** How `local` was picked, in words, for the start-up log. */
  readonly reason: string;
  /** What other members and clients are told: `public-address` when set, else `local`. */
  readonly advertised: string;
  /** The host every listener binds: `0.0.0.0` with grid.socket.bind.any, else `local`. */
  readonly bindHost: string;
  /** Source address of outgoing member connections: null (the OS chooses) with bind-any, else `local`. */
  readonly sourceAddress: string | null;
}

export type AddressResult = { readonly ok: true; readonly choice: AddressChoice } | { readonly ok: false; readonly problem: string };

export const BIND_ANY_HOST = '0.0.0.0';
const LOOPBACK = '127.0.0.1';

export function chooseAddress(settings: AddressSettings, locals: readonly LocalInterface[]): AddressResult {
  const { publicAddress, interfaces } = settings.network;
  // Interfaces are checked even when a local public-address wins: patterns that match nothing are
  // a configuration mistake either way.
  let matched: { address: string; reason: string } | null = null;
  if (interfaces.enabled) {
    const found = matchInterfaces(interfaces.interfaces, locals);
    if (!found.ok) return found;
    matched = found.value;
  }
  const publicHost = publicAddress === null ? null : unbracket(publicAddress);
  let picked: { address: string; reason: string };
  if (publicHost !== null && isLocal(publicHost, locals)) picked = { address: publicHost, reason: `public-address ${publicHost} is an address of this machine` };
  else if (matched !== null) picked = matched;
  else picked = fallback(locals);
  const bindAny = settings.properties.socketBindAny;
  return {
    ok: true,
    choice: {
      local: picked.address,
      reason: picked.reason,
      advertised: publicHost ?? picked.address,
      bindHost: bindAny ? BIND_ANY_HOST : picked.address,
      sourceAddress: bindAny ? null : picked.address,
    },
  };
}

type Found = { readonly ok: true; readonly value: { address: string; reason: string } } | { readonly ok: false; readonly problem: string };

function matchInterfaces(written: readonly string[], locals: readonly LocalInterface[]): Found {
  const patterns: { text: string; pattern: InterfacePattern }[] = [];
  for (const text of written) {
    const parsed = parseInterfacePattern(text);
    // The schema refuses malformed patterns when they are read; this keeps the function total.
    if (!parsed.ok) return { ok: false, problem: `interface ${JSON.stringify(text)} is not ${parsed.expected}` };
    patterns.push({ text, pattern: parsed.value });
  }
  if (patterns.length === 0) return { ok: false, problem: 'interfaces are enabled but no <interface> is listed' };
  for (const l of locals) {
    if (l.family !== 'IPv4') continue;
    const p = patterns.find((x) => matchesPattern(x.pattern, l.address));
    if (p !== undefined) return { ok: true, value: { address: l.address, reason: `interface ${p.text} matches ${l.address} (${l.name})` } };
  }
  for (const p of patterns) {
    const exact = exactAddress(p.pattern);
    if (exact !== null && inLoopbackNetwork(exact, locals)) {
      return { ok: true, value: { address: exact, reason: `interface ${p.text} is in the loopback network` } };
    }
  }
  const listed = locals.filter((l) => l.family === 'IPv4').map((l) => l.address);
  return {
    ok: false,
    problem: `no local address matches ${written.join(', ')} (IPv4 addresses of this machine: ${listed.join(', ') || 'none'}; any exact 127.x.y.z address also works on Linux)`,
  };
}

/** First non-loopback IPv4 address, else 127.0.0.1: what the member advertised before interfaces existed. */
function fallback(locals: readonly LocalInterface[]): { address: string; reason: string } {
  const first = locals.find((l) => l.family === 'IPv4' && !l.internal);
  if (first !== undefined) return { address: first.address, reason: `first non-loopback IPv4 address (${first.name})` };
  return { address: LOOPBACK, reason: 'no non-loopback IPv4 address' };
}

/** Whether `address` (an IP literal, no brackets) belongs to this machine. Host names never do. */
export function isLocal(address: string, locals: readonly LocalInterface[]): boolean {
  const lower = address.toLowerCase();
  return locals.some((l) => l.address.toLowerCase() === lower) || inLoopbackNetwork(address, locals);
}

/** Whether an IPv4 address lies inside the network of a loopback interface (127.0.0.0/8 on Linux). */
function inLoopbackNetwork(address: string, locals: readonly LocalInterface[]): boolean {
  const target = toInt(address);
  if (target === null) return false;
  for (const l of locals) {
    if (!l.internal || l.family !== 'IPv4' || l.cidr === null) continue;
    const slash = l.cidr.indexOf('/');
    const base = toInt(l.cidr.slice(0, slash));
    const bits = Number(l.cidr.slice(slash + 1));
    if (slash < 0 || base === null || !Number.isInteger(bits) || bits < 0 || bits > 32) continue;
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((base & mask) >>> 0) === ((target & mask) >>> 0)) return true;
  }
  return false;
}

function toInt(address: string): number | null {
  const o = parseIpv4(address);
  return o === null ? null : ((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0;
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
