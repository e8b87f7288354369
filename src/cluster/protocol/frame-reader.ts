// Incremental, I/O-free reader of a member-protocol byte stream (layout in frame.ts). Bytes arrive in
// chunks of any size, split anywhere; frames come out whole.
//
// Invariants:
// - The preamble is checked first (unless disabled), then each frame's 4-byte length is checked
//   against `frameBytesMax` as soon as those 4 bytes exist, BEFORE any of the body is waited for:
//   an oversized frame costs no more memory than the chunk that announced it.
// - After next() returns null, bufferedBytes < max(HEADER_BYTES, frameBytesMax): only the
//   unfinished frame is kept.
// - Chunks are kept in a list and copied at most once (into a payload that spans chunks), so
//   reading is linear in the bytes received, whatever the chunking.
// - The first error is sticky: every later call throws it again, and the buffered chunks are
//   released. The caller closes the connection.
import { assert } from '../../util/assert.js';
import { GridError } from '../../util/errors.js';
import { checkFrameLength, checkPreamble, decodeHeaderFields, HEADER_BYTES, PREAMBLE_BYTES, type Frame, type FrameHeader } from './frame.js';

export interface FrameReaderOptions {
  /** grid.member.frame.bytes.max: the largest whole frame (header included) accepted. */
  readonly frameBytesMax: number;
  /** Expect the 4-byte preamble before the first frame (default true). */
  readonly preamble?: boolean;
}

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  private frameBytesMax: number;
  private chunks: Buffer[] = [];
  private head = 0; // index of the first chunk with unread bytes
  private offset = 0; // unread bytes of chunks[head] start here
  private buffered = 0;
  private version: number | null;
  private frameLength = -1; // declared length of the frame being read, -1 before its length is known
  private header: FrameHeader | null = null;
  private failure: GridError | null = null;
  private readonly scratch = Buffer.allocUnsafe(HEADER_BYTES);

  constructor(options: FrameReaderOptions) {
    assert(Number.isInteger(options.frameBytesMax) && options.frameBytesMax >= HEADER_BYTES, `frameBytesMax must be an integer >= ${HEADER_BYTES}`);
    this.frameBytesMax = options.frameBytesMax;
    this.version = options.preamble === false ? 0 : null;
  }

  /** Bytes received and not yet returned in a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** The framing version from the preamble; null until it arrived (0 when no preamble is expected). */
  get preambleVersion(): number | null {
    return this.version;
  }

  /**
   * Changes the cap for frames whose length has not been read yet. A connection reads its first
   * frame (the handshake) under a small cap, then raises it to the configured limit without losing
   * bytes that arrived behind the handshake. Lowering it below a frame already announced is a
   * programmer error.
   */
  setFrameBytesMax(frameBytesMax: number): void {
    assert(Number.isInteger(frameBytesMax) && frameBytesMax >= HEADER_BYTES, `frameBytesMax must be an integer >= ${HEADER_BYTES}`);
    assert(this.frameLength < 0 || this.frameLength <= frameBytesMax, 'frameBytesMax lowered below the frame being read');
    this.frameBytesMax = frameBytesMax;
  }

  /** Adds received bytes; call next() until it returns null. */
  append(chunk: Buffer): void {
    if (this.failure !== null) throw this.failure;
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next complete frame, or null when more bytes are needed. Throws GridError on bad input. */
  next(): Frame | null {
    if (this.failure !== null) throw this.failure;
    try {
      return this.step();
    } catch (e) {
      this.failure = e instanceof GridError ? e : new GridError('ERR_PROTOCOL_MALFORMED', String(e), { cause: e });
      this.chunks = [];
      this.head = this.offset = this.buffered = 0;
      throw this.failure;
    }
  }

  /** append + every complete frame. On an error, frames decoded earlier in this call are dropped. */
  push(chunk: Buffer): Frame[] {
    this.append(chunk);
    const frames: Frame[] = [];
    for (let f = this.next(); f !== null; f = this.next()) frames.push(f);
    return frames;
  }

  private step(): Frame | null {
    if (this.version === null) {
      if (this.buffered < PREAMBLE_BYTES) return null;
      this.version = checkPreamble(this.peek(PREAMBLE_BYTES));
      this.consume(PREAMBLE_BYTES);
    }
    if (this.frameLength < 0) {
      if (this.buffered < 4) return null;
      const length = this.peek(4).readUInt32BE(0);
      checkFrameLength(length, this.frameBytesMax);
      this.frameLength = length;
    }
    if (this.header === null) {
      if (this.buffered < HEADER_BYTES) return null;
      this.header = decodeHeaderFields(this.peek(HEADER_BYTES), 4);
      this.consume(HEADER_BYTES);
    }
    const payloadBytes = this.frameLength - HEADER_BYTES;
    if (this.buffered < payloadBytes) return null;
    const h = this.header;
    const frame: Frame = {
      version: h.version,
      flags: h.flags,
      messageType: h.messageType,
      partitionId: h.partitionId,
      callId: h.callId,
      payload: this.take(payloadBytes),
    };
    this.frameLength = -1;
    this.header = null;
    return frame;
  }

  // The next n (<= HEADER_BYTES) unread bytes at offset 0 of the result, without consuming them.
  private peek(n: number): Buffer {
    const first = this.chunks[this.head] as Buffer;
    if (first.length - this.offset >= n) return first.subarray(this.offset, this.offset + n);
    this.copyOut(this.scratch, n);
    return this.scratch;
  }

  // The next n unread bytes, consumed: a view when they lie in one chunk, else one copy.
  private take(n: number): Buffer {
    if (n === 0) return EMPTY;
    const first = this.chunks[this.head] as Buffer;
    if (first.length - this.offset >= n) {
      const view = first.subarray(this.offset, this.offset + n);
      this.consume(n);
      return view;
    }
    const out = Buffer.allocUnsafe(n);
    this.copyOut(out, n);
    this.consume(n);
    return out;
  }

  private copyOut(dst: Buffer, n: number): void {
    let copied = 0;
    let i = this.head;
    let from = this.offset;
    while (copied < n) {
      const c = this.chunks[i] as Buffer;
      copied += c.copy(dst, copied, from, Math.min(c.length, from + n - copied));
      i++;
      from = 0;
    }
  }

  private consume(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const c = this.chunks[this.head] as Buffer;
      const left = c.length - this.offset;
      if (n < left) {
        this.offset += n;
        return;
      }
      n -= left;
      this.chunks[this.head] = EMPTY; // release the chunk now
      this.head++;
      this.offset = 0;
    }
    // Drop the consumed prefix of the list once it dominates, keeping each shift amortised O(1).
    if (this.head === this.chunks.length) {
      this.chunks.length = 0;
      this.head = 0;
    } else if (this.head >= 64 && this.head * 2 >= this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}
