// Bounds-checked big-endian byte writer and reader for wire codecs (member protocol, and any other
// binary format that wants the same discipline).
//
// Invariants:
// - The reader never reads outside its buffer: every read checks the remaining bytes first and throws
//   GridError (ERR_PROTOCOL_MALFORMED unless the caller picks another code) instead of returning junk.
// - Variable-length fields (strings, byte arrays, counts) carry a u32 length that is checked against
//   a caller-given maximum BEFORE anything is allocated, so a hostile length cannot cost memory.
// - Strings are UTF-8 and decoded strictly: invalid UTF-8 is malformed input, not U+FFFD.
// - u64 values are JS numbers limited to the safe-integer range (< 2^53); larger values are malformed.
// - Writer misuse (a value out of range, a string over its maximum) is a programmer error: assert.
import { assert, AssertionError } from './assert.js';
import { GridError, type ErrorCode } from './errors.js';

const TWO_32 = 0x1_0000_0000;
/** Largest high word of a u64 that keeps the value a safe integer (2^53 - 1). */
const U64_HIGH_MAX = 0x1f_ffff;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Writer misuse is a programmer error; the message is built only when it happens. */
function fail(message: string): never {
  throw new AssertionError(message);
}

function outOfRange(kind: string, v: number): never {
  fail(`${kind} out of range: ${v}`);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

export class ByteWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initialBytes = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialBytes));
  }

  get length(): number {
    return this.pos;
  }

  u8(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v <= 0xff)) outOfRange('u8', v);
    this.room(1);
    this.buf[this.pos++] = v;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  u16(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v <= 0xffff)) outOfRange('u16', v);
    this.room(2);
    this.pos = this.buf.writeUInt16BE(v, this.pos);
    return this;
  }

  i32(v: number): this {
    if (!(Number.isInteger(v) && v >= -0x8000_0000 && v <= 0x7fff_ffff)) outOfRange('i32', v);
    this.room(4);
    this.pos = this.buf.writeInt32BE(v, this.pos);
    return this;
  }

  u32(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v < TWO_32)) outOfRange('u32', v);
    this.room(4);
    this.pos = this.buf.writeUInt32BE(v, this.pos);
    return this;
  }

  /** A u64 on the wire, from a non-negative safe integer. */
  u64(v: number): this {
    if (!(Number.isSafeInteger(v) && v >= 0)) fail(`u64 must be a non-negative safe integer: ${v}`);
    this.room(8);
    this.pos = this.buf.writeUInt32BE(Math.floor(v / TWO_32), this.pos);
    this.pos = this.buf.writeUInt32BE(v % TWO_32, this.pos);
    return this;
  }

  /** An IEEE 754 double, big-endian. */
  f64(v: number): this {
    if (typeof v !== 'number') fail(`f64 must be a number: ${String(v)}`);
    this.room(8);
    this.pos = this.buf.writeDoubleBE(v, this.pos);
    return this;
  }

  /** A u32 byte length, then the UTF-8 bytes; at most `maxBytes` of them. */
  string(s: string, maxBytes: number): this {
    // Short ASCII strings (names, content types) are copied char by char: cheaper than a UTF-8 encode call.
    if (s.length <= 32 && isAscii(s)) {
      const n = s.length;
      if (n > maxBytes) fail(`string of ${n} bytes exceeds its maximum of ${maxBytes}`);
      this.u32(n);
      this.room(n);
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
      this.pos = p;
      return this;
    }
    const n = Buffer.byteLength(s, 'utf8');
    if (n > maxBytes) fail(`string of ${n} bytes exceeds its maximum of ${maxBytes}`);
    this.u32(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    return this;
  }

  /** A u32 length, then the bytes; at most `maxBytes` of them. */
  bytes(b: Uint8Array, maxBytes: number): this {
    if (b.length > maxBytes) fail(`byte array of ${b.length} bytes exceeds its maximum of ${maxBytes}`);
    this.u32(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** The bytes written so far (a view; the writer must not be used afterwards). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** The last string a decoder field read (ByteReader.stringCached). */
export interface StringSlot {
  bytes: Uint8Array | null;
  value: string;
}

/** Strings longer than this are not remembered (they rarely repeat, and comparing costs). */
const STRING_SLOT_BYTES_MAX = 64;

export class ByteReader {
  private pos: number;

  /** Reads `buf[start, stop)`; failures throw GridError with `errorCode`. */
  constructor(
    private readonly buf: Uint8Array,
    private readonly errorCode: ErrorCode = 'ERR_PROTOCOL_MALFORMED',
    start = 0,
    private readonly stop = buf.length,
  ) {
    assert(start >= 0 && start <= stop && stop <= buf.length, 'ByteReader range outside its buffer');
    this.pos = start;
  }

  get remaining(): number {
    return this.stop - this.pos;
  }

  u8(): number {
    this.need(1, 'u8');
    return this.buf[this.pos++] as number;
  }

  /** A u8 that must be 0 or 1. */
  bool(): boolean {
    const v = this.u8();
    if (v > 1) this.fail(`a boolean byte is ${v}`);
    return v === 1;
  }

  u16(): number {
    this.need(2, 'u16');
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 2;
    return ((b[p] as number) << 8) | (b[p + 1] as number);
  }

  u32(): number {
    this.need(4, 'u32');
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p] as number) * 0x100_0000 + (((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number));
  }

  i32(): number {
    return this.u32() | 0;
  }

  u64(): number {
    const high = this.u32();
    const low = this.u32();
    if (high > U64_HIGH_MAX) this.fail('a u64 is above the safe-integer range');
    return high * TWO_32 + low;
  }

  /** An IEEE 754 double, big-endian; NaN is refused (no field of ours carries one). */
  f64(): number {
    this.need(8, 'f64');
    const b = this.buf;
    const p = this.pos;
    // Big-endian bytes into the little- or big-endian scratch double, without a view per read.
    if (LITTLE_ENDIAN) for (let i = 0; i < 8; i++) F64_BYTES[i] = b[p + 7 - i] as number;
    else for (let i = 0; i < 8; i++) F64_BYTES[i] = b[p + i] as number;
    const v = F64[0] as number;
    this.pos = p + 8;
    if (Number.isNaN(v)) this.fail('a double is NaN');
    return v;
  }

  /** A u32 count checked against `max` (for arrays: check before allocating them). */
  count(max: number, what: string): number {
    const n = this.u32();
    if (n > max) this.fail(`${what}: ${n} exceeds the maximum of ${max}`);
    return n;
  }

  string(maxBytes: number, what = 'string'): string {
    const n = this.count(maxBytes, what);
    this.need(n, what);
    const start = this.pos;
    this.pos += n;
    if (n <= 32) {
      // Short strings (names, content types) are mostly ASCII: built from char codes, no decoder call.
      const b = this.buf;
      let ascii = true;
      for (let i = start; i < start + n; i++) {
        if ((b[i] as number) > 0x7f) {
          ascii = false;
          break;
        }
      }
      if (ascii) return n === 0 ? '' : String.fromCharCode.apply(null, b.subarray(start, start + n) as unknown as number[]);
    }
    try {
      return utf8.decode(this.buf.subarray(start, start + n));
    } catch {
      return this.fail(`${what} is not valid UTF-8`);
    }
  }

  /**
   * string(), remembering the last short string read through `slot`: when the next one has the same
   * bytes (a map name, a content type repeated along a list), the same string comes back without a
   * new allocation. The bytes are compared in full, so the result is always what string() returns.
   */
  stringCached(maxBytes: number, what: string, slot: StringSlot): string {
    const lengthAt = this.pos;
    const n = this.count(maxBytes, what);
    this.need(n, what);
    const b = this.buf;
    const start = this.pos;
    const last = slot.bytes;
    if (last !== null && last.length === n) {
      let same = true;
      for (let i = 0; i < n; i++) {
        if (last[i] !== b[start + i]) {
          same = false;
          break;
        }
      }
      if (same) {
        this.pos = start + n;
        return slot.value;
      }
    }
    this.pos = lengthAt;
    const value = this.string(maxBytes, what);
    if (n <= STRING_SLOT_BYTES_MAX) {
      slot.bytes = Buffer.from(b.subarray(start, start + n));
      slot.value = value;
    }
    return value;
  }

  /** A copy of the next length-prefixed byte array (a copy, so the frame can be released). */
  bytes(maxBytes: number, what = 'byte array'): Buffer {
    const n = this.count(maxBytes, what);
    this.need(n, what);
    const out = Buffer.from(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }

  /** The next length-prefixed byte array as a view into the buffer (no copy: it keeps the buffer alive). */
  view(maxBytes: number, what = 'byte array'): Buffer {
    const n = this.count(maxBytes, what);
    this.need(n, what);
    const b = this.buf;
    const out = Buffer.from(b.buffer, b.byteOffset + this.pos, n);
    this.pos += n;
    return out;
  }

  /** Asserts that every byte was consumed: trailing bytes mean the two sides disagree on a layout. */
  expectEnd(what = 'message'): void {
    if (this.pos !== this.stop) this.fail(`${what} has ${this.stop - this.pos} unexpected trailing bytes`);
  }

  fail(message: string): never {
    throw new GridError(this.errorCode, message);
  }

  private need(n: number, what: string): void {
    if (this.stop - this.pos < n) this.fail(`${what} needs ${n} bytes, ${this.stop - this.pos} remain`);
  }
}
