// Checks the key → partition mapping of cluster.md: murmur3 with seed 0x01000193 over UTF-8 bytes,
// abs(hash) % count, INT_MIN → 0, results always in range. Expected hashes come from an independent
// Python transcription of the reference MurmurHash3 C code.
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

test('keyHash is murmur3 with the partition seed', () => {
  assert.equal(keyHash(utf8('k000000001')), 0xd89cfad3 | 0);
  assert.equal(keyHash(utf8('hello')), 0x54f3302a);
  assert.equal(keyHash(utf8('ключ')), murmurHash3x86(utf8('ключ'), 0x01000193));
});

test('partitionIdOf is abs(hash) % count', () => {
  assert.equal(partitionIdOf(0, 271), 0);
  assert.equal(partitionIdOf(271, 271), 0);
  assert.equal(partitionIdOf(272, 271), 1);
  assert.equal(partitionIdOf(-272, 271), 1);
  assert.equal(partitionIdOf(0x7fffffff, 271), 0x7fffffff % 271);
  assert.equal(partitionIdOf(-0x7fffffff, 271), 0x7fffffff % 271);
  assert.equal(partitionIdOf(0xd89cfad3 | 0, 271), Math.abs(0xd89cfad3 | 0) % 271);
  assert.equal(partitionIdOfKey(utf8('hello'), 271), 0x54f3302a % 271);
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
