// The record of the persistence log: one applied change to one partition's structures, checksummed.
// No I/O here: records are encoded into a batch buffer and decoded from bytes the caller read.
//
// Layout (big-endian), each record:
//
//   offset  bytes  field
//   0       4      length of the whole record, this field included (RECORD_HEADER_BYTES..RECORD_BYTES_MAX)
//   4       4      CRC-32C of bytes [8, length)
//   8       1      type (RECORD_TYPE)
//   9       1      flags: bit 0 (MAP_PUT only) FLAG_OWN_EXPIRY, the entry's own expiry follows
//                  its hits; every other bit is reserved (a reader refuses it)
//   10      2      partition id
//   12      8      sequence number (u64): the log's order, unique and rising, kept by compaction
//   20      8      partition version (u64): the replica's version after this change (0: none)
//   28      ...    body, by type:
//     MAP_PUT        name, key, value, content type, creation, update, last access, expiration
//                    (ms since the epoch, f64; expiration 0 = never), entry version (f64), hits (u32),
//                    then with FLAG_OWN_EXPIRY the entry's own time-to-live and max-idle (f64 ms each;
//                    -1 = the map's, 0 = never: data/expiry.ts). A put without its own expiry is
//                    written without the flag, byte for byte as before it existed.
//     MAP_REMOVE     name, key
//     MAP_CLEAR      name                   (every entry of the map in this partition)
//     QUEUE_ADD      name, item id (u64), value, content type
//     QUEUE_REMOVE   name, item id (u64)
//     QUEUE_CLEAR    name                   (every item of the queue)
//     PARTITION_DROP (no body)              (everything of this partition: the member let it go)
//   name: u32 length + UTF-8; key, value: u32 length + bytes; content type: u8 0 (none) or 1, then
//   u32 length + UTF-8.
//
// Invariants:
// - A record is accepted only whole: its length in range and inside the bytes given, its checksum
//   right, its flags known, its body exactly filling the length. Anything else is reported, never
//   half-read (the reader decides whether that is a torn tail or a corrupt middle, recovery.ts).
// - Decoded keys and values are copies: nothing returned points into the caller's read buffer.
import { ByteReader, type StringSlot } from '../util/bytes.js';
import { GridError } from '../util/errors.js';
import { assert } from '../util/assert.js';
import { crc32c } from './crc32c.js';
import type { MapRecordView } from '../data/record-table.js';
import { ENTRY_EXPIRY_MAP } from '../data/expiry.js';

export const RECORD_HEADER_BYTES = 28;
/** Flags bit of a MAP_PUT that carries the entry's own expiry. */
const FLAG_OWN_EXPIRY = 1;

function ownExpiry(ttlMs: number | undefined, maxIdleMs: number | undefined): boolean {
  return (ttlMs !== undefined && ttlMs !== ENTRY_EXPIRY_MAP) || (maxIdleMs !== undefined && maxIdleMs !== ENTRY_EXPIRY_MAP);
}

/** -1 (the map's), 0 (never) or a positive whole number of ms. */
function validExpiry(ms: number): boolean {
  return ms === ENTRY_EXPIRY_MAP || (Number.isInteger(ms) && ms >= 0);
}
/** The largest record: a value at the store's largest (256 MiB) with its key and names. */
export const RECORD_BYTES_MAX = 256 * 1024 * 1024 + 1024 * 1024;
export const LOG_NAME_BYTES_MAX = 64 * 1024;
export const LOG_KEY_BYTES_MAX = 1024 * 1024;
export const LOG_CONTENT_TYPE_BYTES_MAX = 64 * 1024;

export const RECORD_TYPE = {
  MAP_PUT: 1,
  MAP_REMOVE: 2,
  MAP_CLEAR: 3,
  QUEUE_ADD: 4,
  QUEUE_REMOVE: 5,
  QUEUE_CLEAR: 6,
  PARTITION_DROP: 7,
} as const;

interface Common {
  partitionId: number;
  seq: number;
  partitionVersion: number;
}


export interface MapPutRecord extends Common {
  type: 'mapPut';
  name: string;
  key: Uint8Array;
  value: Uint8Array;
  contentType: string | null;
  creationTimeMs: number;
  updateTimeMs: number;
  lastAccessTimeMs: number;
  /** Absolute expiry (ms since the epoch); 0: never. */
  expirationTimeMs: number;
  /** The entry's own time-to-live and max-idle (absent: the map's). */
  ttlMs?: number;
  maxIdleMs?: number;
  version: number;
  hits: number;
}

export interface MapRemoveRecord extends Common {
  type: 'mapRemove';
  name: string;
  key: Uint8Array;
}

export interface MapClearRecord extends Common {
  type: 'mapClear';
  name: string;
}

export interface QueueAddRecord extends Common {
  type: 'queueAdd';
  name: string;
  itemId: number;
  value: Uint8Array;
  contentType: string | null;
}

export interface QueueRemoveRecord extends Common {
  type: 'queueRemove';
  name: string;
  itemId: number;
}

export interface QueueClearRecord extends Common {
  type: 'queueClear';
  name: string;
}

export interface PartitionDropRecord extends Common {
  type: 'partitionDrop';
}

export type LogRecord = MapPutRecord | MapRemoveRecord | MapClearRecord | QueueAddRecord | QueueRemoveRecord | QueueClearRecord | PartitionDropRecord;

const TYPE_CODE: Record<LogRecord['type'], number> = {
  mapPut: RECORD_TYPE.MAP_PUT,
  mapRemove: RECORD_TYPE.MAP_REMOVE,
  mapClear: RECORD_TYPE.MAP_CLEAR,
  queueAdd: RECORD_TYPE.QUEUE_ADD,
  queueRemove: RECORD_TYPE.QUEUE_REMOVE,
  queueClear: RECORD_TYPE.QUEUE_CLEAR,
  partitionDrop: RECORD_TYPE.PARTITION_DROP,
};

const TWO_32 = 0x1_0000_0000;


/**
 * Records appended back to back into one growing buffer: a batch that the log writes with one call.
 * `take()` hands the bytes over and starts an empty batch.
 */
export class RecordBatch {
  private buf: Buffer;
  private pos = 0;
  private records = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get byteLength(): number {
    return this.pos;
  }

  get count(): number {
    return this.records;
  }

  /** Appends one record (with sequence number `seq`, else its own); returns its encoded length. */
  add(r: LogRecord, seq = r.seq): number {
    const start = this.pos;
    this.room(encodedSize(r));
    this.header(TYPE_CODE[r.type], r.partitionId, seq, r.partitionVersion);
    switch (r.type) {
      case 'mapPut':
        this.string(r.name);
        this.bytes(r.key);
        this.bytes(r.value);
        this.optionalString(r.contentType);
        this.f64(r.creationTimeMs);
        this.f64(r.updateTimeMs);
        this.f64(r.lastAccessTimeMs);
        this.f64(r.expirationTimeMs);
        this.f64(r.version);
        this.u32(r.hits);
        if (ownExpiry(r.ttlMs, r.maxIdleMs)) this.ownExpiry(start, r.ttlMs ?? ENTRY_EXPIRY_MAP, r.maxIdleMs ?? ENTRY_EXPIRY_MAP);
        break;
      case 'mapRemove':
        this.string(r.name);
        this.bytes(r.key);
        break;
      case 'mapClear':
      case 'queueClear':
        this.string(r.name);
        break;
      case 'queueAdd':
        this.string(r.name);
        this.u64(r.itemId);
        this.bytes(r.value);
        this.optionalString(r.contentType);
        break;
      case 'queueRemove':
        this.string(r.name);
        this.u64(r.itemId);
        break;
      case 'partitionDrop':
        break;
    }
    return this.seal(start);
  }

  /** Appends a map put from an entry's fields (the write path: no record object). */
  addMapPut(partitionId: number, seq: number, partitionVersion: number, name: string, key: Uint8Array, e: MapRecordView, expirationTimeMs: number): number {
    const start = this.pos;
    this.room(RECORD_HEADER_BYTES + 5 + name.length * 3 + 8 + key.length + e.value.length + (e.contentType === null ? 1 : 5 + e.contentType.length * 3) + 7 * 8 + 4);
    this.header(RECORD_TYPE.MAP_PUT, partitionId, seq, partitionVersion);
    this.string(name);
    this.bytes(key);
    this.bytes(e.value);
    this.optionalString(e.contentType);
    this.f64(e.creationTimeMs);
    this.f64(e.updateTimeMs);
    this.f64(e.lastAccessTimeMs);
    this.f64(expirationTimeMs);
    this.f64(e.version);
    this.u32(e.hits);
    if (ownExpiry(e.ttlMs, e.maxIdleMs)) this.ownExpiry(start, e.ttlMs, e.maxIdleMs);
    return this.seal(start);
  }

  /** Appends the entry's own expiry and flags the record (started at `start`) as carrying it. */
  private ownExpiry(start: number, ttlMs: number, maxIdleMs: number): void {
    this.buf[start + 9] = FLAG_OWN_EXPIRY;
    this.f64(ttlMs);
    this.f64(maxIdleMs);
  }

  private header(type: number, partitionId: number, seq: number, partitionVersion: number): void {
    const b = this.buf;
    const start = this.pos;
    b[start + 8] = type;
    b[start + 9] = 0;
    assert(Number.isInteger(partitionId) && partitionId >= 0 && partitionId <= 0xffff, 'partition id fits a u16');
    b.writeUInt16BE(partitionId, start + 10);
    writeU64(b, start + 12, seq);
    writeU64(b, start + 20, partitionVersion);
    this.pos += RECORD_HEADER_BYTES;
  }

  /** Fills in the length and checksum of the record that started at `start`. */
  private seal(start: number): number {
    const b = this.buf;
    const length = this.pos - start;
    assert(length <= RECORD_BYTES_MAX, `a log record of ${length} bytes is larger than ${RECORD_BYTES_MAX}`);
    b.writeUInt32BE(length, start);
    b.writeUInt32BE(crc32c(b, start + 8, this.pos), start + 4);
    this.records++;
    return length;
  }

  /**
   * The bytes of every record added since the last take (a view); the batch starts empty and
   * reuses its buffer, so the view is valid only until the next `add` (the log writes it at once).
   * A buffer grown past 1 MiB is let go.
   */
  take(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    if (this.buf.length > 1024 * 1024) this.buf = Buffer.allocUnsafe(64 * 1024);
    this.pos = 0;
    this.records = 0;
    return out;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  private u32(v: number): void {
    this.pos = this.buf.writeUInt32BE(v, this.pos);
  }

  private u64(v: number): void {
    writeU64(this.buf, this.pos, v);
    this.pos += 8;
  }

  private f64(v: number): void {
    assert(!Number.isNaN(v), 'a persisted double is never NaN');
    this.pos = this.buf.writeDoubleBE(v, this.pos);
  }

  private bytes(v: Uint8Array): void {
    this.u32(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** A u32 length and the UTF-8 bytes (room for 3 bytes per char was made by the caller). */
  private string(s: string): void {
    const len = s.length;
    const b = this.buf;
    if (len <= 64) {
      // Names and content types are short and mostly ASCII: copied char by char.
      let p = this.pos + 4;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[p++] = c;
      }
      if (i === len) {
        b.writeUInt32BE(len, this.pos);
        this.pos = p;
        return;
      }
    }
    const n = b.write(s, this.pos + 4, 'utf8');
    assert(n <= LOG_NAME_BYTES_MAX, 'a persisted name fits its maximum');
    this.u32(n);
    this.pos += n;
  }

  private optionalString(s: string | null): void {
    if (s === null) {
      this.buf[this.pos++] = 0;
      return;
    }
    this.buf[this.pos++] = 1;
    this.string(s);
  }
}

function writeU64(b: Buffer, at: number, v: number): void {
  assert(Number.isSafeInteger(v) && v >= 0, 'a u64 field is a non-negative safe integer');
  b.writeUInt32BE(Math.floor(v / TWO_32), at);
  b.writeUInt32BE(v % TWO_32, at + 4);
}

/** An upper bound of a record's encoded size (names and content types counted at 3 bytes per char). */
export function encodedSize(r: LogRecord): number {
  let n = RECORD_HEADER_BYTES;
  const str = (s: string | null): number => (s === null ? 1 : 5 + s.length * 3);
  switch (r.type) {
    case 'mapPut':
      n += str(r.name) + 8 + r.key.length + r.value.length + str(r.contentType) + 7 * 8 + 4;
      break;
    case 'mapRemove':
      n += str(r.name) + 4 + r.key.length;
      break;
    case 'mapClear':
    case 'queueClear':
      n += str(r.name);
      break;
    case 'queueAdd':
      n += str(r.name) + 8 + 4 + r.value.length + str(r.contentType);
      break;
    case 'queueRemove':
      n += str(r.name) + 8;
      break;
    case 'partitionDrop':
      break;
  }
  return n;
}

/** What `readRecord` found at an offset. */
export type RecordRead =
  | { readonly kind: 'record'; readonly record: LogRecord; readonly length: number }
  /** Fewer bytes than the header or the declared length: more may follow, or the tail is torn. */
  | { readonly kind: 'short'; readonly needBytes: number }
  /** Not a record: a length out of range, a wrong checksum, flags, type or body. */
  | { readonly kind: 'bad'; readonly reason: string };

/** Reads the record starting at `bytes[offset]`, looking no further than `end`. */
/**
 * Reads the record starting at `bytes[offset]`, looking no further than `end`. `views`: keys and
 * values are views into `bytes` (valid while those bytes are; compaction's scan), else copies.
 */
export function readRecord(bytes: Uint8Array, offset: number, end = bytes.length, views = false): RecordRead {
  const available = end - offset;
  if (available < 8) return { kind: 'short', needBytes: 8 };
  const length = ((bytes[offset] as number) * 0x100_0000 + (((bytes[offset + 1] as number) << 16) | ((bytes[offset + 2] as number) << 8) | (bytes[offset + 3] as number)));
  if (length < RECORD_HEADER_BYTES || length > RECORD_BYTES_MAX) return { kind: 'bad', reason: `a record length of ${length} bytes (${RECORD_HEADER_BYTES} to ${RECORD_BYTES_MAX})` };
  if (available < length) return { kind: 'short', needBytes: length };
  const stored = (bytes[offset + 4] as number) * 0x100_0000 + (((bytes[offset + 5] as number) << 16) | ((bytes[offset + 6] as number) << 8) | (bytes[offset + 7] as number));
  const actual = crc32c(bytes, offset + 8, offset + length);
  if (stored !== actual) return { kind: 'bad', reason: `checksum ${hex(actual)} where the record says ${hex(stored)}` };
  try {
    return { kind: 'record', record: decodeBody(bytes, offset, length, views), length };
  } catch (e) {
    if (e instanceof GridError) return { kind: 'bad', reason: `a checksummed record that does not decode: ${e.message}` };
    throw e;
  }
}

function hex(v: number): string {
  return `0x${v.toString(16).padStart(8, '0')}`;
}

/** The last name and content type decoded (records in a row mostly repeat them). */
const NAME_SLOT: StringSlot = { bytes: null, value: '' };
const CONTENT_TYPE_SLOT: StringSlot = { bytes: null, value: '' };

function decodeBody(bytes: Uint8Array, offset: number, length: number, views: boolean): LogRecord {
  const r = new ByteReader(bytes, 'ERR_PERSISTENCE_CORRUPT', offset + 8, offset + length);
  const type = r.u8();
  const flags = r.u8();
  if (flags !== 0 && (flags !== FLAG_OWN_EXPIRY || type !== RECORD_TYPE.MAP_PUT)) r.fail(`flags ${flags}`);
  const partitionId = r.u16();
  const seq = r.u64();
  const partitionVersion = r.u64();
  const name = (): string => r.stringCached(LOG_NAME_BYTES_MAX, 'name', NAME_SLOT);
  const blob = (max: number, what: string): Buffer => (views ? r.view(max, what) : r.bytes(max, what));
  let out: LogRecord;
  switch (type) {
    case RECORD_TYPE.MAP_PUT:
      out = {
        type: 'mapPut',
        partitionId,
        seq,
        partitionVersion,
        name: name(),
        key: blob(LOG_KEY_BYTES_MAX, 'key'),
        value: blob(RECORD_BYTES_MAX, 'value'),
        contentType: optionalString(r),
        creationTimeMs: r.f64(),
        updateTimeMs: r.f64(),
        lastAccessTimeMs: r.f64(),
        expirationTimeMs: r.f64(),
        version: r.f64(),
        hits: r.u32(),
      };
      if (flags === FLAG_OWN_EXPIRY) {
        out.ttlMs = r.f64();
        out.maxIdleMs = r.f64();
        if (!validExpiry(out.ttlMs) || !validExpiry(out.maxIdleMs)) r.fail(`an own expiry of ${out.ttlMs} / ${out.maxIdleMs} ms`);
      }
      break;
    case RECORD_TYPE.MAP_REMOVE:
      out = { type: 'mapRemove', partitionId, seq, partitionVersion, name: name(), key: blob(LOG_KEY_BYTES_MAX, 'key') };
      break;
    case RECORD_TYPE.MAP_CLEAR:
      out = { type: 'mapClear', partitionId, seq, partitionVersion, name: name() };
      break;
    case RECORD_TYPE.QUEUE_ADD:
      out = { type: 'queueAdd', partitionId, seq, partitionVersion, name: name(), itemId: r.u64(), value: blob(RECORD_BYTES_MAX, 'value'), contentType: optionalString(r) };
      break;
    case RECORD_TYPE.QUEUE_REMOVE:
      out = { type: 'queueRemove', partitionId, seq, partitionVersion, name: name(), itemId: r.u64() };
      break;
    case RECORD_TYPE.QUEUE_CLEAR:
      out = { type: 'queueClear', partitionId, seq, partitionVersion, name: name() };
      break;
    case RECORD_TYPE.PARTITION_DROP:
      out = { type: 'partitionDrop', partitionId, seq, partitionVersion };
      break;
    default:
      return r.fail(`unknown record type ${type}`);
  }
  r.expectEnd('log record');
  return out;
}

function optionalString(r: ByteReader): string | null {
  const present = r.u8();
  if (present === 0) return null;
  if (present !== 1) r.fail(`a content-type marker of ${present}`);
  return r.stringCached(LOG_CONTENT_TYPE_BYTES_MAX, 'content type', CONTENT_TYPE_SLOT);
}
