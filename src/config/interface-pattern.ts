// `<interfaces><interface>` patterns: which local IPv4 address a member uses. A pattern has exactly
// four dot-separated parts, each a number 0..255, `*` (any value) or a rising range `4-18`, as in
// the reference: `10.0.*.*`, `10.3.10.4-18`, `192.168.1.7`. IPv6 patterns are not accepted (they
// are refused at load, never silently ignored). Pure: strings in, answers out.
import type { Parsed } from './values.js';

/** The values one part of an address may take, both ends included. */
export interface OctetRange {
  readonly from: number;
  readonly to: number;
}

export type InterfacePattern = readonly [OctetRange, OctetRange, OctetRange, OctetRange];

export const INTERFACE_PATTERN_EXPECTED =
  'an IPv4 address pattern: four parts separated by dots, each 0..255, * or a rising range such as 4-18 (e.g. 10.0.*.*, 10.3.10.4-18)';

/** A decimal octet without leading zeros (`010` would read as octal in some tools: refused). */
const OCTET = /^(0|[1-9][0-9]{0,2})$/;

export function parseInterfacePattern(raw: string): Parsed<InterfacePattern> {
  const parts = raw.trim().split('.');
  const no: Parsed<InterfacePattern> = { ok: false, expected: INTERFACE_PATTERN_EXPECTED };
  if (parts.length !== 4) return no;
  const ranges: OctetRange[] = [];
  for (const part of parts) {
    const range = parsePart(part);
    if (range === null) return no;
    ranges.push(range);
  }
  return { ok: true, value: ranges as unknown as InterfacePattern };
}

/** A pattern as written (trimmed), once it parses: what the Config keeps. */
export function parseInterfaceText(raw: string): Parsed<string> {
  const parsed = parseInterfacePattern(raw);
  return parsed.ok ? { ok: true, value: raw.trim() } : parsed;
}

function parsePart(part: string): OctetRange | null {
  if (part === '*') return { from: 0, to: 255 };
  const dash = part.indexOf('-');
  if (dash < 0) {
    const n = octet(part);
    return n === null ? null : { from: n, to: n };
  }
  const from = octet(part.slice(0, dash));
  const to = octet(part.slice(dash + 1));
  return from === null || to === null || from > to ? null : { from, to };
}

function octet(s: string): number | null {
  if (!OCTET.test(s)) return null;
  const n = Number(s);
  return n <= 255 ? n : null;
}

/** The four octets of a dotted IPv4 address, or null for anything else (IPv6, host names). */
export function parseIpv4(address: string): [number, number, number, number] | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    const n = octet(p);
    if (n === null) return null;
    out.push(n);
  }
  return out as [number, number, number, number];
}

export function matchesPattern(pattern: InterfacePattern, address: string): boolean {
  const octets = parseIpv4(address);
  if (octets === null) return false;
  for (let i = 0; i < 4; i++) {
    const r = pattern[i] as OctetRange;
    const n = octets[i] as number;
    if (n < r.from || n > r.to) return false;
  }
  return true;
}

/** The one address a pattern without `*` or ranges names, else null. */
export function exactAddress(pattern: InterfacePattern): string | null {
  if (pattern.some((r) => r.from !== r.to)) return null;
  return pattern.map((r) => r.from).join('.');
}
