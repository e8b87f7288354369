// Reading a client message's fields and writing answers and events (framing in frames.ts). I/O-free.
//
// MessageReader walks the frames of one request: the fixed-size parameters of the initial frame by
// offset, then the variable-size ones frame by frame. Every read is bounds-checked and throws
// ERR_CLIENT_PROTOCOL naming what was missing; trailing fields a newer client appends are skipped
// (the protocol's compatibility rule: parameters are only ever appended).
//
// MessageWriter builds one unfragmented message as one buffer: the initial frame carries
// BEGIN|END_FRAGMENT (and EVENT for events), the last frame FINAL.
import { isUtf8 as nativeIsUtf8 } from 'node:buffer';
import { GridError } from '../util/errors.js';
import {
  FLAG_BEGIN_STRUCT,
  FLAG_END_STRUCT,
  FLAG_EVENT,
  FLAG_FINAL,
  FLAG_NULL,
  FLAG_UNFRAGMENTED,
  FRAME_HEADER_BYTES,
  OFFSET_BACKUP_ACKS,
  OFFSET_CORRELATION,
  OFFSET_PARTITION,
  OFFSET_TYPE,
  REQUEST_FIXED,
  RESPONSE_FIXED,
  type ClientFrame,
  type ClientMessage,
} from './frames.js';

export const UUID_BYTES = 17;

/** A UUID as the protocol carries it: null, or two signed 64-bit halves. */
export type Uuid = { readonly most: bigint; readonly least: bigint } | null;

function malformed(message: string): GridError {
  return new GridError('ERR_CLIENT_PROTOCOL', message);
}

/** Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` into the protocol's two halves. */
export function uuidFromString(text: string): Uuid {
  const hex = text.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`not a UUID: ${text}`);
  return { most: BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)), least: BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)) };
}

export function uuidToString(uuid: Uuid): string | null {
  if (uuid === null) return null;
  const hex = BigInt.asUintN(64, uuid.most).toString(16).padStart(16, '0') + BigInt.asUintN(64, uuid.least).toString(16).padStart(16, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Reads one request (or any message) field by field. */
export class MessageReader {
  readonly type: number;
  readonly correlationId: bigint;
  readonly partitionId: number;
  private readonly initial: Buffer;
  private next = 1;

  constructor(private readonly message: ClientMessage) {
    const initial = message.frames[0];
    if (initial === undefined || initial.content.length < REQUEST_FIXED) throw malformed('a message without a whole initial frame');
    this.initial = initial.content;
    this.type = this.initial.readInt32LE(OFFSET_TYPE);
    this.correlationId = this.initial.readBigInt64LE(OFFSET_CORRELATION);
    this.partitionId = this.initial.readInt32LE(OFFSET_PARTITION);
  }

  private fixed(offset: number, bytes: number, what: string): number {
    const at = REQUEST_FIXED + offset;
    if (at + bytes > this.initial.length) throw malformed(`${what}: the initial frame ends at ${this.initial.length - REQUEST_FIXED} bytes of parameters`);
    return at;
  }

  byte(offset: number, what: string): number {
    return this.initial.readUInt8(this.fixed(offset, 1, what));
  }

  boolean(offset: number, what: string): boolean {
    return this.byte(offset, what) !== 0;
  }

  int(offset: number, what: string): number {
    return this.initial.readInt32LE(this.fixed(offset, 4, what));
  }

  /** A long as a number; beyond ±2^53 it is clamped (timeouts and TTLs: larger means forever). */
  long(offset: number, what: string): number {
    // Read as two words (no BigInt: every write call reads its TTL). |v| < 2^53 exactly when the
    // high word lies in [-2^21, 2^21), except -2^53 itself (high -2^21, low 0).
    const at = this.fixed(offset, 8, what);
    const low = this.initial.readUInt32LE(at);
    const high = this.initial.readInt32LE(at + 4);
    if (high >= LONG_HIGH_SAFE) return Number.MAX_SAFE_INTEGER;
    if (high < -LONG_HIGH_SAFE || (high === -LONG_HIGH_SAFE && low === 0)) return Number.MIN_SAFE_INTEGER;
    return high * TWO_32 + low;
  }

  /** A long exactly (an AtomicLong's 64-bit value). */
  bigLong(offset: number, what: string): bigint {
    return this.initial.readBigInt64LE(this.fixed(offset, 8, what));
  }

  /**
   * A custom type: its begin frame, an initial frame of fixed fields (at least `fixedBytes`), its
   * variable fields as frames (`frames` of them), then any newer trailing frames up to its end frame
   * (skipped, as the clients skip them).
   */
  struct(what: string, fixedBytes: number, frames: number): { fixed: Buffer; frames: Buffer[] } {
    const begin = this.frame(what);
    if ((begin.flags & FLAG_BEGIN_STRUCT) === 0) throw malformed(`${what}: expected the begin frame of a structure`);
    const fixed = this.bytes(what);
    if (fixed.length < fixedBytes) throw malformed(`${what}: a fixed part of ${fixed.length} bytes (at least ${fixedBytes})`);
    const out: Buffer[] = [];
    for (let i = 0; i < frames; i++) out.push(this.bytes(what));
    for (let skipped = 0; ; skipped++) {
      if (skipped > 64) throw malformed(`${what}: no end frame`);
      const f = this.frame(what);
      if ((f.flags & FLAG_END_STRUCT) !== 0) return { fixed, frames: out };
      if ((f.flags & FLAG_BEGIN_STRUCT) !== 0) throw malformed(`${what}: a nested structure`);
    }
  }

  uuid(offset: number, what: string): Uuid {
    const at = this.fixed(offset, UUID_BYTES, what);
    if (this.initial[at] !== 0) return null;
    return { most: this.initial.readBigInt64LE(at + 1), least: this.initial.readBigInt64LE(at + 9) };
  }

  private frame(what: string): ClientFrame {
    const frame = this.message.frames[this.next];
    if (frame === undefined) throw malformed(`${what}: the message has no more frames`);
    this.next++;
    return frame;
  }

  /** The next frame's bytes (a view of the message). */
  bytes(what: string): Buffer {
    const frame = this.frame(what);
    if ((frame.flags & (FLAG_NULL | FLAG_BEGIN_STRUCT | FLAG_END_STRUCT)) !== 0) throw malformed(`${what}: expected a value frame`);
    return frame.content;
  }

  /** The next frame's bytes, or null for a null frame. */
  nullableBytes(what: string): Buffer | null {
    const frame = this.message.frames[this.next];
    if (frame !== undefined && (frame.flags & FLAG_NULL) !== 0) {
      this.next++;
      return null;
    }
    return this.bytes(what);
  }

  /** A String frame: strict UTF-8. */
  string(what: string): string {
    return decodeUtf8(this.bytes(what), what);
  }

  /**
   * A structure's name (map, queue): as string(), but the last short name decoded is reused when
   * its bytes come again (call after call on one map). Only names are kept, never credentials.
   */
  structureName(what: string): string {
    const bytes = this.bytes(what);
    const cached = lastString.bytes;
    if (cached !== null && sameBytes(bytes, cached)) return lastString.text;
    const text = decodeUtf8(bytes, what);
    if (bytes.length <= LAST_STRING_BYTES_MAX) {
      lastString.bytes = Buffer.from(bytes);
      lastString.text = text;
    }
    return text;
  }

  nullableString(what: string): string | null {
    const b = this.nullableBytes(what);
    return b === null ? null : decodeUtf8(b, what);
  }

  /** A list of Strings: begin frame, items, end frame. */
  stringList(what: string, itemsMax: number): string[] {
    const items = this.bytesList(what);
    if (items.length > itemsMax) throw malformed(`${what}: more than ${itemsMax} items`);
    return items.map((b) => decodeUtf8(b, what));
  }

  /** A list of values (begin frame, one frame per item, end frame): views of the message. */
  bytesList(what: string): Buffer[] {
    const begin = this.frame(what);
    if ((begin.flags & FLAG_BEGIN_STRUCT) === 0) throw malformed(`${what}: expected the begin frame of a list`);
    const out: Buffer[] = [];
    for (;;) {
      const frame = this.frame(what);
      if ((frame.flags & FLAG_END_STRUCT) !== 0) return out;
      if ((frame.flags & (FLAG_NULL | FLAG_BEGIN_STRUCT)) !== 0) throw malformed(`${what}: a list item that is null or nested`);
      out.push(frame.content);
    }
  }

  /** Key and value frames in turn between a begin and an end frame (an EntryList). */
  entryList(what: string): [Buffer, Buffer][] {
    const items = this.bytesList(what);
    if (items.length % 2 !== 0) throw malformed(`${what}: an entry list with a key and no value`);
    const out: [Buffer, Buffer][] = [];
    for (let i = 0; i < items.length; i += 2) out.push([items[i] as Buffer, items[i + 1] as Buffer]);
    return out;
  }

  /** Frames left unread (fields a newer client appended). */
  get framesLeft(): number {
    return this.message.frames.length - this.next;
  }
}

/** The last short name MessageReader.structureName decoded, with a copy of its bytes (module state: one thread, no I/O). */
const LAST_STRING_BYTES_MAX = 64;
const lastString: { bytes: Buffer | null; text: string } = { bytes: null, text: '' };

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), checked natively. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  const n = bytes.length;
  if (n <= SHORT_ASCII_MAX) {
    // Short ASCII (most keys): built in JS, about a fifth of the native decode's cost at this size.
    let text = '';
    let i = 0;
    for (; i < n; i++) {
      const c = bytes[i] as number;
      if (c >= 0x80) break;
      text += String.fromCharCode(c);
    }
    if (i === n) return text;
  }
  if (!nativeIsUtf8(bytes)) throw malformed(`${what}: not valid UTF-8`);
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, n)).toString('utf8');
}

/**
 * Strings up to this many bytes decode in JS when ASCII. V8 keeps concatenations shorter than 13
 * characters flat; longer ones would be cons strings, to be flattened at their first lookup.
 */
const SHORT_ASCII_MAX = 12;

/** True when `bytes` is valid UTF-8. */
export function isUtf8(bytes: Uint8Array): boolean {
  return nativeIsUtf8(bytes);
}

interface PendingFrame {
  flags: number;
  content: Uint8Array;
}

/**
 * Builds one message. Start with response() or event(), write the fixed fields into the initial
 * frame's buffer through the setters, add variable frames, then build().
 */
export class MessageWriter {
  private readonly frames: PendingFrame[] = [];
  private readonly initial: Buffer;
  private readonly fixedStart: number;

  private constructor(type: number, correlationId: bigint, fixedBytes: number, event: boolean) {
    this.fixedStart = event ? REQUEST_FIXED : RESPONSE_FIXED;
    this.initial = Buffer.alloc(this.fixedStart + fixedBytes);
    this.initial.writeInt32LE(type, OFFSET_TYPE);
    this.initial.writeBigInt64LE(correlationId, OFFSET_CORRELATION);
    if (event) this.initial.writeInt32LE(-1, OFFSET_PARTITION);
    else this.initial.writeUInt8(0, OFFSET_BACKUP_ACKS);
    this.frames.push({ flags: FLAG_UNFRAGMENTED | (event ? FLAG_EVENT : 0), content: this.initial });
  }

  /** A response (backupAcks 0: the member finishes its sync backups before it answers). */
  static response(type: number, correlationId: bigint, fixedBytes = 0): MessageWriter {
    return new MessageWriter(type, correlationId, fixedBytes, false);
  }

  /** An event on a listener registration (its correlation id), partition id -1. */
  static event(type: number, correlationId: bigint, fixedBytes = 0): MessageWriter {
    return new MessageWriter(type, correlationId, fixedBytes, true);
  }

  setByte(offset: number, value: number): this {
    this.initial.writeUInt8(value, this.fixedStart + offset);
    return this;
  }

  setBoolean(offset: number, value: boolean): this {
    return this.setByte(offset, value ? 1 : 0);
  }

  setInt(offset: number, value: number): this {
    this.initial.writeInt32LE(value, this.fixedStart + offset);
    return this;
  }

  setLong(offset: number, value: bigint): this {
    this.initial.writeBigInt64LE(value, this.fixedStart + offset);
    return this;
  }

  setUuid(offset: number, uuid: Uuid): this {
    writeUuid(this.initial, this.fixedStart + offset, uuid);
    return this;
  }

  bytes(content: Uint8Array): this {
    this.frames.push({ flags: 0, content });
    return this;
  }

  string(text: string): this {
    return this.bytes(Buffer.from(text, 'utf8'));
  }

  nullFrame(): this {
    this.frames.push({ flags: FLAG_NULL, content: EMPTY });
    return this;
  }

  nullableBytes(content: Uint8Array | null): this {
    return content === null ? this.nullFrame() : this.bytes(content);
  }

  begin(): this {
    this.frames.push({ flags: FLAG_BEGIN_STRUCT, content: EMPTY });
    return this;
  }

  end(): this {
    this.frames.push({ flags: FLAG_END_STRUCT, content: EMPTY });
    return this;
  }

  /** A frame of fixed-size fields (the initial frame of a custom type, or a packed list). */
  fixedFrame(content: Uint8Array): this {
    return this.bytes(content);
  }

  build(): Buffer {
    const frames = this.frames;
    let total = 0;
    for (const f of frames) total += FRAME_HEADER_BYTES + f.content.length;
    const out = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i] as PendingFrame;
      const length = FRAME_HEADER_BYTES + f.content.length;
      out.writeInt32LE(length, at);
      out.writeUInt16LE(i === frames.length - 1 ? f.flags | FLAG_FINAL : f.flags, at + 4);
      out.set(f.content, at + FRAME_HEADER_BYTES);
      at += length;
    }
    return out;
  }
}

const EMPTY = new Uint8Array(0);

/**
 * A response of one initial frame with `fixedBytes` of fixed fields (zeros, for the caller to set at
 * RESPONSE_FIXED + offset of the initial frame's content, i.e. byte FRAME_HEADER_BYTES + 13 + offset)
 * and, when `frameBytes` is not undefined, one more frame of that many content bytes at the end (for
 * the caller to fill), or a null frame for null. The same bytes MessageWriter would build, in one
 * buffer: the answers of the common calls are made this way.
 */
export function simpleResponse(type: number, correlationId: bigint, fixedBytes: number, frameBytes?: number | null): Buffer {
  const initialLength = FRAME_HEADER_BYTES + RESPONSE_FIXED + fixedBytes;
  const last = frameBytes === undefined;
  const total = initialLength + (last ? 0 : FRAME_HEADER_BYTES + (frameBytes ?? 0));
  const out = Buffer.allocUnsafe(total);
  out.writeInt32LE(initialLength, 0);
  out.writeUInt16LE(last ? FLAG_UNFRAGMENTED | FLAG_FINAL : FLAG_UNFRAGMENTED, 4);
  out.writeInt32LE(type, FRAME_HEADER_BYTES + OFFSET_TYPE);
  writeCorrelationId(out, FRAME_HEADER_BYTES + OFFSET_CORRELATION, correlationId);
  // The backup-acks byte and the fixed fields: a few bytes, zeroed without fill()'s call overhead.
  for (let i = FRAME_HEADER_BYTES + OFFSET_BACKUP_ACKS; i < initialLength; i++) out[i] = 0;
  if (!last) {
    out.writeInt32LE(FRAME_HEADER_BYTES + (frameBytes ?? 0), initialLength);
    out.writeUInt16LE(frameBytes === null ? FLAG_NULL | FLAG_FINAL : FLAG_FINAL, initialLength + 4);
  }
  return out;
}

const SAFE_ID_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_32 = 2 ** 32;

/**
 * Writes a correlation id as an int64 LE. Clients count their ids up from 1, so an id is nearly
 * always a safe integer: it is then written as two u32 words from one Number (writeBigInt64LE does
 * two BigInt operations per call, and every answer writes an id).
 */
function writeCorrelationId(out: Buffer, at: number, id: bigint): void {
  if (id >= 0n && id <= SAFE_ID_MAX) {
    const n = Number(id);
    out.writeUInt32LE(n % TWO_32, at);
    out.writeUInt32LE(Math.floor(n / TWO_32), at + 4);
  } else {
    out.writeBigInt64LE(id, at);
  }
}

/** 2^21: a long whose high word is at least this (or below its negation) is beyond ±(2^53 - 1). */
const LONG_HIGH_SAFE = 0x200000;

/** Where simpleResponse's fixed field at `offset` lies in its bytes. */
export const SIMPLE_FIXED_AT = FRAME_HEADER_BYTES + RESPONSE_FIXED;

export function writeUuid(target: Buffer, at: number, uuid: Uuid): void {
  if (uuid === null) {
    target.fill(0, at, at + UUID_BYTES);
    target[at] = 1;
    return;
  }
  target[at] = 0;
  target.writeBigInt64LE(uuid.most, at + 1);
  target.writeBigInt64LE(uuid.least, at + 9);
}

// The answers of the common calls, each built in one buffer (simpleResponse).

export function emptyAnswer(type: number, id: bigint): Buffer {
  return simpleResponse(type + 1, id, 0);
}

export function booleanAnswer(type: number, id: bigint, value: boolean): Buffer {
  const out = simpleResponse(type + 1, id, 1);
  out[SIMPLE_FIXED_AT] = value ? 1 : 0;
  return out;
}

export function intAnswer(type: number, id: bigint, value: number): Buffer {
  const out = simpleResponse(type + 1, id, 4);
  out.writeInt32LE(value, SIMPLE_FIXED_AT);
  return out;
}
