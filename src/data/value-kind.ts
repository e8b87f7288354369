// How a stored value (bytes plus an optional content type) reads to an official client, as a kind:
// 'text' (a String), 'json' (a HazelcastJsonValue), 'serialized' (another serialized type a client
// wrote, kept whole) or 'bytes' (a byte[]). The client protocol's value mapping (spec/client.md
// "Keys and values") is built on it, and so is the equality of the conditional map writes
// (replaceIfSame, removeIfSame): two stored values are the same when their bytes are equal and they
// read as the same kind, which is exactly when a client would see two equal serialized values.
// I/O-free.
import { isUtf8 } from 'node:buffer';

export type ValueKind = 'text' | 'json' | 'serialized' | 'bytes';

/** The content type under which a client's value of a type Grid does not name is kept (its Data bytes). */
export const CONTENT_TYPE_SERIALIZED = 'application/x-grid-serialized';
/** The Data header (partition hash, serializer type id): a serialized value is at least this long. */
export const SERIALIZED_HEADER_BYTES = 8;

/**
 * 'text' for text/plain whose charset (if any) names UTF-8 or US-ASCII, 'json' for
 * application/json (any charset parameter), null for anything else. Content types are compared without
 * case; parameters other than charset are ignored. Memoized per content type: a member stores a
 * handful of distinct types (they are interned per map service), and every client read of a value
 * asks.
 */
export function textKind(contentType: string): 'text' | 'json' | null {
  const known = textKinds.get(contentType);
  if (known !== undefined) return known;
  const kind = parseTextKind(contentType);
  // Bounded: a client writing ever new content types cannot grow it past TEXT_KINDS_MAX.
  if (textKinds.size >= TEXT_KINDS_MAX) textKinds.clear();
  textKinds.set(contentType, kind);
  return kind;
}

/** Content types whose kind is remembered at a time. */
const TEXT_KINDS_MAX = 256;
const textKinds = new Map<string, 'text' | 'json' | null>();

function parseTextKind(contentType: string): 'text' | 'json' | null {
  const parts = contentType.split(';');
  const media = (parts[0] as string).trim().toLowerCase();
  // spec/client.md: application/json with a valid UTF-8 body is a HazelcastJsonValue whatever its
  // charset parameter says (JSON is UTF-8, RFC 8259 §8.1); only text/plain must name UTF-8 or US-ASCII.
  if (media === 'application/json') return 'json';
  const kind = media === 'text/plain' ? 'text' : null;
  if (kind === null) return null;
  for (let i = 1; i < parts.length; i++) {
    const eq = (parts[i] as string).indexOf('=');
    if (eq < 0) continue;
    const name = (parts[i] as string).slice(0, eq).trim().toLowerCase();
    if (name !== 'charset') continue;
    let value = (parts[i] as string).slice(eq + 1).trim().toLowerCase();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value !== 'utf-8' && value !== 'utf8' && value !== 'us-ascii') return null;
  }
  return kind;
}

/** The kind a client reads this stored value as. */
export function valueKind(value: Uint8Array, contentType: string | null): ValueKind {
  if (contentType === null) return 'bytes';
  if (contentType === CONTENT_TYPE_SERIALIZED) return value.length >= SERIALIZED_HEADER_BYTES ? 'serialized' : 'bytes';
  const kind = textKind(contentType);
  return kind !== null && isUtf8(value) ? kind : 'bytes';
}

/** Whether two stored values are the same value to a client: equal bytes, read as the same kind. */
export function sameValue(a: Uint8Array, aType: string | null, b: Uint8Array, bType: string | null): boolean {
  if (a.length !== b.length || Buffer.compare(a, b) !== 0) return false;
  return aType === bType || valueKind(a, aType) === valueKind(b, bType);
}
