// Which partition a key belongs to. The spec (cluster.md "Partitions and replicas") fixes it:
// MurmurHash3_x86_32 with seed 0x01000193 over the key's serialized String form as the reference's
// String serializer writes it (4-byte big-endian length of the UTF-8 bytes, then the UTF-8 bytes),
// then abs(hash) % partitionCount, where INT_MIN (whose abs does not fit an int32) maps to 0 like
// the reference's HashUtil.hashToIndex. Every member must compute the same answer, so this never changes.
import { assert } from '../util/assert.js';
import { murmurHash3x86LengthPrefixed } from './murmur3.js';

export const PARTITION_HASH_SEED = 0x01000193;
export const DEFAULT_PARTITION_COUNT = 271;

const INT32_MIN = -0x80000000;

/** The partition hash of a key's UTF-8 bytes (hashed length-prefixed, as serialized): a signed int32. */
export function keyHash(keyBytes: Uint8Array): number {
  return murmurHash3x86LengthPrefixed(keyBytes, PARTITION_HASH_SEED);
}

/** Maps a signed int32 hash to a partition id in [0, partitionCount). */
export function partitionIdOf(hash: number, partitionCount: number): number {
  assert(Number.isInteger(partitionCount) && partitionCount >= 1, 'partitionCount must be a positive integer');
  assert((hash | 0) === hash, 'hash must be a signed int32');
  if (hash === INT32_MIN) return 0;
  return Math.abs(hash) % partitionCount;
}

/** The partition of a key's canonical bytes: `partitionIdOf(keyHash(keyBytes), partitionCount)`. */
export function partitionIdOfKey(keyBytes: Uint8Array, partitionCount: number): number {
  return partitionIdOf(keyHash(keyBytes), partitionCount);
}
