// Reading one log segment back: record by record from a random-access byte source, with the rule
// that tells a torn last write from a corrupt middle (cluster.md "Persistence").
//
// - A sealed segment was synced whole before the next one was opened (log-writer.ts), so any bad
//   record in it is corruption: the scan stops with ERR_PERSISTENCE_CORRUPT naming file and offset.
// - In the open (newest) segment, a bad or incomplete record is a torn tail when no whole, valid
//   record starts anywhere after it: the bytes from there on are dropped (and reported), never
//   loaded. When a valid record does follow, the bad one sits in the middle of what was written:
//   that is corruption too, and nothing after it is guessed at.
// The check after a bad record looks at every byte offset up to the end of the segment, but runs a
// checksum only where a plausible length is found, so zero-filled or random tails cost one read.
import { GridError } from '../util/errors.js';
import { readRecord, RECORD_BYTES_MAX, RECORD_HEADER_BYTES, type LogRecord, type RecordRead } from './log-record.js';

/** Random access to a segment's bytes (a file, or a simulated one). */
export interface ByteSource {
  readonly size: number;
  /** Up to `length` bytes from `offset` (fewer only at the end). */
  readAt(offset: number, length: number): Uint8Array;
}

const READ_CHUNK_BYTES = 1024 * 1024;

/** A buffered window over a ByteSource, so records are read with few calls. */
export class SegmentReader {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;

  constructor(readonly source: ByteSource) {}

  /** The record at `offset` (see readRecord; `views`: keys and values point into the window); 'short' means the segment ends inside it. */
  recordAt(offset: number, views = false): RecordRead {
    if (!this.ensure(offset, 8)) return readRecord(this.window(offset), 0);
    const w = this.window(offset);
    const length = ((w[0] as number) * 0x100_0000 + (((w[1] as number) << 16) | ((w[2] as number) << 8) | (w[3] as number)));
    if (length >= RECORD_HEADER_BYTES && length <= RECORD_BYTES_MAX) this.ensure(offset, length);
    return readRecord(this.window(offset), 0, undefined, views);
  }

  /** The bytes [offset, offset + length) of the current window (after recordAt read that record there). */
  bytesAt(offset: number, length: number): Uint8Array {
    return this.buf.subarray(offset - this.bufStart, offset - this.bufStart + length);
  }

  /** The length field at `offset`, or -1 when fewer than 4 bytes are left. */
  lengthAt(offset: number): number {
    if (!this.ensure(offset, 4)) return -1;
    const w = this.buf;
    const i = offset - this.bufStart;
    return (w[i] as number) * 0x100_0000 + (((w[i + 1] as number) << 16) | ((w[i + 2] as number) << 8) | (w[i + 3] as number));
  }

  private window(offset: number): Uint8Array {
    return this.buf.subarray(offset - this.bufStart);
  }

  /** Makes the buffer hold [offset, offset + length) or up to the end; false when the source is shorter. */
  private ensure(offset: number, length: number): boolean {
    const end = Math.min(offset + length, this.source.size);
    if (offset >= this.bufStart && end <= this.bufStart + this.buf.length) return end === offset + length;
    const want = Math.min(Math.max(length, READ_CHUNK_BYTES), this.source.size - offset);
    this.buf = want <= 0 ? new Uint8Array(0) : this.source.readAt(offset, want);
    this.bufStart = offset;
    return this.buf.length >= length;
  }
}

export interface ScanOutcome {
  /** Records read. */
  readonly records: number;
  /** Where the valid records end: the segment's length when nothing was dropped. */
  readonly validBytes: number;
  /** The highest sequence number read (-1: none). */
  readonly lastSeq: number;
  /** A torn tail that was dropped (open segment only). */
  readonly tornTail: { readonly offset: number; readonly bytes: number; readonly reason: string } | null;
}

/**
 * Reads every record of a segment in order, handing each to `onRecord` with its offset, length and
 * a way to get its raw bytes (valid during the call); throws ERR_PERSISTENCE_CORRUPT (file and
 * offset in the message) when a bad record is not a torn tail. `views`: keys and values of the
 * records handed out are views, valid during the call only.
 */
export function scanSegment(
  source: ByteSource,
  file: string,
  open: boolean,
  onRecord: (r: LogRecord, offset: number, length: number, raw: () => Uint8Array) => void,
  views = false,
): ScanOutcome {
  const reader = new SegmentReader(source);
  let offset = 0;
  let records = 0;
  let lastSeq = -1;
  while (offset < source.size) {
    const r = reader.recordAt(offset, views);
    if (r.kind === 'record') {
      if (r.record.seq <= lastSeq) throw corrupt(file, offset, `sequence number ${r.record.seq} after ${lastSeq}`);
      lastSeq = r.record.seq;
      const at = offset;
      const length = r.length;
      onRecord(r.record, offset, length, () => reader.bytesAt(at, length));
      records++;
      offset += r.length;
      continue;
    }
    const reason = r.kind === 'short' ? `a record cut short (${source.size - offset} of ${r.needBytes} bytes)` : r.reason;
    if (!open) throw corrupt(file, offset, reason);
    const after = validRecordAfter(reader, offset + 1, source.size);
    if (after !== null) throw corrupt(file, offset, `${reason}; a valid record follows at offset ${after}`);
    return { records, validBytes: offset, lastSeq, tornTail: { offset, bytes: source.size - offset, reason } };
  }
  return { records, validBytes: offset, lastSeq, tornTail: null };
}

/** The first offset in [from, end) where a whole valid record starts, or null. */
function validRecordAfter(reader: SegmentReader, from: number, end: number): number | null {
  for (let o = from; o + RECORD_HEADER_BYTES <= end; o++) {
    const length = reader.lengthAt(o);
    if (length < RECORD_HEADER_BYTES || length > RECORD_BYTES_MAX || o + length > end) continue;
    if (reader.recordAt(o).kind === 'record') return o;
  }
  return null;
}

function corrupt(file: string, offset: number, reason: string): GridError {
  return new GridError('ERR_PERSISTENCE_CORRUPT', `${file}: corrupt log record at offset ${offset}: ${reason}`);
}
