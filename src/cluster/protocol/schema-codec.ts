// A schema-driven binary codec for member-protocol payloads. A message body is described once, as a
// plain schema value (messages.ts); the TypeScript type of the body is derived from the schema and the
// encoder and decoder walk the same schema, so the three cannot drift apart.
//
// Encoding is positional, big-endian, with no field names or tags on the wire:
//   'u8' 1 byte · 'u16' 2 · 'u32' 4 · 'i32' 4 · 'u53' 8 (u64 BE, at most 2^53 - 1) · 'f64' 8 (IEEE BE)
//   'bool' 1 byte (0 or 1) · 'str' u32 length + UTF-8 (at most STRING_BYTES_MAX)
//   'bytes' u32 length + raw bytes (bounded by the frame) · 'strOrNull' u8 presence + 'str'
//   [S] u32 count + items (count at most the bytes left, so a lying count fails fast)
//   { a: S1, b: S2 } the fields in declaration order
// Invariants: every read is bounds-checked (ERR_PROTOCOL_MALFORMED); trailing bytes are malformed;
// decoded 'bytes' are copies (a frame can be released at once); encoding a value
// that does not fit its schema is a programmer error (assertion). Changing a schema changes the wire
// format: add a new message type instead (message-types.ts is append-only).
import { assert } from '../../util/assert.js';
import { ByteReader, ByteWriter } from '../../util/bytes.js';

export const STRING_BYTES_MAX = 64 * 1024;
const BYTES_MAX = 0x7fff_ffff;

export type Scalar = 'u8' | 'u16' | 'u32' | 'i32' | 'u53' | 'f64' | 'bool' | 'str' | 'bytes' | 'strOrNull';
export type Schema = Scalar | readonly [Schema] | { readonly [field: string]: Schema };

export type TypeOf<S> = S extends 'u8' | 'u16' | 'u32' | 'i32' | 'u53' | 'f64'
  ? number
  : S extends 'bool'
    ? boolean
    : S extends 'str'
      ? string
      : S extends 'strOrNull'
        ? string | null
        : S extends 'bytes'
          ? Uint8Array
          : S extends readonly [infer E]
            ? readonly TypeOf<E>[]
            : S extends { readonly [field: string]: Schema }
              ? { readonly [K in keyof S]: TypeOf<S[K]> }
              : never;

export function encodeWith<S extends Schema>(schema: S, value: TypeOf<S>, initialBytes = 128): Buffer {
  const w = new ByteWriter(initialBytes);
  write(w, schema, value, '');
  return w.finish();
}

export function decodeWith<S extends Schema>(schema: S, payload: Uint8Array, what: string): TypeOf<S> {
  const r = new ByteReader(payload);
  const value = read(r, schema, what);
  r.expectEnd(what);
  return value as TypeOf<S>;
}

function write(w: ByteWriter, schema: Schema, value: unknown, path: string): void {
  if (typeof schema === 'string') {
    writeScalar(w, schema, value, path);
    return;
  }
  if (Array.isArray(schema)) {
    assert(Array.isArray(value), `${path}: expected an array`);
    const item = schema[0] as Schema;
    w.u32(value.length);
    for (let i = 0; i < value.length; i++) write(w, item, value[i], path);
    return;
  }
  assert(typeof value === 'object' && value !== null, `${path}: expected an object`);
  const record = value as Record<string, unknown>;
  for (const field of Object.keys(schema)) write(w, (schema as Record<string, Schema>)[field] as Schema, record[field], `${path}.${field}`);
}

function writeScalar(w: ByteWriter, s: Scalar, v: unknown, path: string): void {
  switch (s) {
    case 'u8':
    case 'u16':
    case 'u32':
    case 'i32':
    case 'u53':
      assert(typeof v === 'number' && Number.isInteger(v), `${path}: expected an integer, got ${String(v)}`);
      if (s === 'u8') w.u8(v);
      else if (s === 'u16') w.u16(v);
      else if (s === 'u32') w.u32(v);
      else if (s === 'i32') w.i32(v);
      else w.u64(v);
      return;
    case 'f64':
      assert(typeof v === 'number' && !Number.isNaN(v), `${path}: expected a number`);
      w.f64(v);
      return;
    case 'bool':
      assert(typeof v === 'boolean', `${path}: expected a boolean`);
      w.bool(v);
      return;
    case 'str':
      assert(typeof v === 'string', `${path}: expected a string`);
      w.string(v, STRING_BYTES_MAX);
      return;
    case 'strOrNull':
      assert(v === null || typeof v === 'string', `${path}: expected a string or null`);
      w.bool(v !== null);
      if (v !== null) w.string(v as string, STRING_BYTES_MAX);
      return;
    case 'bytes':
      assert(v instanceof Uint8Array, `${path}: expected bytes`);
      w.bytes(v, BYTES_MAX);
      return;
  }
}

function read(r: ByteReader, schema: Schema, path: string): unknown {
  if (typeof schema === 'string') return readScalar(r, schema, path);
  if (Array.isArray(schema)) {
    const item = schema[0] as Schema;
    // Every item takes at least one byte, so a count above the bytes left is a lie.
    const n = r.count(r.remaining, `${path} item count`);
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = read(r, item, path);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const field of Object.keys(schema)) out[field] = read(r, (schema as Record<string, Schema>)[field] as Schema, `${path}.${field}`);
  return out;
}

function readScalar(r: ByteReader, s: Scalar, path: string): unknown {
  switch (s) {
    case 'u8':
      return r.u8();
    case 'u16':
      return r.u16();
    case 'u32':
      return r.u32();
    case 'i32':
      return r.i32();
    case 'u53':
      return r.u64();
    case 'f64':
      return r.f64();
    case 'bool':
      return r.bool();
    case 'str':
      return r.string(STRING_BYTES_MAX, path);
    case 'strOrNull':
      return r.bool() ? r.string(STRING_BYTES_MAX, path) : null;
    case 'bytes':
      return r.bytes(BYTES_MAX, path);
  }
}
