// Value parsers shared by the XML schema, environment variables and flags. Each returns either the
// value or a description of what was expected, so every source can wrap the same words with its own
// location (file:line:column, variable name or flag): `expected an integer 0..6, got "x"`.
import { suggest } from './did-you-mean.js';

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly expected: string };

export const INT_MAX = 2147483647;

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const no = <T>(expected: string): Parsed<T> => ({ ok: false, expected });

/** A decimal integer in [min, max]; surrounding whitespace is ignored. */
export function parseInteger(raw: string, min: number, max: number): Parsed<number> {
  const s = raw.trim();
  const range = max === INT_MAX ? `an integer >= ${min}` : `an integer ${min}..${max}`;
  if (s.length > 12 || !/^[+-]?[0-9]+$/.test(s)) return no(range);
  const n = Number(s);
  return n >= min && n <= max ? ok(n) : no(range);
}

export function parsePort(raw: string, min: 0 | 1): Parsed<number> {
  const n = parseInteger(raw, min, 65535);
  return n.ok ? n : no(`a port ${min}..65535`);
}

/** `true` or `false`, in any letter case. */
export function parseBoolean(raw: string): Parsed<boolean> {
  const s = raw.trim().toLowerCase();
  if (s === 'true') return ok(true);
  if (s === 'false') return ok(false);
  return no('true or false');
}

/** One of `values` in any letter case, returned as listed; `aliases` map other spellings to a value. */
export function parseEnum<T extends string>(
  raw: string,
  values: readonly T[],
  aliases: Readonly<Record<string, T>> = {},
): Parsed<T> {
  const s = raw.trim().toUpperCase();
  const found = values.find((v) => v.toUpperCase() === s) ?? (Object.hasOwn(aliases, s) ? aliases[s] : undefined);
  if (found !== undefined) return ok(found);
  const hint = suggest(raw.trim(), values);
  return no(`one of ${values.join(', ')}${hint === null ? '' : ` (did you mean ${hint}?)`}`);
}

/** A name (cluster, instance, map, ...): non-empty after trimming, printable, at most 255 characters. */
/** Names travel in member-protocol handshakes, whose fields are limited in UTF-8 bytes. */
const NAME_BYTES_MAX = 255;
const utf8 = new TextEncoder();

export function parseName(raw: string): Parsed<string> {
  const s = raw.trim();
  // eslint-disable-next-line no-control-regex
  if (s.length === 0 || utf8.encode(s).length > NAME_BYTES_MAX || /[\u0000-\u001f\u007f]/.test(s)) {
    return no(`a non-empty name of at most ${NAME_BYTES_MAX} bytes (UTF-8) of printable characters`);
  }
  return ok(s);
}

/** A map or queue name: a name with at most one `*` wildcard. */
export function parseStructureName(raw: string): Parsed<string> {
  const name = parseName(raw);
  if (!name.ok) return name;
  const stars = name.value.split('*').length - 1;
  return stars <= 1 ? name : no('a name with at most one "*" wildcard');
}

/** A host name or IP address: no spaces, no slashes; IPv6 may be bracketed. */
export function parseHost(raw: string): Parsed<string> {
  const s = raw.trim();
  if (s.length === 0 || s.length > 255 || !/^(\[[0-9a-fA-F:.%\w]+\]|[0-9a-zA-Z._:%-]+)$/.test(s)) return no('a host name or IP address');
  return ok(s);
}

/**
 * A join member as written in a member list: `host`, `host:port`, `host:p1-p2`, with IPv6 as
 * `[addr]`, `[addr]:port` or a bare address without port.
 */
export function parseMemberAddress(raw: string): Parsed<string> {
  const s = raw.trim();
  const expected = 'host, host:port or host:port1-port2';
  const split = splitHostPort(s);
  if (split === null || !parseHost(split.host).ok) return no(expected);
  if (split.ports === null) return ok(s);
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(split.ports);
  if (m === null) return no(expected);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from < 1 || to > 65535 || from > to) return no(`${expected} with ports 1..65535 in rising order`);
  return ok(s);
}

/** A WAN target endpoint: `host:port`. */
export function parseEndpoint(raw: string): Parsed<string> {
  const s = raw.trim();
  const split = splitHostPort(s);
  if (split === null || split.ports === null || !parseHost(split.host).ok || !parsePort(split.ports, 1).ok) return no('host:port');
  return ok(s);
}

function splitHostPort(s: string): { host: string; ports: string | null } | null {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0) return null;
    const rest = s.slice(close + 1);
    if (rest === '') return { host: s, ports: null };
    return rest.startsWith(':') ? { host: s.slice(0, close + 1), ports: rest.slice(1) } : null;
  }
  const colons = s.split(':').length - 1;
  if (colons === 0) return { host: s, ports: null };
  if (colons > 1) return { host: s, ports: null }; // a bare IPv6 address
  const i = s.indexOf(':');
  return { host: s.slice(0, i), ports: s.slice(i + 1) };
}

/** Splits a list on commas, semicolons and whitespace, dropping empty items. */
export function splitList(raw: string): string[] {
  return raw.split(/[,;\s]+/).filter((s) => s.length > 0);
}

/** How a bad value is quoted in a message: JSON-escaped (one line, visible whitespace), shortened. */
export function quoteGot(raw: string): string {
  const shown = raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
  return JSON.stringify(shown);
}

export function expectedGot(expected: string, raw: string): string {
  return `expected ${expected}, got ${quoteGot(raw)}`;
}
