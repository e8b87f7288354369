// Checks member-protocol framing: src/cluster/protocol/frame.ts (layout, encode, header validation),
// src/cluster/protocol/frame-reader.ts (incremental reading) and src/util/bytes.ts (bounds-checked
// reader/writer). A stream of preamble + frames is fed split at every byte boundary, byte by byte and
// all at once, and must decode to the same frames; oversized lengths must fail as soon as the length
// is known, with nothing buffered; malformed preambles and headers fail with ERR_PROTOCOL_MALFORMED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CALL_ID_NONE,
  encodeFrame,
  encodeFrameHeader,
  FLAG_BACKUP_ACK,
  FLAG_RESPONSE,
  FLAG_URGENT,
  HEADER_BYTES,
  PARTITION_NONE,
  PREAMBLE,
  PROTOCOL_VERSION,
  PROTOCOL_VERSION_MIN,
  type Frame,
  type FrameFields,
} from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';
import { AssertionError } from '../../src/util/assert.js';
import { ByteReader, ByteWriter } from '../../src/util/bytes.js';
import { GridError, type ErrorCode } from '../../src/util/errors.js';

const MAX = 1024 * 1024;

function gridError(code: ErrorCode): (e: unknown) => boolean {
  return (e) => e instanceof GridError && e.code === code;
}

function plain(f: Frame): object {
  return { ...f, payload: Buffer.from(f.payload).toString('hex') };
}

const FIELDS: FrameFields[] = [
  { messageType: HANDSHAKE_REQUEST, callId: 1 },
  { messageType: HANDSHAKE_RESPONSE, flags: FLAG_RESPONSE, callId: 1 },
  { messageType: 0xffff, flags: FLAG_RESPONSE | FLAG_URGENT | FLAG_BACKUP_ACK, partitionId: 0x7fff_ffff, callId: Number.MAX_SAFE_INTEGER },
  { messageType: 7, partitionId: 270, callId: 0x1_0000_0001 },
];
const PAYLOADS = [Buffer.from('hello'), Buffer.alloc(0), Buffer.from([0, 1, 2, 255]), Buffer.alloc(300, 0xab)];

function sampleStream(): { bytes: Buffer; expected: object[] } {
  const frames = FIELDS.map((f, i) => encodeFrame(f, PAYLOADS[i] as Buffer));
  const expected = FIELDS.map((f, i) => ({
    version: PROTOCOL_VERSION,
    flags: f.flags ?? 0,
    messageType: f.messageType,
    partitionId: f.partitionId ?? PARTITION_NONE,
    callId: f.callId ?? CALL_ID_NONE,
    payload: (PAYLOADS[i] as Buffer).toString('hex'),
  }));
  return { bytes: Buffer.concat([PREAMBLE, ...frames]), expected };
}

test('the preamble is "GRD" and the protocol version; the header is 20 bytes as documented', () => {
  assert.deepEqual([...PREAMBLE], [0x47, 0x52, 0x44, PROTOCOL_VERSION]);
  const h = encodeFrameHeader({ messageType: 0x0102, flags: FLAG_URGENT, partitionId: -1, callId: 0x0000_0003_0000_0004 }, 5);
  assert.equal(h.length, HEADER_BYTES);
  assert.equal(h.toString('hex'), '00000019' + PROTOCOL_VERSION.toString(16).padStart(2, '0') + '02' + '0102' + 'ffffffff' + '00000003' + '00000004');
});

test('round trip split at every byte boundary (two chunks)', () => {
  const { bytes, expected } = sampleStream();
  for (let k = 0; k <= bytes.length; k++) {
    const r = new FrameReader({ frameBytesMax: MAX });
    const got = [...r.push(bytes.subarray(0, k)), ...r.push(bytes.subarray(k))].map(plain);
    assert.deepEqual(got, expected, `split at ${k}`);
    assert.equal(r.bufferedBytes, 0);
  }
});

test('round trip split into three chunks at every pair of boundaries', () => {
  const { bytes, expected } = sampleStream();
  const n = 80; // the first two frames and a bit: every pair of cuts inside headers and payloads
  for (let a = 0; a <= n; a++) {
    for (let b = a; b <= n; b++) {
      const r = new FrameReader({ frameBytesMax: MAX });
      const got = [...r.push(bytes.subarray(0, a)), ...r.push(bytes.subarray(a, b)), ...r.push(bytes.subarray(b))];
      assert.deepEqual(got.map(plain), expected, `cuts at ${a}, ${b}`);
    }
  }
});

test('byte-by-byte feeding and all-at-once feeding give the same frames', () => {
  const { bytes, expected } = sampleStream();
  const r = new FrameReader({ frameBytesMax: MAX });
  const got: Frame[] = [];
  for (let i = 0; i < bytes.length; i++) got.push(...r.push(bytes.subarray(i, i + 1)));
  assert.deepEqual(got.map(plain), expected);
  assert.deepEqual(new FrameReader({ frameBytesMax: MAX }).push(bytes).map(plain), expected);
});

test('many frames in one chunk', () => {
  const frames = Array.from({ length: 1000 }, (_, i) => encodeFrame({ messageType: 3, partitionId: i % 271, callId: i + 1 }, Buffer.from(`p${i}`)));
  const r = new FrameReader({ frameBytesMax: MAX });
  const got = r.push(Buffer.concat([PREAMBLE, ...frames]));
  assert.equal(got.length, 1000);
  got.forEach((f, i) => {
    assert.equal(f.callId, i + 1);
    assert.equal(f.payload.toString(), `p${i}`);
  });
});

test('a large frame in thousands of small chunks is read in linear time', () => {
  const payload = Buffer.alloc(MAX - HEADER_BYTES, 7);
  const bytes = Buffer.concat([PREAMBLE, encodeFrame({ messageType: 3 }, payload)]);
  const r = new FrameReader({ frameBytesMax: MAX });
  const start = performance.now();
  const got: Frame[] = [];
  for (let i = 0; i < bytes.length; i += 16) {
    got.push(...r.push(bytes.subarray(i, i + 16)));
    assert.ok(r.bufferedBytes <= MAX);
  }
  assert.equal(got.length, 1);
  assert.ok((got[0] as Frame).payload.equals(payload));
  assert.ok(performance.now() - start < 5000);
});

test('an oversized declared length fails as soon as the 4 length bytes are in, with nothing buffered', () => {
  for (const declared of [MAX + 1, 0xffff_ffff]) {
    const r = new FrameReader({ frameBytesMax: MAX });
    const len = Buffer.alloc(4);
    len.writeUInt32BE(declared);
    assert.deepEqual(r.push(PREAMBLE), []);
    assert.deepEqual(r.push(len.subarray(0, 3)), []);
    assert.equal(r.bufferedBytes, 3);
    assert.throws(() => r.push(len.subarray(3)), gridError('ERR_PROTOCOL_FRAME_TOO_LARGE'));
    assert.equal(r.bufferedBytes, 0, 'buffers are released on the error');
    assert.throws(() => r.push(Buffer.alloc(1 << 16)), gridError('ERR_PROTOCOL_FRAME_TOO_LARGE'), 'the error is sticky');
    assert.equal(r.bufferedBytes, 0, 'nothing is buffered after the error');
  }
});

test('with the default 64 MiB limit a declared 4 GiB frame is refused on its first bytes', () => {
  const r = new FrameReader({ frameBytesMax: 64 * 1024 * 1024 });
  const before = process.memoryUsage().arrayBuffers;
  const chunk = Buffer.concat([PREAMBLE, Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(60)]);
  assert.throws(() => r.push(chunk), gridError('ERR_PROTOCOL_FRAME_TOO_LARGE'));
  assert.equal(r.bufferedBytes, 0);
  assert.ok(process.memoryUsage().arrayBuffers - before < 1024 * 1024);
});

test('a frame exactly at the limit is accepted; encoding one byte more is refused', () => {
  const limit = 1000;
  const payload = Buffer.alloc(limit - HEADER_BYTES, 1);
  const r = new FrameReader({ frameBytesMax: limit });
  assert.equal(r.push(Buffer.concat([PREAMBLE, encodeFrame({ messageType: 3 }, payload, limit)])).length, 1);
  assert.throws(() => encodeFrame({ messageType: 3 }, Buffer.alloc(limit - HEADER_BYTES + 1), limit), gridError('ERR_PROTOCOL_FRAME_TOO_LARGE'));
});

test('the cap can be raised after a first small frame without losing the bytes behind it', () => {
  const small = encodeFrame({ messageType: 1 }, Buffer.alloc(10, 1));
  const big = encodeFrame({ messageType: 3 }, Buffer.alloc(500, 2));
  const r = new FrameReader({ frameBytesMax: 100 });
  r.append(Buffer.concat([PREAMBLE, small, big]));
  assert.equal(r.next()?.payload.length, 10);
  r.setFrameBytesMax(1000);
  assert.equal(r.next()?.payload.length, 500);
  assert.equal(r.next(), null);
  const strict = new FrameReader({ frameBytesMax: 100 });
  strict.append(Buffer.concat([PREAMBLE, small, big]));
  strict.next();
  assert.throws(() => strict.next(), gridError('ERR_PROTOCOL_FRAME_TOO_LARGE'), 'without raising, the second frame is refused');
  const announced = new FrameReader({ frameBytesMax: 1000 });
  announced.append(Buffer.concat([PREAMBLE, big.subarray(0, 30)]));
  assert.equal(announced.next(), null);
  assert.throws(() => announced.setFrameBytesMax(100), AssertionError, 'not below a frame already announced');
});

test('a bad preamble is ERR_PROTOCOL_MALFORMED', () => {
  for (const p of ['GET ', 'GRX\x01', 'GRD\x00', `GRD${String.fromCharCode(PROTOCOL_VERSION + 1)}`, '\x16\x03\x01\x00']) {
    const r = new FrameReader({ frameBytesMax: MAX });
    assert.throws(() => r.push(Buffer.from(p, 'latin1')), gridError('ERR_PROTOCOL_MALFORMED'), JSON.stringify(p));
  }
  const split = new FrameReader({ frameBytesMax: MAX });
  assert.deepEqual(split.push(Buffer.from('GR')), []);
  assert.equal(split.preambleVersion, null);
  assert.deepEqual(split.push(Buffer.from([0x44, PROTOCOL_VERSION])), []);
  assert.equal(split.preambleVersion, PROTOCOL_VERSION);
});

test('the preamble can be turned off (e.g. after the unified port consumed it)', () => {
  const r = new FrameReader({ frameBytesMax: MAX, preamble: false });
  assert.equal(r.push(encodeFrame({ messageType: 3 }, Buffer.from('x'))).length, 1);
});

test('malformed headers are ERR_PROTOCOL_MALFORMED', () => {
  const good = encodeFrame({ messageType: 3, callId: 9 }, Buffer.from('abc'));
  const mutations: [string, (b: Buffer) => void][] = [
    ['length below the header size', (b) => b.writeUInt32BE(HEADER_BYTES - 1, 0)],
    ['length zero', (b) => b.writeUInt32BE(0, 0)],
    ['version 0', (b) => (b[4] = 0)],
    ['a version above ours', (b) => (b[4] = PROTOCOL_VERSION + 1)],
    ['a version below our minimum', (b) => (b[4] = PROTOCOL_VERSION_MIN - 1)],
    ['unknown flag bit', (b) => (b[5] = 0x08)],
    ['message type 0', (b) => b.writeUInt16BE(0, 6)],
    ['partition id -2', (b) => b.writeInt32BE(-2, 8)],
    ['call id above 2^53-1', (b) => b.writeUInt32BE(0x20_0000, 12)],
  ];
  for (const [name, mutate] of mutations) {
    const b = Buffer.from(good);
    mutate(b);
    const r = new FrameReader({ frameBytesMax: MAX });
    assert.throws(() => r.push(Buffer.concat([PREAMBLE, b])), gridError('ERR_PROTOCOL_MALFORMED'), name);
  }
});

test('next() hands out the frames before a bad one, then throws', () => {
  const r = new FrameReader({ frameBytesMax: MAX });
  const bad = encodeFrame({ messageType: 3 }, Buffer.alloc(0));
  bad[5] = 0x80;
  r.append(Buffer.concat([PREAMBLE, encodeFrame({ messageType: 3, callId: 1 }, Buffer.from('a')), bad]));
  assert.equal(r.next()?.callId, 1);
  assert.throws(() => r.next(), gridError('ERR_PROTOCOL_MALFORMED'));
  assert.throws(() => r.next(), gridError('ERR_PROTOCOL_MALFORMED'));
});

test('encoding bad fields is a programmer error', () => {
  const bad: FrameFields[] = [
    { messageType: 0 },
    { messageType: 0x1_0000 },
    { messageType: 1, flags: 0x08 },
    { messageType: 1, partitionId: -2 },
    { messageType: 1, callId: -1 },
    { messageType: 1, callId: 2 ** 53 },
    { messageType: 1, version: 0 },
  ];
  for (const f of bad) assert.throws(() => encodeFrame(f, Buffer.alloc(0)), AssertionError, JSON.stringify(f));
});

test('ByteWriter and ByteReader round trip every type', () => {
  const w = new ByteWriter(1);
  w.u8(255).bool(true).u16(0xbeef).i32(-123456).u32(0xffff_ffff).u64(Number.MAX_SAFE_INTEGER).u64(0);
  w.string('héllo 😀', 64).string('', 0).bytes(Buffer.from([1, 2, 3]), 3);
  const r = new ByteReader(w.finish());
  assert.deepEqual(
    [r.u8(), r.bool(), r.u16(), r.i32(), r.u32(), r.u64(), r.u64(), r.string(64), r.string(0), [...r.bytes(3)]],
    [255, true, 0xbeef, -123456, 0xffff_ffff, Number.MAX_SAFE_INTEGER, 0, 'héllo 😀', '', [1, 2, 3]],
  );
  assert.equal(r.remaining, 0);
  r.expectEnd();
});

test('ByteReader: every read past the end or over a maximum is ERR_PROTOCOL_MALFORMED', () => {
  const malformed = gridError('ERR_PROTOCOL_MALFORMED');
  const reads: [string, Buffer, (r: ByteReader) => unknown][] = [
    ['u8 on empty', Buffer.alloc(0), (r) => r.u8()],
    ['u16 on 1 byte', Buffer.alloc(1), (r) => r.u16()],
    ['u32 on 3 bytes', Buffer.alloc(3), (r) => r.u32()],
    ['i32 on 3 bytes', Buffer.alloc(3), (r) => r.i32()],
    ['u64 on 7 bytes', Buffer.alloc(7), (r) => r.u64()],
    ['u64 above 2^53-1', Buffer.from('0020000000000000', 'hex'), (r) => r.u64()],
    ['bool 2', Buffer.from([2]), (r) => r.bool()],
    ['string longer than its maximum', Buffer.from('0000000568656c6c6f', 'hex'), (r) => r.string(4)],
    ['string longer than the buffer', Buffer.from('00000009', 'hex'), (r) => r.string(100)],
    ['4 GiB string declared', Buffer.from('ffffffff', 'hex'), (r) => r.string(0xffff_ffff)],
    ['invalid UTF-8', Buffer.from('00000002c328', 'hex'), (r) => r.string(10)],
    ['bytes longer than the buffer', Buffer.from('0000000201', 'hex'), (r) => r.bytes(10)],
    ['count over its maximum', Buffer.from('00000011', 'hex'), (r) => r.count(16, 'items')],
    ['trailing bytes', Buffer.from([1, 2]), (r) => (r.u8(), r.expectEnd())],
  ];
  for (const [name, buf, read] of reads) assert.throws(() => read(new ByteReader(buf)), malformed, name);
});

test('ByteReader honours a sub-range and a caller-chosen error code', () => {
  const buf = Buffer.from([9, 1, 2, 9]);
  const r = new ByteReader(buf, 'ERR_INTERNAL', 1, 3);
  assert.equal(r.u16(), 0x0102);
  assert.throws(() => r.u8(), gridError('ERR_INTERNAL'));
});

test('ByteWriter refuses out-of-range values (programmer error)', () => {
  const w = new ByteWriter();
  for (const f of [() => w.u8(256), () => w.u16(-1), () => w.i32(2 ** 31), () => w.u32(2 ** 32), () => w.u64(2 ** 53), () => w.u64(-1), () => w.u8(1.5)]) {
    assert.throws(f, AssertionError);
  }
  assert.throws(() => w.string('toolong', 3), AssertionError);
  assert.throws(() => w.bytes(Buffer.alloc(4), 3), AssertionError);
});
