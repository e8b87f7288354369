// Member-protocol framing (cluster.md "Member protocol"). A connection opens with a 4-byte preamble,
// then carries frames, each a fixed 20-byte header and a payload:
//
//   preamble, once at the start of each direction of a connection:
//   offset  bytes  field       encoding
//   0       3      magic       ASCII "GRD" (lets the unified port tell us from HTTP and TLS)
//   3       1      version     u8, framing version of this connection (PROTOCOL_VERSION)
//
//   frame:
//   offset  bytes  field        encoding
//   0       4      frameLength  u32 BE: bytes of the whole frame INCLUDING this field, so
//                               payload length = frameLength - 20; 20 <= frameLength <= frameBytesMax
//   4       1      version      u8, PROTOCOL_VERSION_MIN..PROTOCOL_VERSION
//   5       1      flags        u8: bit 0 RESPONSE, bit 1 URGENT, bit 2 BACKUP_ACK; bits 3-7 must be 0
//   6       2      messageType  u16 BE (message-types.ts; 0 is never a type)
//   8       4      partitionId  i32 BE: -1 = none, else 0..2^31-1
//   12      8      callId       u64 BE: 0 = none (one-way); at most 2^53-1 so it fits a JS number
//   20      n      payload      n = frameLength - 20 bytes, the message codec's bytes
//
// Invariants: the length comes first so a reader can refuse an oversized frame before buffering it;
// every header field is validated when decoded (ERR_PROTOCOL_MALFORMED); a new flag bit or field
// needs a new framing version. Encoding a frame over the limit is ERR_PROTOCOL_FRAME_TOO_LARGE.
import { assert } from '../../util/assert.js';
import { GridError } from '../../util/errors.js';

export const PROTOCOL_VERSION = 3;
export const PROTOCOL_VERSION_MIN = 3;
export const PREAMBLE_MAGIC = Buffer.from('GRD', 'latin1');
export const PREAMBLE = Buffer.from([0x47, 0x52, 0x44, PROTOCOL_VERSION]); // 'GRD' + the version
export const PREAMBLE_BYTES = 4;
export const HEADER_BYTES = 20;
/** Default of grid.member.frame.bytes.max. */
export const FRAME_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;

export const FLAG_RESPONSE = 1 << 0;
export const FLAG_URGENT = 1 << 1;
export const FLAG_BACKUP_ACK = 1 << 2;
const FLAGS_KNOWN = FLAG_RESPONSE | FLAG_URGENT | FLAG_BACKUP_ACK;

export const PARTITION_NONE = -1;
export const CALL_ID_NONE = 0;

export interface FrameHeader {
  readonly version: number;
  readonly flags: number;
  readonly messageType: number;
  readonly partitionId: number;
  readonly callId: number;
}

export interface Frame extends FrameHeader {
  /** The payload; may share memory with a received chunk: copy what must outlive the frame. */
  readonly payload: Buffer;
}

/** What a sender fills in; `version` defaults to PROTOCOL_VERSION. */
export interface FrameFields {
  readonly version?: number;
  readonly flags?: number;
  readonly messageType: number;
  readonly partitionId?: number;
  readonly callId?: number;
}

/** The 20 header bytes for a payload of `payloadBytes` (send them with the payload, e.g. by writev). */
export function encodeFrameHeader(fields: FrameFields, payloadBytes: number, frameBytesMax = FRAME_BYTES_MAX_DEFAULT): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  writeHeader(header, fields, payloadBytes, frameBytesMax);
  return header;
}

/** One buffer holding the header and a copy of the payload. */
export function encodeFrame(fields: FrameFields, payload: Uint8Array, frameBytesMax = FRAME_BYTES_MAX_DEFAULT): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  writeHeader(out, fields, payload.length, frameBytesMax);
  out.set(payload, HEADER_BYTES);
  return out;
}

function writeHeader(out: Buffer, f: FrameFields, payloadBytes: number, frameBytesMax: number): void {
  const version = f.version ?? PROTOCOL_VERSION;
  const flags = f.flags ?? 0;
  const partitionId = f.partitionId ?? PARTITION_NONE;
  const callId = f.callId ?? CALL_ID_NONE;
  assert(version >= 1 && version <= 0xff && Number.isInteger(version), `frame version out of range: ${version}`);
  assert((flags & ~FLAGS_KNOWN) === 0 && Number.isInteger(flags), `unknown frame flag bits: ${flags}`);
  assert(Number.isInteger(f.messageType) && f.messageType >= 1 && f.messageType <= 0xffff, `bad message type: ${f.messageType}`);
  assert(Number.isInteger(partitionId) && partitionId >= -1 && partitionId <= 0x7fff_ffff, `bad partition id: ${partitionId}`);
  assert(Number.isSafeInteger(callId) && callId >= 0, `bad call id: ${callId}`);
  assert(Number.isInteger(payloadBytes) && payloadBytes >= 0, `bad payload length: ${payloadBytes}`);
  const frameLength = HEADER_BYTES + payloadBytes;
  if (frameLength > frameBytesMax) {
    throw new GridError('ERR_PROTOCOL_FRAME_TOO_LARGE', `a frame of ${frameLength} bytes exceeds the maximum of ${frameBytesMax}`);
  }
  assert(frameLength <= 0xffff_ffff, 'frame length does not fit in u32');
  out.writeUInt32BE(frameLength, 0);
  out[4] = version;
  out[5] = flags;
  out.writeUInt16BE(f.messageType, 6);
  out.writeInt32BE(partitionId, 8);
  out.writeUInt32BE(Math.floor(callId / 0x1_0000_0000), 12);
  out.writeUInt32BE(callId % 0x1_0000_0000, 16);
}

/**
 * Checks a declared frame length (the first 4 bytes of a frame) BEFORE the frame is buffered.
 * Too large → ERR_PROTOCOL_FRAME_TOO_LARGE; shorter than a header → ERR_PROTOCOL_MALFORMED.
 */
export function checkFrameLength(frameLength: number, frameBytesMax: number): void {
  if (frameLength > frameBytesMax) {
    throw new GridError('ERR_PROTOCOL_FRAME_TOO_LARGE', `a frame declares ${frameLength} bytes, above the maximum of ${frameBytesMax}`);
  }
  if (frameLength < HEADER_BYTES) {
    throw new GridError('ERR_PROTOCOL_MALFORMED', `a frame declares ${frameLength} bytes, less than its ${HEADER_BYTES}-byte header`);
  }
}

/** Decodes and validates the 16 header bytes after the length field, at `buf[at, at + 16)`. */
export function decodeHeaderFields(buf: Buffer, at: number): FrameHeader {
  const version = buf[at] as number;
  const flags = buf[at + 1] as number;
  const messageType = buf.readUInt16BE(at + 2);
  const partitionId = buf.readInt32BE(at + 4);
  const callHigh = buf.readUInt32BE(at + 8);
  const callLow = buf.readUInt32BE(at + 12);
  if (version < PROTOCOL_VERSION_MIN || version > PROTOCOL_VERSION) malformed(`unsupported frame version ${version}`);
  if ((flags & ~FLAGS_KNOWN) !== 0) malformed(`unknown frame flag bits 0x${flags.toString(16)}`);
  if (messageType === 0) malformed('message type 0');
  if (partitionId < -1) malformed(`partition id ${partitionId}`);
  if (callHigh > 0x1f_ffff) malformed('call id above 2^53 - 1');
  return { version, flags, messageType, partitionId, callId: callHigh * 0x1_0000_0000 + callLow };
}

/** Validates a 4-byte preamble and returns its framing version. */
export function checkPreamble(b: Uint8Array): number {
  assert(b.length >= PREAMBLE_BYTES, 'preamble needs 4 bytes');
  if (b[0] !== 0x47 || b[1] !== 0x52 || b[2] !== 0x44) malformed('the connection does not start with the "GRD" preamble');
  const version = b[3] as number;
  if (version < PROTOCOL_VERSION_MIN || version > PROTOCOL_VERSION) malformed(`unsupported protocol version ${version} in the preamble`);
  return version;
}

function malformed(message: string): never {
  throw new GridError('ERR_PROTOCOL_MALFORMED', message);
}
