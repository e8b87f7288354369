// Checks MurmurHash3_x86_32 against the published vectors (SMHasher, Wikipedia, the usual
// StackOverflow table), against the SMHasher verification value (0xB0F57EE3: hashes of 0..255-byte
// keys with seeds 256-i, hashed again), and that start/end hash a slice exactly like a copy would.
// Expected values were cross-checked with an independent Python transcription of the reference C.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { murmurHash3x86 } from '../../src/partition/murmur3.js';

const enc = new TextEncoder();
const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const signed = (u: number): number => u | 0;

const VECTORS: [Uint8Array, number, number][] = [
  [bytes(''), 0, 0],
  [bytes(''), 1, 0x514e28b7],
  [bytes(''), 0xffffffff, 0x81f16f39],
  [bytes('\xff\xff\xff\xff'), 0, 0x76293b50],
  [bytes('!Ce\x87'), 0, 0xf55b516b],
  [bytes('!Ce\x87'), 0x5082edee, 0x2362f9de],
  [bytes('!Ce'), 0, 0x7e4a8634],
  [bytes('!C'), 0, 0xa0f7b07a],
  [bytes('!'), 0, 0x72661cf4],
  [bytes('\0\0\0\0'), 0, 0x2362f9de],
  [bytes('\0\0\0'), 0, 0x85f0b427],
  [bytes('\0\0'), 0, 0x30f4c306],
  [bytes('\0'), 0, 0x514e28b7],
  [bytes('abc'), 0, 0xb3dd93fa],
  [bytes('abcd'), 0, 0x43ed676a],
  [bytes('Hello, world!'), 0x9747b28c, 0x24884cba],
  [enc.encode('ππππππππ'), 0x9747b28c, 0xd58063c1],
  [bytes('a'.repeat(256)), 0x9747b28c, 0x37405bdc],
  [bytes('aaaa'), 0x9747b28c, 0x5a97808a],
  [bytes('aaa'), 0x9747b28c, 0x283e0130],
  [bytes('aa'), 0x9747b28c, 0x5d211726],
  [bytes('a'), 0x9747b28c, 0x7fa09ea6],
  [bytes('abcd'), 0x9747b28c, 0xf0478627],
  [bytes('abc'), 0x9747b28c, 0xc84a62dd],
  [bytes('ab'), 0x9747b28c, 0x74875592],
  [bytes('The quick brown fox jumps over the lazy dog'), 0x9747b28c, 0x2fa826cd],
];

test('published vectors, as signed int32', () => {
  for (const [data, seed, expected] of VECTORS) {
    const got = murmurHash3x86(data, seed);
    assert.equal(got, signed(expected), `seed ${seed.toString(16)} data ${Buffer.from(data).toString('hex')}`);
    assert.equal(got | 0, got, 'result is an int32');
  }
});

test('SMHasher verification value', () => {
  const key = new Uint8Array(256);
  const hashes = new Uint8Array(256 * 4);
  const view = new DataView(hashes.buffer);
  for (let i = 0; i < 256; i++) {
    key[i] = i;
    view.setInt32(i * 4, murmurHash3x86(key, 256 - i, 0, i), true);
  }
  const final = murmurHash3x86(hashes, 0);
  assert.equal(final >>> 0, 0xb0f57ee3);
});

test('start/end hash a slice exactly like a copy of it', () => {
  const data = enc.encode('xxThe quick brown fox jumps over the lazy dogyyy');
  for (let start = 0; start < 6; start++) {
    for (let end = data.length - 5; end <= data.length; end++) {
      assert.equal(murmurHash3x86(data, 7, start, end), murmurHash3x86(data.slice(start, end), 7));
    }
  }
  assert.equal(murmurHash3x86(data, 0x9747b28c, 2, 45), signed(0x2fa826cd));
});

test('a Buffer hashes like the Uint8Array it wraps', () => {
  assert.equal(murmurHash3x86(Buffer.from('Hello, world!'), 0x9747b28c), signed(0x24884cba));
});
