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
//
// Speed: each schema is compiled once into a straight-line encoder and decoder (generated source,
// one function per schema, cached): no per-field dispatch or lookup of the schema's keys at run time,
// decoded objects built by one literal (one hidden class), and error paths built only when a check
// fails. The generated source comes from our own schema constants only (field names are quoted with
// JSON.stringify), never from input. tests/unit/schema-codec.test.ts checks it byte for byte against
// a plain walk of the schema.
import { AssertionError } from '../../util/assert.js';
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

type Encoder = (w: ByteWriter, value: unknown) => void;
type Decoder = (r: ByteReader) => unknown;

type Sizer = (value: unknown) => number;

const encoders = new Map<Schema, { readonly encode: Encoder; readonly size: Sizer }>();
/** Per schema, per `what` (the name errors start with). */
const decoders = new Map<Schema, Map<string, Decoder>>();
const viewDecoders = new Map<Schema, Map<string, Decoder>>();
/** Distinct `what` names cached per schema; beyond it a decoder is compiled per call (still correct). */
const WHATS_CACHED_MAX = 64;

/** `initialBytes` is a floor: the writer starts at an upper bound of the encoded size, so it never grows. */
export function encodeWith<S extends Schema>(schema: S, value: TypeOf<S>, initialBytes = 128): Buffer {
  let c = encoders.get(schema);
  if (c === undefined) encoders.set(schema, (c = { encode: compileEncoder(schema), size: compileSizer(schema) }));
  const w = new ByteWriter(Math.max(initialBytes, c.size(value)));
  c.encode(w, value);
  return w.finish();
}

/** The default: decoded 'bytes' are copies (one shared object, not one per call). */
const COPIES: DecodeOptions = {};

export interface DecodeOptions {
  /**
   * Decoded 'bytes' are views into `payload` instead of copies. Only for a payload the caller owns
   * and never reuses (a copy already, e.g. an operation's value): a view keeps the whole payload alive.
   */
  readonly views?: boolean;
}

export function decodeWith<S extends Schema>(schema: S, payload: Uint8Array, what: string, options: DecodeOptions = COPIES): TypeOf<S> {
  const views = options.views === true;
  const cache = views ? viewDecoders : decoders;
  let byWhat = cache.get(schema);
  if (byWhat === undefined) cache.set(schema, (byWhat = new Map()));
  let dec = byWhat.get(what);
  if (dec === undefined) {
    dec = compileDecoder(schema, what, views);
    if (byWhat.size < WHATS_CACHED_MAX) byWhat.set(what, dec);
  }
  const r = new ByteReader(payload);
  const value = dec(r);
  r.expectEnd(what);
  return value as TypeOf<S>;
}

/** An upper bound of the bytes `encodeWith` writes for this value (for tests). */
export function encodedSizeBound<S extends Schema>(schema: S, value: TypeOf<S>): number {
  return compileSizer(schema)(value);
}

/** Source being generated: its statements, fresh local names, and the string slots of a decoder. */
class Source {
  readonly lines: string[] = [];
  private n = 0;
  /** String fields of a decoder: each remembers its last string (ByteReader.stringCached). */
  slots = 0;
  local(): string {
    return `v${this.n++}`;
  }
  slot(): string {
    return `slots[${this.slots++}]`;
  }
}

const lit = (s: string): string => JSON.stringify(s);

/** A value that does not fit its schema (the generated code calls it only when a check failed). */
function bad(path: string, expected: string, got?: string): never {
  throw new AssertionError(`${path}: expected ${expected}${got === undefined ? '' : `, got ${got}`}`);
}

function compileEncoder(schema: Schema): Encoder {
  const src = new Source();
  emitWrite(src, schema, 'value', '');
  // Generated from schema constants only (see the header).
  return new Function('bad', 'STRING_BYTES_MAX', 'BYTES_MAX', `return function encode(w, value) {\n${src.lines.join('\n')}\n};`)(bad, STRING_BYTES_MAX, BYTES_MAX) as Encoder;
}

function emitWrite(src: Source, schema: Schema, x: string, path: string): void {
  const L = src.lines;
  if (typeof schema === 'string') {
    switch (schema) {
      case 'u8':
      case 'u16':
      case 'u32':
      case 'i32':
      case 'u53': {
        L.push(`if (typeof ${x} !== 'number' || !Number.isInteger(${x})) bad(${lit(path)}, 'an integer', String(${x}));`);
        const m = schema === 'u53' ? 'u64' : schema;
        L.push(`w.${m}(${x});`);
        return;
      }
      case 'f64':
        L.push(`if (typeof ${x} !== 'number' || Number.isNaN(${x})) bad(${lit(path)}, 'a number');`);
        L.push(`w.f64(${x});`);
        return;
      case 'bool':
        L.push(`if (typeof ${x} !== 'boolean') bad(${lit(path)}, 'a boolean');`);
        L.push(`w.bool(${x});`);
        return;
      case 'str':
        L.push(`if (typeof ${x} !== 'string') bad(${lit(path)}, 'a string');`);
        L.push(`w.string(${x}, STRING_BYTES_MAX);`);
        return;
      case 'strOrNull':
        L.push(`if (${x} !== null && typeof ${x} !== 'string') bad(${lit(path)}, 'a string or null');`);
        L.push(`w.bool(${x} !== null);`);
        L.push(`if (${x} !== null) w.string(${x}, STRING_BYTES_MAX);`);
        return;
      case 'bytes':
        L.push(`if (!(${x} instanceof Uint8Array)) bad(${lit(path)}, 'bytes');`);
        L.push(`w.bytes(${x}, BYTES_MAX);`);
        return;
    }
  }
  if (Array.isArray(schema)) {
    const i = src.local();
    const item = src.local();
    L.push(`if (!Array.isArray(${x})) bad(${lit(path)}, 'an array');`);
    L.push(`w.u32(${x}.length);`);
    L.push(`for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {`);
    L.push(`const ${item} = ${x}[${i}];`);
    emitWrite(src, schema[0] as Schema, item, path);
    L.push('}');
    return;
  }
  L.push(`if (typeof ${x} !== 'object' || ${x} === null) bad(${lit(path)}, 'an object');`);
  for (const field of Object.keys(schema)) {
    const f = src.local();
    L.push(`const ${f} = ${x}[${lit(field)}];`);
    emitWrite(src, (schema as Record<string, Schema>)[field] as Schema, f, `${path}.${field}`);
  }
}

/** Bytes a value of this schema takes, fixed whatever the value; null when it varies. */
function fixedSize(schema: Schema): number | null {
  if (typeof schema === 'string') {
    const sizes: Partial<Record<Scalar, number>> = { u8: 1, bool: 1, u16: 2, u32: 4, i32: 4, u53: 8, f64: 8 };
    return sizes[schema] ?? null;
  }
  if (Array.isArray(schema)) return null;
  let n = 0;
  for (const field of Object.keys(schema)) {
    const f = fixedSize((schema as Record<string, Schema>)[field] as Schema);
    if (f === null) return null;
    n += f;
  }
  return n;
}

/**
 * An upper bound of the encoded size (a UTF-16 unit is at most 3 UTF-8 bytes). It reads the value
 * defensively: a value of the wrong type counts 0 here and is refused by the encoder.
 */
function compileSizer(schema: Schema): Sizer {
  const src = new Source();
  const total = src.local();
  src.lines.push(`let ${total} = 0;`);
  emitSize(src, schema, 'value', total);
  // Generated from schema constants only (see the header).
  return new Function(`return function size(value) {\n${src.lines.join('\n')}\nreturn ${total};\n};`)() as Sizer;
}

function emitSize(src: Source, schema: Schema, x: string, total: string): void {
  const L = src.lines;
  const fixed = fixedSize(schema);
  if (fixed !== null) {
    L.push(`${total} += ${fixed};`);
    return;
  }
  if (typeof schema === 'string') {
    if (schema === 'str') L.push(`${total} += 4 + (typeof ${x} === 'string' ? ${x}.length * 3 : 0);`);
    else if (schema === 'strOrNull') L.push(`${total} += 5 + (typeof ${x} === 'string' ? ${x}.length * 3 : 0);`);
    else L.push(`${total} += 4 + (${x} instanceof Uint8Array ? ${x}.length : 0);`);
    return;
  }
  if (Array.isArray(schema)) {
    L.push(`${total} += 4;`);
    const itemFixed = fixedSize(schema[0] as Schema);
    if (itemFixed !== null) {
      L.push(`if (Array.isArray(${x})) ${total} += ${x}.length * ${itemFixed};`);
      return;
    }
    const i = src.local();
    const item = src.local();
    L.push(`if (Array.isArray(${x})) for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {`);
    L.push(`const ${item} = ${x}[${i}];`);
    emitSize(src, schema[0] as Schema, item, total);
    L.push('}');
    return;
  }
  L.push(`if (typeof ${x} === 'object' && ${x} !== null) {`);
  for (const field of Object.keys(schema)) {
    const f = src.local();
    L.push(`const ${f} = ${x}[${lit(field)}];`);
    emitSize(src, (schema as Record<string, Schema>)[field] as Schema, f, total);
  }
  L.push('}');
}

function compileDecoder(schema: Schema, what: string, views: boolean): Decoder {
  const src = new Source();
  const v = emitRead(src, schema, what, views);
  // One slot per string field, kept with this decoder (decoding is synchronous: no two runs overlap).
  const slots = Array.from({ length: src.slots }, () => ({ bytes: null, value: '' }));
  // Generated from schema constants only (see the header).
  return new Function('STRING_BYTES_MAX', 'BYTES_MAX', 'slots', `return function decode(r) {\n${src.lines.join('\n')}\nreturn ${v};\n};`)(STRING_BYTES_MAX, BYTES_MAX, slots) as Decoder;
}

/** Emits the statements that read `schema`; returns the local holding the value. */
function emitRead(src: Source, schema: Schema, path: string, views: boolean): string {
  const L = src.lines;
  const v = src.local();
  if (typeof schema === 'string') {
    switch (schema) {
      case 'u8':
      case 'u16':
      case 'u32':
      case 'i32':
      case 'f64':
      case 'bool':
        L.push(`const ${v} = r.${schema}();`);
        break;
      case 'u53':
        L.push(`const ${v} = r.u64();`);
        break;
      case 'str':
        L.push(`const ${v} = r.stringCached(STRING_BYTES_MAX, ${lit(path)}, ${src.slot()});`);
        break;
      case 'strOrNull':
        L.push(`const ${v} = r.bool() ? r.stringCached(STRING_BYTES_MAX, ${lit(path)}, ${src.slot()}) : null;`);
        break;
      case 'bytes':
        L.push(`const ${v} = r.${views ? 'view' : 'bytes'}(BYTES_MAX, ${lit(path)});`);
        break;
    }
    return v;
  }
  if (Array.isArray(schema)) {
    const n = src.local();
    const i = src.local();
    // Every item takes at least one byte, so a count above the bytes left is a lie.
    L.push(`const ${n} = r.count(r.remaining, ${lit(`${path} item count`)});`);
    L.push(`const ${v} = new Array(${n});`);
    L.push(`for (let ${i} = 0; ${i} < ${n}; ${i}++) {`);
    const item = emitRead(src, schema[0] as Schema, path, views);
    L.push(`${v}[${i}] = ${item};`);
    L.push('}');
    return v;
  }
  const fields = Object.keys(schema).map((field) => [field, emitRead(src, (schema as Record<string, Schema>)[field] as Schema, `${path}.${field}`, views)] as const);
  L.push(`const ${v} = { ${fields.map(([field, x]) => `${lit(field)}: ${x}`).join(', ')} };`);
  return v;
}
