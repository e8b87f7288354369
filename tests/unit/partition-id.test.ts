// Checks the key → partition mapping of cluster.md: murmur3 with seed 0x01000193 over the key's
// serialized String form (4-byte big-endian UTF-8 length, then the UTF-8 bytes), abs(hash) % count,
// INT_MIN → 0, results always in range. Expected hashes come from an independent Python
// transcription of the reference MurmurHash3 C code, fed the length-prefixed bytes; the INT_MIN key
// was found by a brute-force search in C over "key-" + 8 hex digits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PARTITION_COUNT, PARTITION_HASH_SEED, keyHash, partitionIdOf, partitionIdOfKey } from '../../src/partition/partition-id.js';
import { murmurHash3x86 } from '../../src/partition/murmur3.js';
import { SeededRandom } from '../../src/util/prng.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

test('seed and default count are the spec values', () => {
  assert.equal(PARTITION_HASH_SEED, 0x01000193);
  assert.equal(DEFAULT_PARTITION_COUNT, 271);
});

test('keyHash is murmur3 with the partition seed over the length-prefixed UTF-8 bytes', () => {
  // Independent vectors: [key, hash as int32, partition of 271].
  const vectors: [string, number, number][] = [
    ['a', 0x7d29931b, 73],
    ['key-1', 0x7f1aa046, 94],
    ['\u20ac', 0x8b03707a | 0, 42], // "€": 3 UTF-8 bytes
    ['hello', 0x76547ed5, 270],
    ['', 0x37077d1e, 11],
    ['\u043a\u043b\u044e\u0447', 0x7810e6f1, 265], // "ключ": 8 UTF-8 bytes, no tail
    ['key-d9dc0775', -0x80000000, 0], // the hash is INT_MIN: partition 0
  ];
  for (const [key, hash, partition] of vectors) {
    assert.equal(keyHash(utf8(key)), hash, `hash of ${JSON.stringify(key)}`);
    assert.equal(partitionIdOfKey(utf8(key), 271), partition, `partition of ${JSON.stringify(key)}`);
  }
});

test('keyHash equals murmur3 of an explicitly length-prefixed copy, for every tail length', () => {
  const random = new SeededRandom(7);
  for (let len = 0; len < 40; len++) {
    const key = new Uint8Array(len);
    for (let i = 0; i < len; i++) key[i] = random.nextInt(256);
    const prefixed = new Uint8Array(len + 4);
    new DataView(prefixed.buffer).setUint32(0, len, false);
    prefixed.set(key, 4);
    assert.equal(keyHash(key), murmurHash3x86(prefixed, PARTITION_HASH_SEED), `length ${len}`);
  }
});

test('partitionIdOf is abs(hash) % count', () => {
  assert.equal(partitionIdOf(0, 271), 0);
  assert.equal(partitionIdOf(271, 271), 0);
  assert.equal(partitionIdOf(272, 271), 1);
  assert.equal(partitionIdOf(-272, 271), 1);
  assert.equal(partitionIdOf(0x7fffffff, 271), 0x7fffffff % 271);
  assert.equal(partitionIdOf(-0x7fffffff, 271), 0x7fffffff % 271);
  assert.equal(partitionIdOf(0xd89cfad3 | 0, 271), Math.abs(0xd89cfad3 | 0) % 271);
});

test('INT_MIN maps to partition 0', () => {
  assert.equal(partitionIdOf(-0x80000000, 271), 0);
  assert.equal(partitionIdOf(-0x80000000, 7), 0);
});

test('results stay in range and spread evenly over random keys', () => {
  const random = new SeededRandom(42);
  const counts = new Array<number>(271).fill(0);
  for (let i = 0; i < 271_000; i++) {
    const id = partitionIdOfKey(utf8(`key-${random.nextInt(1e9)}-${i}`), 271);
    assert.ok(id >= 0 && id < 271);
    counts[id]!++;
  }
  assert.ok(Math.min(...counts) > 800 && Math.max(...counts) < 1200, 'roughly uniform');
  for (const count of [1, 2, 3, 32768]) assert.ok(partitionIdOf(random.nextInt(2 ** 32) | 0, count) < count);
});

test('a non-int32 hash or a bad count is a programmer error', () => {
  assert.throws(() => partitionIdOf(2 ** 31, 271));
  assert.throws(() => partitionIdOf(1.5, 271));
  assert.throws(() => partitionIdOf(1, 0));
});
