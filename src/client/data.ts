// The serialized form (Data) the official clients send and expect for keys and values, and its
// mapping to what Grid stores: bytes plus an optional content type, the form REST writes
// (spec/client.md "Keys and values"; facts in reference/client-protocol.md §5 and §8). I/O-free.
//
// Data = int32 BE partition hash (0: compute it from the payload) + int32 BE serializer type id +
// payload (big-endian). Grid names three types: String (-11: int32 BE length of the UTF-8 bytes,
// then the bytes), byte[] (-12: int32 BE length, then the bytes) and HazelcastJsonValue (-130: a
// String payload). Every other type is kept whole (its Data bytes) under the content type
// application/x-grid-serialized, so a client reads back exactly what it wrote.
//
// Invariants:
// - A client String key is the REST key with the same characters and lands in the same partition:
//   the partition hash of a String Data (MurmurHash3 over bytes 8..end, seed 0x01000193) equals
//   keyHash() of its UTF-8 bytes, which hashes the same length-prefixed form.
// - Decoding never trusts a length: every one is checked against the bytes present.
import { GridError } from '../util/errors.js';
import { murmurHash3x86 } from '../partition/murmur3.js';
import { PARTITION_HASH_SEED } from '../partition/partition-id.js';
import { decodeUtf8 } from './message.js';
import { CONTENT_TYPE_SERIALIZED, SERIALIZED_HEADER_BYTES, valueKind, type ValueKind } from '../data/value-kind.js';

export { CONTENT_TYPE_SERIALIZED, textKind } from '../data/value-kind.js';

export const DATA_HEADER_BYTES = SERIALIZED_HEADER_BYTES;
export const TYPE_STRING = -11;
export const TYPE_BYTE_ARRAY = -12;
export const TYPE_JSON = -130;

export const CONTENT_TYPE_TEXT = 'text/plain; charset=utf-8';
export const CONTENT_TYPE_JSON = 'application/json';
export const CONTENT_TYPE_BYTES = 'application/octet-stream';

/** A value as the store keeps it (what a REST write stores). */
export interface StoredForm {
  readonly value: Buffer;
  readonly contentType: string | null;
}

function malformed(message: string): GridError {
  return new GridError('ERR_CLIENT_PROTOCOL', message);
}

/** The serializer type id of a Data frame. */
export function dataType(data: Uint8Array): number {
  if (data.length < DATA_HEADER_BYTES) throw malformed(`a serialized value of ${data.length} bytes (at least ${DATA_HEADER_BYTES})`);
  return int32BE(data, 4);
}

/** The partition hash of a Data frame, as the clients compute it. */
export function dataPartitionHash(data: Uint8Array): number {
  const view = Buffer.from(data.buffer, data.byteOffset, data.length);
  if (data.length < DATA_HEADER_BYTES) throw malformed(`a serialized value of ${data.length} bytes (at least ${DATA_HEADER_BYTES})`);
  const given = view.readInt32BE(0);
  return given !== 0 ? given : murmurHash3x86(data, PARTITION_HASH_SEED, DATA_HEADER_BYTES, data.length);
}

/** A big-endian int32 at `at` (the caller checked the bounds): no Buffer view made per read. */
function int32BE(data: Uint8Array, at: number): number {
  return ((data[at] as number) << 24) | ((data[at + 1] as number) << 16) | ((data[at + 2] as number) << 8) | (data[at + 3] as number);
}

/** The payload bytes of a length-prefixed payload (String, byte[], JSON): a view. */
function lengthPrefixed(data: Uint8Array, what: string): Buffer {
  if (data.length < DATA_HEADER_BYTES + 4) throw malformed(`${what}: ${data.length} bytes, too short for its length`);
  const length = int32BE(data, DATA_HEADER_BYTES);
  if (length < 0) throw malformed(`${what}: a null or negative length (${length})`);
  if (DATA_HEADER_BYTES + 4 + length !== data.length) throw malformed(`${what}: a length of ${length} in ${data.length - DATA_HEADER_BYTES - 4} payload bytes`);
  return Buffer.from(data.buffer, data.byteOffset + DATA_HEADER_BYTES + 4, length);
}

/**
 * The key a client sent, as Grid names keys: a String key's characters. Any other type has no REST
 * spelling and is refused (client error 23, ILLEGAL_ARGUMENT).
 */
export function keyOfData(data: Uint8Array): string {
  const type = dataType(data);
  if (type !== TYPE_STRING) {
    throw new GridError('ERR_CLIENT_KEY_TYPE', `Grid keys are strings: a key of serializer type ${type} cannot be stored (use a String key)`);
  }
  return decodeUtf8(lengthPrefixed(data, 'a String key'), 'a String key');
}

/** What the store keeps for a value a client sent (copies: the frame's memory is the read's). */
export function storedFormOfData(data: Uint8Array): StoredForm {
  const type = dataType(data);
  switch (type) {
    case TYPE_STRING:
      return { value: Buffer.from(lengthPrefixed(data, 'a String value')), contentType: CONTENT_TYPE_TEXT };
    case TYPE_JSON:
      return { value: Buffer.from(lengthPrefixed(data, 'a JSON value')), contentType: CONTENT_TYPE_JSON };
    case TYPE_BYTE_ARRAY:
      return { value: Buffer.from(lengthPrefixed(data, 'a byte[] value')), contentType: CONTENT_TYPE_BYTES };
    default:
      return { value: Buffer.from(data), contentType: CONTENT_TYPE_SERIALIZED };
  }
}

/** The Data a client reads for a stored value (the mapping of spec/client.md). */
export function dataOfStored(value: Uint8Array, contentType: string | null): Buffer {
  const kind = valueKind(value, contentType);
  const out = Buffer.allocUnsafe(dataLengthOfKind(value, kind));
  writeDataOfKind(out, 0, value, kind);
  return out;
}

/** The bytes of dataOfStored for a value whose kind the caller has (one valueKind per answer). */
export function dataLengthOfKind(value: Uint8Array, kind: ValueKind): number {
  return kind === 'serialized' ? value.length : DATA_HEADER_BYTES + 4 + value.length;
}

/** Writes dataOfStored's bytes into `target` at `at` (an answer built in one buffer), for a value whose kind the caller has. */
export function writeDataOfKind(target: Buffer, at: number, value: Uint8Array, kind: ValueKind): void {
  if (kind === 'serialized') {
    // Written by a client as some other type: handed back whole.
    target.set(value, at);
    return;
  }
  writeLengthPrefixed(target, at, kind === 'text' ? TYPE_STRING : kind === 'json' ? TYPE_JSON : TYPE_BYTE_ARRAY, value);
}

/** The String Data of a stored key (its UTF-8 bytes, as REST and client writes store keys). */
export function keyData(keyBytes: Uint8Array): Buffer {
  return lengthPrefixedData(TYPE_STRING, keyBytes);
}

/** A String Data of `text` (a key or value a test or an event sends). */
export function stringData(text: string): Buffer {
  return lengthPrefixedData(TYPE_STRING, Buffer.from(text, 'utf8'));
}

function lengthPrefixedData(type: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(DATA_HEADER_BYTES + 4 + payload.length);
  writeLengthPrefixed(out, 0, type, payload);
  return out;
}

function writeLengthPrefixed(target: Buffer, at: number, type: number, payload: Uint8Array): void {
  target.writeInt32BE(0, at);
  target.writeInt32BE(type, at + 4);
  target.writeInt32BE(payload.length, at + 8);
  target.set(payload, at + 12);
}
