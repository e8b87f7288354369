// Checks the member-protocol message codec: src/cluster/messages.ts (MESSAGE_SCHEMAS, MESSAGE_TYPES,
// encodeBody, decodeMessage) over src/cluster/protocol/schema-codec.ts. For every message kind a
// seeded generator walks the kind's schema and builds random bodies (integers at and inside their
// ranges, doubles including -0 and infinities, multi-byte UTF-8 strings, byte arrays, nulls, arrays
// of 0-3 items); each must encode and decode back to an equal body (bytes compared by content,
// decoded as copied Buffers). Every truncation of an encoding and every encoding with trailing bytes
// must fail with GridError ERR_PROTOCOL_MALFORMED and nothing else; unknown types fail the same way;
// type numbers are unique, within u16, at least 3 (1 and 2 are the handshake).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeBody, MESSAGE_SCHEMAS, MESSAGE_TYPES, messageKindOf, message, type Message, type MessageKind } from '../../src/cluster/messages.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';
import { STRING_BYTES_MAX } from '../../src/cluster/protocol/schema-codec.js';
import { AssertionError } from '../../src/util/assert.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import { sampleMessage } from '../harness/message-sample.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 90_210);
const SAMPLES_PER_KIND = 40;
const KINDS = Object.keys(MESSAGE_SCHEMAS) as MessageKind[];


/** Byte arrays as hex, so a Uint8Array sent and a Buffer received compare by content. */
function canon(v: unknown): unknown {
  if (v instanceof Uint8Array) return { hex: Buffer.from(v).toString('hex') };
  if (Array.isArray(v)) return v.map(canon);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]));
  return v;
}

/** Every byte array in a decoded value, to check they are Buffers that own their memory. */
function byteArrays(v: unknown, out: Uint8Array[] = []): Uint8Array[] {
  if (v instanceof Uint8Array) out.push(v);
  else if (Array.isArray(v)) for (const x of v) byteArrays(x, out);
  else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) byteArrays(x, out);
  return out;
}

function malformed(e: unknown): boolean {
  return e instanceof GridError && e.code === 'ERR_PROTOCOL_MALFORMED';
}

function forEachSample(body: (m: Message, encoded: Buffer, rnd: SeededRandom) => void): void {
  const rnd = new SeededRandom(SEED);
  for (const kind of KINDS) {
    for (let i = 0; i < SAMPLES_PER_KIND; i++) {
      const m = sampleMessage(kind, rnd);
      try {
        body(m, encodeBody(m), rnd);
      } catch (e) {
        console.error(`protocol-messages: failure on ${kind} sample ${i}; rerun with FUZZ_SEED=${SEED}`);
        throw e;
      }
    }
  }
}

test(`every kind round-trips random bodies (seed=${SEED})`, () => {
  forEachSample((m, encoded) => {
    const payload = Buffer.from(encoded);
    const got = decodeMessage(MESSAGE_TYPES[m.kind], m.callId, payload);
    assert.deepStrictEqual(canon(got), canon(m));
    // Decoded byte arrays are Buffers and copies: wiping the payload leaves them intact. A WAN batch's
    // are views into the payload (messages.ts: the target copies what it keeps).
    // The encoding is canonical: encoding the decoded message gives the same bytes.
    assert.ok(encodeBody(got).equals(encoded));
    const arrays = byteArrays(got.body);
    for (const b of arrays) assert.ok(Buffer.isBuffer(b));
    const before = arrays.map((b) => Buffer.from(b).toString('hex'));
    payload.fill(0xee);
    assert.deepEqual(
      arrays.map((b) => Buffer.from(b).toString('hex')),
      m.kind === 'wanBatch' ? arrays.map((b) => 'ee'.repeat(b.length)) : before,
    );
  });
});

test(`every truncation of an encoding is ERR_PROTOCOL_MALFORMED (seed=${SEED})`, () => {
  forEachSample((m, encoded) => {
    for (let n = 0; n < encoded.length; n++) {
      assert.throws(() => decodeMessage(MESSAGE_TYPES[m.kind], m.callId, encoded.subarray(0, n)), malformed, `${m.kind} cut at ${n} of ${encoded.length}`);
    }
  });
});

test(`trailing bytes are ERR_PROTOCOL_MALFORMED (seed=${SEED})`, () => {
  forEachSample((m, encoded, rnd) => {
    const extra = Buffer.from(Array.from({ length: 1 + rnd.nextInt(4) }, () => rnd.nextInt(256)));
    assert.throws(() => decodeMessage(MESSAGE_TYPES[m.kind], m.callId, Buffer.concat([encoded, extra])), malformed, m.kind);
  });
});

test('unknown message types are ERR_PROTOCOL_MALFORMED, whatever the payload', () => {
  const known = new Set(Object.values(MESSAGE_TYPES));
  for (const type of [0, HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE, Math.max(...known) + 1, 0x7fff, 0xffff]) {
    assert.equal(messageKindOf(type), null);
    for (const payload of [Buffer.alloc(0), Buffer.from([0, 0, 0, 0]), Buffer.alloc(64, 0xff)]) {
      assert.throws(() => decodeMessage(type, 0, payload), malformed, `type ${type}`);
    }
  }
});

test('message type numbers: one per kind, unique, u16, never 0, 1 or 2 (the handshake)', () => {
  assert.deepEqual(Object.keys(MESSAGE_TYPES).sort(), [...KINDS].sort());
  const numbers = Object.values(MESSAGE_TYPES);
  assert.equal(new Set(numbers).size, numbers.length, 'duplicate type numbers');
  for (const kind of KINDS) {
    const type = MESSAGE_TYPES[kind];
    assert.ok(Number.isInteger(type) && type >= 3 && type <= 0xffff, `${kind}: ${type}`);
    assert.notEqual(type, HANDSHAKE_REQUEST);
    assert.notEqual(type, HANDSHAKE_RESPONSE);
    assert.equal(messageKindOf(type), kind);
  }
});

test('a lying count of 2^32-1 fails fast as ERR_PROTOCOL_MALFORMED', () => {
  // versions: { partitionIds: [u32], versions: [u53] }; the first field is the array count.
  const encoded = encodeBody(message('versions', { partitionIds: [1, 2], versions: [3, 4] }));
  const lie = Buffer.from(encoded);
  lie.writeUInt32BE(0xffff_ffff, 0);
  const started = performance.now();
  assert.throws(() => decodeMessage(MESSAGE_TYPES.versions, 0, lie), malformed);
  assert.ok(performance.now() - started < 50, 'a lying count must fail before any work');
  // The same for a string length, a byte-array length, and a u53 high word.
  const s = Buffer.from(encodeBody(message('shutdownMember', { reason: 'm' })));
  s.writeUInt32BE(0xffff_ffff, 0);
  assert.throws(() => decodeMessage(MESSAGE_TYPES.shutdownMember, 0, s), malformed);
  const bytes = Buffer.from(encodeBody(message('invokeResult', {
    status: 0, found: true, value: Uint8Array.of(1, 2, 3), contentType: null, count: 0, errorCode: '', message: '', retryAfterSeconds: 0,
  })));
  bytes.writeUInt32BE(0xffff_ffff, 2); // value's length
  assert.throws(() => decodeMessage(MESSAGE_TYPES.invokeResult, 0, bytes), malformed);
  const b = Buffer.from(encodeBody(message('backupAck', { partitionId: 1, version: 2 })));
  b.writeUInt32BE(0xffff_ffff, 4); // u53 high word above the safe-integer range
  assert.throws(() => decodeMessage(MESSAGE_TYPES.backupAck, 0, b), malformed);
});

test('decoding is strict: bad booleans, invalid UTF-8, NaN and unsafe u53 are malformed', () => {
  const claim = Buffer.from(encodeBody(message('shutdownMember', { reason: 'ab' })));
  claim[4] = 0xc3; // a lead byte followed by 'b': invalid UTF-8
  assert.throws(() => decodeMessage(MESSAGE_TYPES.shutdownMember, 0, claim), malformed);
  const ack = Buffer.from(encodeBody(message('snapshotAck', { transferId: 1, index: 2, ok: true })));
  ack[12] = 2; // the bool byte
  assert.throws(() => decodeMessage(MESSAGE_TYPES.snapshotAck, 0, ack), malformed);
  const result = Buffer.from(encodeBody(message('invokeResult', {
    status: 0, found: false, value: new Uint8Array(0), contentType: null, count: 0, errorCode: '', message: '', retryAfterSeconds: 0,
  })));
  result[6] = 2; // contentType presence byte
  assert.throws(() => decodeMessage(MESSAGE_TYPES.invokeResult, 0, result), malformed);
  const op = message('backup', { partitionId: 1, version: 1, op: { code: 1, name: 'm', key: new Uint8Array(0), value: new Uint8Array(0), contentType: null, itemId: 0, timeMs: 0 } });
  const nan = Buffer.from(encodeBody(op));
  nan.writeDoubleBE(NaN, nan.length - 8);
  assert.throws(() => decodeMessage(MESSAGE_TYPES.backup, 0, nan), malformed);
});

test('encoding a value that does not fit its schema is a programmer error (AssertionError)', () => {
  assert.throws(() => encodeBody(message('backupAck', { partitionId: -1, version: 0 })), AssertionError);
  assert.throws(() => encodeBody(message('backupAck', { partitionId: 0, version: 2 ** 53 })), AssertionError);
  assert.throws(() => encodeBody(message('stateCommit', { txId: 't', state: 256 })), AssertionError);
  assert.throws(() => encodeBody(message('shutdownMember', { reason: 'x'.repeat(STRING_BYTES_MAX + 1) })), AssertionError);
  assert.throws(() => encodeBody({ kind: 'heartbeat', callId: 0, body: { membersVersion: 1, masterUuid: 'u' } } as unknown as Message), AssertionError);
});
