// The client protocol's framing (the reference's Open Binary Client Protocol 2.x, spec/client.md;
// facts in reference/client-protocol.md §1). I/O-free.
//
// A frame is `int32 LE length` (the 6 header bytes included) + `uint16 LE flags` + content. A
// message is an initial frame and zero or more further frames, up to the frame flagged FINAL. The
// initial frame of a request holds `int32 messageType`, `int64 correlationId`, `int32 partitionId`
// and then the call's fixed-size parameters; that of a response `int32 messageType`, `int64
// correlationId`, `uint8 backupAcks` and then the fixed-size answer fields.
//
// Invariants:
// - ClientFrameReader checks a frame's announced length against `frameBytesMax` as soon as its 4
//   length bytes exist, before waiting for any of its content, and a message's total against
//   `messageBytesMax`: an oversized frame or message costs no more memory than the read that
//   announced it.
// - Frames come out as views of the bytes received when a frame lies in one read (no copy), else
//   as one copy.
// - The first error is sticky: every later call throws it again and the buffered bytes are
//   released; the caller closes the connection.
// - A fragmented message (a first frame without both fragment bits) is refused: the official
//   clients never fragment the calls Grid serves, and the member never fragments its answers.
import { assert } from '../util/assert.js';
import { GridError } from '../util/errors.js';

export const FRAME_HEADER_BYTES = 6;
export const PREAMBLE = Buffer.from('CP2', 'latin1');

export const FLAG_BEGIN_FRAGMENT = 0x8000;
export const FLAG_END_FRAGMENT = 0x4000;
export const FLAG_UNFRAGMENTED = FLAG_BEGIN_FRAGMENT | FLAG_END_FRAGMENT;
export const FLAG_FINAL = 0x2000;
export const FLAG_BEGIN_STRUCT = 0x1000;
export const FLAG_END_STRUCT = 0x0800;
export const FLAG_NULL = 0x0400;
export const FLAG_EVENT = 0x0200;
export const FLAG_BACKUP_AWARE = 0x0100;

/** Offsets in an initial frame's content. */
export const OFFSET_TYPE = 0;
export const OFFSET_CORRELATION = 4;
export const OFFSET_PARTITION = 12;
export const OFFSET_BACKUP_ACKS = 12;
/** Where a request's (and an event's) fixed-size parameters start. */
export const REQUEST_FIXED = 16;
/** Where a response's fixed-size fields start. */
export const RESPONSE_FIXED = 13;

export interface ClientFrame {
  readonly flags: number;
  /** The frame's content (after its 6-byte header); a view of the bytes received. */
  readonly content: Buffer;
}

/** One message: its frames in order; frames[0] is the initial frame, the last one carries FINAL. */
export interface ClientMessage {
  readonly frames: readonly ClientFrame[];
  /** Bytes of all its frames, headers included. */
  readonly bytes: number;
}

export interface ClientFrameReaderOptions {
  /** The largest frame accepted, header included. */
  readonly frameBytesMax: number;
  /** The largest message accepted, every frame's header included (default: frameBytesMax + 64 KiB). */
  readonly messageBytesMax?: number;
  /** Expect the 3 bytes `CP2` before the first frame (default true; false when a sniffer consumed them). */
  readonly preamble?: boolean;
  /** The least content of an initial frame: 16 for requests (default), 13 for a reader of answers. */
  readonly initialFrameBytesMin?: number;
}

function malformed(message: string): GridError {
  return new GridError('ERR_CLIENT_PROTOCOL', message);
}

/** Incremental reader: append() the bytes of a connection, then next() until it returns null. */
export class ClientFrameReader {
  private readonly frameBytesMax: number;
  private readonly messageBytesMax: number;
  private preambleLeft: number;
  private readonly initialFrameBytesMin: number;
  private chunks: Buffer[] = [];
  /** Bytes of chunks[0] already consumed (the rest of the chunk is not re-sliced per frame). */
  private offset = 0;
  private buffered = 0;
  /** Frames of the message being read. */
  private frames: ClientFrame[] = [];
  private messageBytes = 0;
  private failure: GridError | null = null;

  constructor(options: ClientFrameReaderOptions) {
    assert(Number.isInteger(options.frameBytesMax) && options.frameBytesMax >= FRAME_HEADER_BYTES + REQUEST_FIXED, 'frameBytesMax too small for an initial frame');
    this.frameBytesMax = options.frameBytesMax;
    this.messageBytesMax = options.messageBytesMax ?? options.frameBytesMax + 64 * 1024;
    assert(this.messageBytesMax >= this.frameBytesMax, 'messageBytesMax below frameBytesMax');
    this.preambleLeft = options.preamble === false ? 0 : PREAMBLE.length;
    this.initialFrameBytesMin = options.initialFrameBytesMin ?? REQUEST_FIXED;
  }

  /** Bytes received that no returned message holds yet. */
  get bufferedBytes(): number {
    return this.buffered + this.messageBytes;
  }

  append(chunk: Buffer): void {
    if (this.failure !== null) throw this.failure;
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next whole message, or null when more bytes are needed. Throws GridError on bad input. */
  next(): ClientMessage | null {
    if (this.failure !== null) throw this.failure;
    try {
      return this.step();
    } catch (e) {
      const error = e instanceof GridError ? e : malformed(String(e));
      this.failure = error;
      this.chunks = [];
      this.offset = 0;
      this.frames = [];
      this.buffered = 0;
      this.messageBytes = 0;
      throw error;
    }
  }

  private step(): ClientMessage | null {
    if (this.preambleLeft > 0) {
      if (this.buffered === 0) return null;
      if (this.buffered < this.preambleLeft) {
        // Check what has come so far: garbage is refused without waiting for the rest.
        const got = this.peek(this.buffered);
        for (let i = 0; i < got.length; i++) if (got[i] !== PREAMBLE[PREAMBLE.length - this.preambleLeft + i]) throw malformed('the connection does not start with CP2');
        return null;
      }
      const got = this.take(this.preambleLeft);
      for (let i = 0; i < got.length; i++) if (got[i] !== PREAMBLE[PREAMBLE.length - this.preambleLeft + i]) throw malformed('the connection does not start with CP2');
      this.preambleLeft = 0;
    }
    for (;;) {
      if (this.buffered < 4) return null;
      const length = this.contiguous(4).readInt32LE(this.offset);
      if (length < FRAME_HEADER_BYTES) throw malformed(`a frame length of ${length} (at least ${FRAME_HEADER_BYTES})`);
      if (length > this.frameBytesMax) {
        throw new GridError('ERR_CLIENT_FRAME_TOO_LARGE', `a frame of ${length} bytes is larger than grid.client.frame.bytes.max (${this.frameBytesMax})`);
      }
      if (this.messageBytes + length > this.messageBytesMax) {
        throw new GridError('ERR_CLIENT_FRAME_TOO_LARGE', `a message of more than ${this.messageBytesMax} bytes`);
      }
      if (this.buffered < length) return null;
      // One view per frame: its content (the header is read in place).
      const chunk = this.contiguous(length);
      const at = this.offset;
      const flags = chunk.readUInt16LE(at + 4);
      const content = chunk.subarray(at + FRAME_HEADER_BYTES, at + length);
      this.consume(length);
      if (this.frames.length === 0) {
        if ((flags & FLAG_UNFRAGMENTED) !== FLAG_UNFRAGMENTED) throw malformed('a fragmented message (fragments are not supported)');
        if (content.length < this.initialFrameBytesMin) throw malformed(`an initial frame of ${content.length} bytes (at least ${this.initialFrameBytesMin})`);
      }
      this.frames.push({ flags, content });
      this.messageBytes += length;
      if ((flags & FLAG_FINAL) !== 0) {
        const message: ClientMessage = { frames: this.frames, bytes: this.messageBytes };
        this.frames = [];
        this.messageBytes = 0;
        return message;
      }
    }
  }

  /** The first n buffered bytes (a view when they lie in one chunk), without consuming them. */
  private peek(n: number): Buffer {
    const chunk = this.contiguous(n);
    return chunk.subarray(this.offset, this.offset + n);
  }

  /** Consumes and returns the first n buffered bytes (n <= buffered). */
  private take(n: number): Buffer {
    const out = this.peek(n);
    this.consume(n);
    return out;
  }

  /**
   * chunks[0], made to hold the first n unconsumed bytes from `offset` on (n <= buffered): as it is
   * when they lie in it, else joined with the chunks after it.
   */
  private contiguous(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length - this.offset >= n) return first;
    const joined = Buffer.concat([first.subarray(this.offset), ...this.chunks.slice(1)]);
    this.chunks = [joined];
    this.offset = 0;
    return joined;
  }

  /** Marks n bytes consumed (they lie in chunks[0], after `contiguous`). */
  private consume(n: number): void {
    this.offset += n;
    this.buffered -= n;
    if (this.offset === (this.chunks[0] as Buffer).length) {
      this.chunks.shift();
      this.offset = 0;
    }
  }
}
