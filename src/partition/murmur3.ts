// MurmurHash3_x86_32 (Austin Appleby, public domain), as the reference system computes it: blocks are
// read little-endian, the result is a signed int32 (what Java's `int` holds). Pure and allocation-free;
// `start`/`end` select a slice without copying. Verified in tests/unit/murmur3.test.ts against the
// published vectors and the SMHasher verification value 0xB0F57EE3.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** Hashes `data[start, end)` with `seed`; returns a signed 32-bit integer. */
export function murmurHash3x86(data: Uint8Array, seed: number, start = 0, end = data.length): number {
  let h1 = seed | 0;
  const blocksEnd = start + ((end - start) & ~3);
  let i = start;
  for (; i < blocksEnd; i += 4) {
    let k1 = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k1 = Math.imul(k1, C1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, C2);
    h1 ^= k1;
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  }
  const tail = end - i;
  if (tail > 0) {
    let k1 = data[i]!;
    if (tail > 1) k1 ^= data[i + 1]! << 8;
    if (tail > 2) k1 ^= data[i + 2]! << 16;
    k1 = Math.imul(k1, C1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, C2);
    h1 ^= k1;
  }
  h1 ^= end - start;
  return fmix32(h1);
}

/**
 * Hashes the 4-byte big-endian length of `data[start, end)` followed by those bytes, without copying:
 * the serialized form the reference's String serializer writes (cluster.md, "Partitions and replicas").
 */
export function murmurHash3x86LengthPrefixed(data: Uint8Array, seed: number, start = 0, end = data.length): number {
  const n = end - start;
  // The prefix is exactly one block; read little-endian like every other block.
  let k0 = ((n >>> 24) & 0xff) | (((n >>> 16) & 0xff) << 8) | (((n >>> 8) & 0xff) << 16) | ((n & 0xff) << 24);
  k0 = Math.imul(k0, C1);
  k0 = (k0 << 15) | (k0 >>> 17);
  k0 = Math.imul(k0, C2);
  let h1 = (seed | 0) ^ k0;
  h1 = (h1 << 13) | (h1 >>> 19);
  h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  const blocksEnd = start + (n & ~3);
  let i = start;
  for (; i < blocksEnd; i += 4) {
    let k1 = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k1 = Math.imul(k1, C1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, C2);
    h1 ^= k1;
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  }
  const tail = end - i;
  if (tail > 0) {
    let k1 = data[i]!;
    if (tail > 1) k1 ^= data[i + 1]! << 8;
    if (tail > 2) k1 ^= data[i + 2]! << 16;
    k1 = Math.imul(k1, C1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, C2);
    h1 ^= k1;
  }
  h1 ^= n + 4;
  return fmix32(h1);
}

/** The finalisation mix: forces every input bit to avalanche. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
