// The client protocol's codec core (src/client/): framing, fields, Data and its mapping to the
// stored form, the connect messages and the error response. Requests are built here the way the
// official clients lay them out (reference/client-protocol.md), independently of the member's
// own writer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFrameReader, FLAG_BEGIN_STRUCT, FLAG_END_STRUCT, FLAG_FINAL, FLAG_NULL, FLAG_UNFRAGMENTED, PREAMBLE, type ClientMessage } from '../../src/client/frames.js';
import { decodeUtf8, MessageReader, MessageWriter, SIMPLE_FIXED_AT, simpleResponse, uuidFromString, uuidToString } from '../../src/client/message.js';
import { AUTH_STATUS, decodeAuthentication, encodeAuthenticationResponse, encodeMembersView, encodePartitionsView, MESSAGE } from '../../src/client/codecs.js';
import {
  CONTENT_TYPE_BYTES,
  CONTENT_TYPE_JSON,
  CONTENT_TYPE_SERIALIZED,
  CONTENT_TYPE_TEXT,
  dataLengthOfKind,
  dataOfStored,
  dataPartitionHash,
  dataType,
  keyOfData,
  storedFormOfData,
  stringData,
  textKind,
  TYPE_BYTE_ARRAY,
  TYPE_JSON,
  TYPE_STRING,
  writeDataOfKind,
} from '../../src/client/data.js';
import { clientCodeOf, encodeErrorResponse, RETRIED_CODES } from '../../src/client/errors.js';
import { keyHash, partitionIdOf } from '../../src/partition/partition-id.js';
import { GridError } from '../../src/util/errors.js';
import { CALL, runCall } from '../../src/client/calls.js';
import type { MemberApi } from '../../src/member/member-api.js';
import { valueKind } from '../../src/data/value-kind.js';
import { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';
import { authRequest, CLIENT_UUID, encodeFrames, requestInitial, splitFrames, wireFrame, type WireFrame } from '../harness/client-wire.js';

// Requests are built with the test harness's client-side encoder (tests/harness/client-wire.ts),
// written from the documented layout, not with the member's own writer.
type F = WireFrame;
const frame = wireFrame;

function readAll(reader: ClientFrameReader, bytes: Buffer, splits: number[]): ClientMessage[] {
  const out: ClientMessage[] = [];
  let from = 0;
  for (const to of [...splits, bytes.length]) {
    reader.append(bytes.subarray(from, to));
    for (let m = reader.next(); m !== null; m = reader.next()) out.push(m);
    from = to;
  }
  return out;
}

// ── framing ───────────────────────────────────────────────────────────────────────────────────

test('an authentication request split at every byte reads the same, after CP2', () => {
  const stream = Buffer.concat([PREAMBLE, authRequest('dev'), authRequest('other')]);
  for (let cut = 1; cut < stream.length; cut++) {
    const messages = readAll(new ClientFrameReader({ frameBytesMax: 1024 }), stream, [cut]);
    assert.equal(messages.length, 2, `cut ${cut}`);
    assert.equal(decodeAuthentication(new MessageReader(messages[1] as ClientMessage)).clusterName, 'other');
  }
  // One byte at a time.
  const reader = new ClientFrameReader({ frameBytesMax: 1024 });
  const messages = readAll(reader, stream, Array.from({ length: stream.length - 1 }, (_, i) => i + 1));
  assert.equal(messages.length, 2);
  assert.equal(reader.bufferedBytes, 0);
});

test('the fields of an authentication request', () => {
  const [message] = readAll(new ClientFrameReader({ frameBytesMax: 1024 }), Buffer.concat([PREAMBLE, authRequest('dev')]), []);
  const r = new MessageReader(message as ClientMessage);
  assert.equal(r.type, MESSAGE.AUTHENTICATION);
  assert.equal(r.correlationId, 7n);
  assert.equal(r.partitionId, -1);
  const a = decodeAuthentication(r);
  assert.equal(uuidToString(a.clientUuid), CLIENT_UUID);
  assert.equal(a.serializationVersion, 1);
  assert.deepEqual([a.clusterName, a.username, a.password, a.clientType, a.clientVersion, a.clientName], ['dev', null, null, 'NJS', '5.7.0', 'hz.client_0']);
  assert.deepEqual(a.labels, ['label-a', 'label-é']);
});

test('fields a newer client appends are skipped (fixed bytes and trailing frames)', () => {
  const bytes = Buffer.concat([PREAMBLE, authRequest('dev', { extra: [frame('future-field')], extraFixed: Buffer.from([2, 1]) })]);
  const [message] = readAll(new ClientFrameReader({ frameBytesMax: 1024 }), bytes, []);
  const r = new MessageReader(message as ClientMessage);
  assert.equal(decodeAuthentication(r).clusterName, 'dev');
  assert.equal(r.framesLeft, 1);
});

test('a frame longer than the limit is refused from its 4 length bytes, before its content', () => {
  const reader = new ClientFrameReader({ frameBytesMax: 4096, preamble: false });
  const header = Buffer.alloc(4);
  header.writeInt32LE(1 << 30, 0);
  reader.append(header);
  assert.throws(() => reader.next(), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_FRAME_TOO_LARGE' && /1073741824/.test(e.message));
  assert.equal(reader.bufferedBytes, 0);
  // Sticky: the connection is done.
  assert.throws(() => reader.append(Buffer.alloc(1)), /1073741824/);
});

test('a message whose frames together pass the message limit is refused', () => {
  const reader = new ClientFrameReader({ frameBytesMax: 1024, messageBytesMax: 2048, preamble: false });
  const frames = [requestInitial(MESSAGE.PING, 1n, -1, Buffer.alloc(0)), ...Array.from({ length: 5 }, () => frame(Buffer.alloc(500)))];
  assert.throws(() => readAll(reader, encodeFrames(frames), []), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_FRAME_TOO_LARGE');
});

test('bad framing is refused with ERR_CLIENT_PROTOCOL', () => {
  const cases: [string, Buffer, RegExp][] = [
    ['not CP2', Buffer.from('CP1xxxxxxxx'), /CP2/],
    ['HTTP', Buffer.from('GET / HTTP/1.1\r\n'), /CP2/],
    ['a frame length below 6', Buffer.concat([PREAMBLE, Buffer.from([5, 0, 0, 0, 0, 0])]), /frame length of 5/],
    ['a negative frame length', Buffer.concat([PREAMBLE, Buffer.from([0xff, 0xff, 0xff, 0xff])]), /frame length of -1/],
    ['a fragment', Buffer.concat([PREAMBLE, encodeFrames([{ flags: 0x8000, content: Buffer.alloc(16) }])]), /fragment/],
    ['a short initial frame', Buffer.concat([PREAMBLE, encodeFrames([{ flags: FLAG_UNFRAGMENTED, content: Buffer.alloc(10) }])]), /initial frame of 10 bytes/],
  ];
  for (const [name, bytes, pattern] of cases) {
    const reader = new ClientFrameReader({ frameBytesMax: 1024 });
    assert.throws(() => readAll(reader, bytes, []), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_PROTOCOL' && pattern.test(e.message), name);
  }
  // Garbage is refused as soon as its first byte differs, without waiting for three.
  const early = new ClientFrameReader({ frameBytesMax: 1024 });
  early.append(Buffer.from('X'));
  assert.throws(() => early.next(), /CP2/);
});

test('a truncated authentication request is refused naming the missing field, never read wrong', () => {
  const frames = splitFrames(authRequest('dev'));
  for (let keep = 1; keep < frames.length; keep++) {
    const message: ClientMessage = { frames: frames.slice(0, keep).map((f) => ({ flags: f.flags, content: f.content })), bytes: 0 };
    assert.throws(() => decodeAuthentication(new MessageReader(message)), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_PROTOCOL', `kept ${keep} frames`);
  }
  // The initial frame cut inside the fixed parameters.
  const initial = frames[0] as F;
  for (let cut = 16; cut < initial.content.length; cut++) {
    const message: ClientMessage = { frames: [{ flags: initial.flags, content: initial.content.subarray(0, cut) }, ...frames.slice(1)], bytes: 0 };
    assert.throws(() => decodeAuthentication(new MessageReader(message)), /clientUuid|serializationVersion/);
  }
});

// FUZZ_SEED and FUZZ_ITERATIONS replay or lengthen it (tests/harness/fuzz.ts).
const FUZZ = fuzz(20261127, 2000);

FUZZ.case('bit flips in a stream of requests: a GridError or messages, never a crash or a wrong frame count', (rng) => {
  const random = (): number => rng.next();
  const good = Buffer.concat([PREAMBLE, authRequest('dev'), authRequest('x')]);
  for (let run = 0; run < FUZZ.iterations; run++) {
    const bytes = Buffer.from(good);
    const flips = 1 + Math.floor(random() * 3);
    for (let k = 0; k < flips; k++) bytes[Math.floor(random() * bytes.length)]! ^= 1 << Math.floor(random() * 8);
    const reader = new ClientFrameReader({ frameBytesMax: 4096 });
    try {
      const messages = readAll(reader, bytes, [Math.floor(random() * bytes.length)]);
      for (const m of messages) {
        let total = 0;
        for (const f of m.frames) total += 6 + f.content.length;
        assert.equal(total, m.bytes);
        try {
          decodeAuthentication(new MessageReader(m));
        } catch (e) {
          assert.ok(e instanceof GridError, `run ${run}: ${String(e)}`);
        }
      }
    } catch (e) {
      assert.ok(e instanceof GridError, `run ${run}: ${String(e)}`);
    }
  }
});

// ── answers ───────────────────────────────────────────────────────────────────────────────────

test('the authentication answer has the fields where the clients read them', () => {
  const memberUuid = uuidFromString('11111111-2222-3333-4444-555555555555');
  const clusterId = uuidFromString('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
  const bytes = encodeAuthenticationResponse(9n, { status: AUTH_STATUS.AUTHENTICATED, address: { host: '127.0.0.1', port: 5701 }, memberUuid, serializationVersion: 1, partitionCount: 271, clusterId, serverVersion: '5.3.0' });
  const frames = splitFrames(bytes);
  const initial = (frames[0] as F).content;
  assert.equal((frames[0] as F).flags & FLAG_UNFRAGMENTED, FLAG_UNFRAGMENTED);
  assert.equal(initial.readInt32LE(0), MESSAGE.AUTHENTICATION_RESPONSE);
  assert.equal(initial.readBigInt64LE(4), 9n);
  assert.equal(initial[12], 0, 'backup acks');
  assert.equal(initial[13], 0, 'status');
  assert.equal(initial[14], 0, 'member uuid not null');
  assert.equal(initial.readBigInt64LE(15), (memberUuid as { most: bigint }).most);
  assert.equal(initial[31], 1, 'serialization version');
  assert.equal(initial.readInt32LE(32), 271);
  assert.equal(initial[36], 0, 'cluster id not null');
  assert.equal(initial.readBigInt64LE(45), (clusterId as { least: bigint }).least);
  assert.equal(initial[53], 0, 'failover');
  // Address: begin, port, host, end; then the version, final.
  assert.deepEqual(frames.slice(1).map((f) => f.flags & 0x1c00), [FLAG_BEGIN_STRUCT, 0, 0, FLAG_END_STRUCT, 0]);
  assert.equal((frames[2] as F).content.readInt32LE(0), 5701);
  assert.equal((frames[3] as F).content.toString(), '127.0.0.1');
  assert.equal((frames[5] as F).content.toString(), '5.3.0');
  assert.ok(((frames[5] as F).flags & FLAG_FINAL) !== 0);
  assert.equal(uuidToString(uuidFromString('11111111-2222-3333-4444-555555555555')), '11111111-2222-3333-4444-555555555555');
});

test('the cluster view events: member list and partition table', () => {
  const a = uuidFromString('00000000-0000-0000-0000-00000000000a');
  const members = encodeMembersView(3n, 5, [{ uuid: a, lite: false, host: 'h', port: 1, version: [5, 3, 0] }]);
  const mf = splitFrames(members);
  assert.equal((mf[0] as F).flags & 0x0200, 0x0200, 'event flag');
  assert.equal((mf[0] as F).content.readInt32LE(12), -1, 'partition id');
  assert.equal((mf[0] as F).content.readInt32LE(16), 5, 'version');
  // list begin, member begin, fixed, address(begin, port, host, end), attributes(begin, end), version(begin, fixed, end), map(begin, end), member end, list end
  assert.equal(mf.length, 1 + 16);
  assert.equal((mf[3] as F).content.length, 18);
  const partitions = encodePartitionsView(3n, 8, [{ uuid: a, partitions: [0, 1, 270] }]);
  const pf = splitFrames(partitions);
  assert.equal((pf[0] as F).content.readInt32LE(16), 8);
  assert.deepEqual([(pf[2] as F).content.readInt32LE(0), (pf[2] as F).content.readInt32LE(8)], [0, 270]);
  assert.equal((pf[4] as F).content.length, 17);
  assert.ok(((pf[4] as F).flags & FLAG_FINAL) !== 0);
});

test('the error response: one error holder with code, class name and message', () => {
  const frames = splitFrames(encodeErrorResponse(4n, 61, 'message type 0x123400 is not supported'));
  assert.equal((frames[0] as F).content.readInt32LE(0), 0);
  assert.equal((frames[0] as F).content.readBigInt64LE(4), 4n);
  assert.deepEqual(frames.slice(1).map((f) => f.flags & 0x1c00), [FLAG_BEGIN_STRUCT, FLAG_BEGIN_STRUCT, 0, 0, 0, FLAG_BEGIN_STRUCT, FLAG_END_STRUCT, FLAG_END_STRUCT, FLAG_END_STRUCT]);
  assert.equal((frames[3] as F).content.readInt32LE(0), 61);
  assert.equal((frames[5] as F).content.toString(), 'message type 0x123400 is not supported');
  // Retryable only where a retry can help.
  assert.ok(RETRIED_CODES.has(clientCodeOf(new GridError('ERR_CLUSTER_UNAVAILABLE', 'x'))));
  assert.ok(!RETRIED_CODES.has(clientCodeOf(new GridError('ERR_CLIENT_KEY_TYPE', 'x'))));
  assert.equal(clientCodeOf(new GridError('ERR_CLIENT_KEY_TYPE', 'x')), 23);
  // spec/client.md "Errors and moves": timeouts 38, a member shutting down 19, an owner that left
  // a call unanswered a retried code.
  assert.equal(clientCodeOf(new GridError('ERR_CLUSTER_UNAVAILABLE', 'x', { failureKind: 'timeout' })), 38);
  assert.equal(clientCodeOf(new GridError('ERR_CLUSTER_INDETERMINATE', 'x', { failureKind: 'timeout' })), 38);
  assert.equal(clientCodeOf(new GridError('ERR_CLUSTER_UNAVAILABLE', 'x', { failureKind: 'stopping' })), 19);
  assert.ok(RETRIED_CODES.has(clientCodeOf(new GridError('ERR_CLUSTER_INDETERMINATE', 'x'))));
  assert.ok(RETRIED_CODES.has(19));
  assert.ok(!RETRIED_CODES.has(38));
});

// ── Data and the stored form ──────────────────────────────────────────────────────────────────

test('a client String key lands in the partition of the same REST key', () => {
  const rng = new SeededRandom(7);
  const random = (): number => rng.next();
  const alphabet = ['a', 'Z', '0', '/', ' ', 'é', '漢', '😀', '%'];
  for (let i = 0; i < 500; i++) {
    let key = '';
    const n = Math.floor(random() * 40);
    for (let k = 0; k < n; k++) key += alphabet[Math.floor(random() * alphabet.length)];
    const data = stringData(key);
    assert.equal(keyOfData(data), key);
    assert.equal(dataPartitionHash(data), keyHash(Buffer.from(key, 'utf8')), key);
    assert.equal(partitionIdOf(dataPartitionHash(data), 271), partitionIdOf(keyHash(Buffer.from(key, 'utf8')), 271));
  }
});

test('a key that is not a String is refused; a lying length is refused', () => {
  const bytesKey = Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf4, 0, 0, 0, 1, 7]);
  assert.equal(dataType(bytesKey), TYPE_BYTE_ARRAY);
  assert.throws(() => keyOfData(bytesKey), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_KEY_TYPE' && /strings/.test(e.message));
  const good = stringData('key');
  for (let cut = 0; cut < good.length; cut++) assert.throws(() => keyOfData(good.subarray(0, cut)), GridError, `cut ${cut}`);
  const longer = Buffer.concat([good, Buffer.from([0x41])]);
  assert.throws(() => keyOfData(longer), /length of 3/);
});

test('values: client types to the stored form and back', () => {
  const text = storedFormOfData(stringData('héllo'));
  assert.deepEqual([text.value.toString('utf8'), text.contentType], ['héllo', CONTENT_TYPE_TEXT]);
  assert.equal(dataType(dataOfStored(text.value, text.contentType)), TYPE_STRING);

  const jsonData = Buffer.from(stringData('{"a":1}'));
  jsonData.writeInt32BE(TYPE_JSON, 4);
  const json = storedFormOfData(jsonData);
  assert.deepEqual([json.value.toString(), json.contentType], ['{"a":1}', CONTENT_TYPE_JSON]);
  assert.deepEqual(dataOfStored(json.value, json.contentType), jsonData);

  const raw = Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf4, 0, 0, 0, 3, 0xff, 0, 1]);
  const bytes = storedFormOfData(raw);
  assert.deepEqual([bytes.value, bytes.contentType], [Buffer.from([0xff, 0, 1]), CONTENT_TYPE_BYTES]);
  assert.deepEqual(dataOfStored(bytes.value, bytes.contentType), raw);

  // Another serializer type (a double, -10) is kept whole and handed back whole.
  const double = Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf6, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18]);
  const kept = storedFormOfData(double);
  assert.equal(kept.contentType, CONTENT_TYPE_SERIALIZED);
  assert.deepEqual(dataOfStored(kept.value, kept.contentType), double);
});

test('values: what REST stored, as a client reads it', () => {
  const utf8 = Buffer.from('plain é', 'utf8');
  for (const type of ['text/plain', 'text/plain; charset=utf-8', 'text/plain;charset="UTF-8"', 'TEXT/PLAIN; charset=us-ascii', 'text/plain; format=flowed']) {
    assert.equal(dataType(dataOfStored(utf8, type)), TYPE_STRING, type);
  }
  for (const type of ['text/plain; charset=iso-8859-1', 'text/html', 'application/octet-stream', 'image/png']) {
    assert.equal(dataType(dataOfStored(utf8, type)), TYPE_BYTE_ARRAY, type);
  }
  assert.equal(dataType(dataOfStored(utf8, null)), TYPE_BYTE_ARRAY);
  assert.equal(dataType(dataOfStored(Buffer.from('{}'), 'application/json')), TYPE_JSON);
  // Invalid UTF-8 under a text type reads as bytes, intact.
  const bad = Buffer.from([0x61, 0xc3, 0x28]);
  const asBytes = dataOfStored(bad, 'text/plain');
  assert.equal(dataType(asBytes), TYPE_BYTE_ARRAY);
  assert.deepEqual(asBytes.subarray(12), bad);
  // JSON needs no charset rule (spec/client.md); text/plain does.
  assert.equal(textKind('application/json; charset=utf-16'), 'json');
  assert.equal(textKind('text/plain; charset=utf-16'), null);
  // textKind remembers content types; past its bound it forgets them all and still answers right.
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 600; i++) {
      assert.equal(textKind(`text/plain; x=${i}`), 'text');
      assert.equal(textKind(`text/plain; charset=latin-${i}`), null);
      assert.equal(textKind(`Application/JSON; v=${i}`), 'json');
      assert.equal(textKind(`application/json; charset=latin-${i}`), 'json');
    }
  }
});

// ── calls (on a fake member API) ──────────────────────────────────────────────────────────────


function callMessage(type: number, fixed: Buffer, frames: F[]): ClientMessage {
  const bytes = encodeFrames([requestInitial(type, 11n, 0, fixed), ...frames]);
  return { frames: splitFrames(bytes).map((f) => ({ flags: f.flags, content: f.content })), bytes: bytes.length };
}

function longs(...values: bigint[]): Buffer {
  const b = Buffer.alloc(8 * values.length);
  values.forEach((v, i) => b.writeBigInt64LE(v, 8 * i));
  return b;
}

async function answerOf(out: Buffer | Promise<Buffer>): Promise<F[]> {
  return splitFrames(await out);
}

test('calls: set and get through the member API, errors as the clients read them', async () => {
  const store = new Map<string, { value: Buffer; contentType: string | null }>();
  let polledSeconds = -1;
  const api = {
    mapPut: (name: string, key: string, value: Buffer, contentType: string | null) => void store.set(`${name}/${key}`, { value, contentType }),
    mapGet: (name: string, key: string) => {
      if (key === 'unavailable') throw new GridError('ERR_CLUSTER_UNAVAILABLE', 'owner out of reach');
      if (key === 'bug') return Promise.reject(new TypeError('boom'));
      return store.get(`${name}/${key}`) ?? null;
    },
    queuePoll: (_name: string, seconds: number) => {
      polledSeconds = seconds;
      return null;
    },
    mapPutWithExpiry: (name: string, key: string, _v: Buffer, _t: string | null, ttlMs: number, maxIdleMs: number, mode: string) => {
      expiring.push([name, key, ttlMs, maxIdleMs, mode]);
      return mode === 'set' ? null : { value: Buffer.from('old'), contentType: 'text/plain' };
    },
  } as unknown as MemberApi;
  const expiring: unknown[][] = [];
  const logged: string[] = [];
  const context = { api, client: { isGone: () => false, onGone: () => () => {} }, pollSecondsMax: 300, answerBytesMax: 1 << 20, internalError: (e: unknown) => void logged.push(String(e)), memberStopping: () => false };
  const run = (type: number, fixed: Buffer, frames: F[]): Promise<F[]> => answerOf(runCall(new MessageReader(callMessage(type, fixed, frames)), context));

  const set = await run(CALL.MAP_SET, longs(1n, -1n), [frame('m'), frame(stringData('k')), frame(stringData('v é'))]);
  assert.equal((set[0] as F).content.readInt32LE(0), CALL.MAP_SET + 1);
  assert.deepEqual(store.get('m/k'), { value: Buffer.from('v é'), contentType: CONTENT_TYPE_TEXT });
  const got = await run(CALL.MAP_GET, longs(1n), [frame('m'), frame(stringData('k'))]);
  assert.deepEqual((got[1] as F).content, stringData('v é'));
  const absent = await run(CALL.MAP_GET, longs(1n), [frame('m'), frame(stringData('nothing'))]);
  assert.ok(((absent[1] as F).flags & FLAG_NULL) !== 0);

  const codeOf = (frames: F[]): number => (frames[3] as F).content.readInt32LE(0);
  // The owner out of reach: 46, which the clients retry.
  assert.equal(codeOf(await run(CALL.MAP_GET, longs(1n), [frame('m'), frame(stringData('unavailable'))])), 46);
  // A member-side bug: 24, logged with the error.
  assert.equal(codeOf(await run(CALL.MAP_GET, longs(1n), [frame('m'), frame(stringData('bug'))])), 24);
  assert.match(logged.join(), /boom/);
  // A TTL or max-idle of the entry's own goes with the write; a transient put is a set.
  const ttl = await run(CALL.MAP_SET, longs(1n, 5000n), [frame('m'), frame(stringData('t')), frame(stringData('v'))]);
  assert.equal((ttl[0] as F).content.readInt32LE(0), CALL.MAP_SET + 1);
  assert.deepEqual(expiring.pop(), ['m', 't', 5000, -1, 'set']);
  const idle = await run(CALL.MAP_PUT_WITH_MAX_IDLE, longs(1n, -1n, 2000n), [frame('m'), frame(stringData('t')), frame(stringData('v'))]);
  assert.deepEqual((idle[1] as F).content, stringData('old'));
  assert.deepEqual(expiring.pop(), ['m', 't', -1, 2000, 'put']);
  const setIdle = await run(CALL.MAP_SET_WITH_MAX_IDLE, longs(1n, 0n, 2000n), [frame('m'), frame(stringData('t')), frame(stringData('v'))]);
  assert.ok(((setIdle[1] as F).flags & FLAG_NULL) !== 0, 'setWithMaxIdle answers a null value');
  assert.deepEqual(expiring.pop(), ['m', 't', 0, 2000, 'set']);
  await run(CALL.MAP_PUT_IF_ABSENT, longs(1n, 100n), [frame('m'), frame(stringData('t')), frame(stringData('v'))]);
  assert.deepEqual(expiring.pop(), ['m', 't', 100, -1, 'putIfAbsent']);
  const transient = await run(CALL.MAP_PUT_TRANSIENT, longs(1n, -1n), [frame('m'), frame(stringData('tr')), frame(stringData('v'))]);
  assert.equal((transient[0] as F).content.readInt32LE(0), CALL.MAP_PUT_TRANSIENT + 1);
  assert.equal(store.has('m/tr'), true, 'no expiry of its own: a plain put');
  // A key that is not a String: 23. A truncated call: 21, naming the missing field.
  assert.equal(codeOf(await run(CALL.MAP_GET, longs(1n), [frame('m'), frame(Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf9, 0, 0, 0, 1]))])), 23);
  const truncated = await run(CALL.MAP_SET, longs(1n, -1n), [frame('m'), frame(stringData('k'))]);
  assert.equal(codeOf(truncated), 21);
  assert.match((truncated[5] as F).content.toString(), /value/);
  // A poll: milliseconds become seconds, a take (-1) and anything longer wait at most the limit.
  await run(CALL.QUEUE_POLL, longs(250n), [frame('q')]);
  assert.equal(polledSeconds, 0.25);
  await run(CALL.QUEUE_POLL, longs(-1n), [frame('q')]);
  assert.equal(polledSeconds, 300);
  await run(CALL.QUEUE_POLL, longs(10_000_000n), [frame('q')]);
  assert.equal(polledSeconds, 300);
  // The waits of a member that has begun to shut down end early: 19, so the client goes elsewhere.
  // A poll without a wait still answers null, and a waiting poll of a running member null too.
  assert.ok(((await run(CALL.QUEUE_POLL, longs(250n), [frame('q')]))[1] as F).flags & FLAG_NULL);
  const stopping = { ...context, memberStopping: () => true };
  const runStopping = (type: number, fixed: Buffer, frames: F[]): Promise<F[]> => answerOf(runCall(new MessageReader(callMessage(type, fixed, frames)), stopping));
  assert.equal(codeOf(await runStopping(CALL.QUEUE_POLL, longs(250n), [frame('q')])), 19);
  assert.equal(codeOf(await runStopping(CALL.QUEUE_TAKE, Buffer.alloc(0), [frame('q')])), 19);
  assert.ok(((await runStopping(CALL.QUEUE_POLL, longs(0n), [frame('q')]))[1] as F).flags & FLAG_NULL);
  // A take that found nothing within the limit on a running member: 38, an operation timeout.
  assert.equal(codeOf(await run(CALL.QUEUE_TAKE, Buffer.alloc(0), [frame('q')])), 38);
});

test('calls: getAll and putAll run per key; a failure of one is the answer, none is left unhandled', async () => {
  let unhandled = 0;
  const onUnhandled = (): void => void unhandled++;
  process.on('unhandledRejection', onUnhandled);
  try {
    const api = {
      mapPut: (_name: string, key: string) => {
        if (key === 'sync') throw new GridError('ERR_DATA_ENTRY_TOO_LARGE', 'too large');
        if (key === 'async') return Promise.reject(new GridError('ERR_CLUSTER_UNAVAILABLE', 'later'));
        return Promise.resolve();
      },
      mapGet: (_name: string, key: string) => (key === 'here' ? { value: Buffer.from('v'), contentType: 'text/plain' } : null),
    } as unknown as MemberApi;
    const context = { api, client: { isGone: () => false, onGone: () => () => {} }, pollSecondsMax: 300, answerBytesMax: 1 << 20, internalError: () => {}, memberStopping: () => false };
    const entries = (...keys: string[]): F[] => [frame(Buffer.alloc(0), FLAG_BEGIN_STRUCT), ...keys.flatMap((k) => [frame(stringData(k)), frame(stringData('v'))]), frame(Buffer.alloc(0), FLAG_END_STRUCT)];
    const run = (type: number, fixed: Buffer, frames: F[]): Promise<F[]> => answerOf(runCall(new MessageReader(callMessage(type, fixed, frames)), context));
    const failed = await run(CALL.MAP_PUT_ALL, Buffer.from([0]), [frame('m'), ...entries('a', 'async', 'sync', 'b')]);
    assert.equal((failed[0] as F).content.readInt32LE(0), 0, 'an error response');
    assert.equal((failed[3] as F).content.readInt32LE(0), 46, 'the first failure: the owner out of reach (retried by the client)');
    const ok = await run(CALL.MAP_PUT_ALL, Buffer.alloc(0), [frame('m'), ...entries('a', 'b')]);
    assert.equal((ok[0] as F).content.readInt32LE(0), CALL.MAP_PUT_ALL + 1, 'triggerMapLoader may be absent (a 2.0 client)');
    // An odd entry list is malformed (21).
    const odd = await run(CALL.MAP_PUT_ALL, Buffer.from([0]), [frame('m'), frame(Buffer.alloc(0), FLAG_BEGIN_STRUCT), frame(stringData('k')), frame(Buffer.alloc(0), FLAG_END_STRUCT)]);
    assert.equal((odd[3] as F).content.readInt32LE(0), 21);
    // getAll answers the entries found, in key order.
    const got = await run(CALL.MAP_GET_ALL, Buffer.alloc(0), [frame('m'), frame(Buffer.alloc(0), FLAG_BEGIN_STRUCT), frame(stringData('absent')), frame(stringData('here')), frame(Buffer.alloc(0), FLAG_END_STRUCT)]);
    assert.deepEqual(got.slice(1).map((f) => f.flags & 0x1c00), [FLAG_BEGIN_STRUCT, 0, 0, FLAG_END_STRUCT]);
    assert.equal(keyOfData((got[2] as F).content), 'here');
    await new Promise((r) => setImmediate(r));
    assert.equal(unhandled, 0);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('calls: replace, the IfSame writes, whole-map reads and the queue calls map their arguments and answers', async () => {
  const seen: unknown[][] = [];
  const api = {
    mapReplace: (...a: unknown[]) => (seen.push(['replace', ...a]), { value: Buffer.from('old'), contentType: 'text/plain' }),
    mapReplaceIfSame: (...a: unknown[]) => (seen.push(['replaceIfSame', ...a]), true),
    mapRemoveIfSame: (...a: unknown[]) => (seen.push(['removeIfSame', ...a]), false),
    mapEntries: (name: string, select: string, bytesMax: number) => {
      seen.push(['entries', name, select, bytesMax]);
      return Promise.resolve([
        { key: Buffer.from('k1'), value: select === 'keys' ? null : { value: Buffer.from('{"a":1}'), contentType: 'application/json' } },
        { key: Buffer.from('k2'), value: select === 'keys' ? null : { value: Buffer.from([0xff]), contentType: null } },
      ]);
    },
    queueOffer: (...a: unknown[]) => (seen.push(['offer', a[0]]), true),
    queueOfferWaiting: (name: string, _v: Buffer, _t: string | null, timeoutMs: number) => (seen.push(['offerWaiting', name, timeoutMs]), name !== 'full'),
    queueDrain: (name: string, max: number) => (seen.push(['drain', name, max]), [{ value: Buffer.from('i'), contentType: 'text/plain' }]),
    queueClear: (name: string) => (seen.push(['clear', name]), 3),
  } as unknown as MemberApi;
  const context = { api, client: { isGone: () => false, onGone: () => () => {} }, pollSecondsMax: 300, answerBytesMax: 4096, internalError: () => {}, memberStopping: () => false };
  const run = (type: number, fixed: Buffer, frames: F[]): Promise<F[]> => answerOf(runCall(new MessageReader(callMessage(type, fixed, frames)), context));
  const typeOf = (frames: F[]): number => (frames[0] as F).content.readInt32LE(0);
  const boolOf = (frames: F[]): boolean => (frames[0] as F).content[13] === 1;
  const int32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n, 0);
    return b;
  };

  const replaced = await run(CALL.MAP_REPLACE, longs(1n), [frame('m'), frame(stringData('k')), frame(stringData('new'))]);
  assert.deepEqual((replaced[1] as F).content, stringData('old'));
  assert.deepEqual(seen.pop(), ['replace', 'm', 'k', Buffer.from('new'), CONTENT_TYPE_TEXT]);
  assert.equal(boolOf(await run(CALL.MAP_REPLACE_IF_SAME, longs(1n), [frame('m'), frame(stringData('k')), frame(stringData('test')), frame(stringData('new'))])), true);
  assert.deepEqual(seen.pop(), ['replaceIfSame', 'm', 'k', { value: Buffer.from('test'), contentType: CONTENT_TYPE_TEXT }, Buffer.from('new'), CONTENT_TYPE_TEXT]);
  assert.equal(boolOf(await run(CALL.MAP_REMOVE_IF_SAME, longs(1n), [frame('m'), frame(stringData('k')), frame(stringData('test'))])), false);
  assert.deepEqual(seen.pop(), ['removeIfSame', 'm', 'k', { value: Buffer.from('test'), contentType: CONTENT_TYPE_TEXT }]);

  // keySet: a list of String keys; values: a list of values; entrySet: key, value, key, value.
  const keys = await run(CALL.MAP_KEY_SET, Buffer.alloc(0), [frame('m')]);
  assert.deepEqual(seen.pop(), ['entries', 'm', 'keys', 4096]);
  assert.deepEqual(keys.slice(2, -1).map((f) => keyOfData(f.content)), ['k1', 'k2']);
  const values = await run(CALL.MAP_VALUES, Buffer.alloc(0), [frame('m')]);
  assert.deepEqual(values.slice(2, -1).map((f) => f.content.readInt32BE(4)), [-130, -12], 'JSON, byte[]');
  const entrySet = await run(CALL.MAP_ENTRY_SET, Buffer.alloc(0), [frame('m')]);
  assert.equal(typeOf(entrySet), CALL.MAP_ENTRY_SET + 1);
  assert.deepEqual(entrySet.slice(2, -1).map((f) => f.content.readInt32BE(4)), [-11, -130, -11, -12]);
  assert.deepEqual([entrySet[1]?.flags, entrySet.at(-1)?.flags !== undefined && ((entrySet.at(-1) as F).flags & FLAG_END_STRUCT) !== 0], [FLAG_BEGIN_STRUCT, true]);

  // offer: no wait at 0, its timeout up to the limit otherwise; put: the limit, then 38.
  assert.equal(boolOf(await run(CALL.QUEUE_OFFER, longs(0n), [frame('q'), frame(stringData('v'))])), true);
  assert.deepEqual(seen.pop(), ['offer', 'q']);
  await run(CALL.QUEUE_OFFER, longs(1500n), [frame('q'), frame(stringData('v'))]);
  assert.deepEqual(seen.pop(), ['offerWaiting', 'q', 1500]);
  await run(CALL.QUEUE_OFFER, longs(10_000_000n), [frame('q'), frame(stringData('v'))]);
  assert.deepEqual(seen.pop(), ['offerWaiting', 'q', 300_000]);
  assert.equal(typeOf(await run(CALL.QUEUE_PUT, Buffer.alloc(0), [frame('q'), frame(stringData('v'))])), CALL.QUEUE_PUT + 1);
  const full = await run(CALL.QUEUE_PUT, Buffer.alloc(0), [frame('full'), frame(stringData('v'))]);
  assert.equal((full[3] as F).content.readInt32LE(0), 38);
  assert.match((full[5] as F).content.toString(), /stayed full/);
  // A waiting offer or put cut short by the member's shutdown: 19.
  const stopping = { ...context, memberStopping: () => true };
  const fullWhileStopping = await answerOf(runCall(new MessageReader(callMessage(CALL.QUEUE_PUT, Buffer.alloc(0), [frame('full'), frame(stringData('v'))])), stopping));
  assert.equal((fullWhileStopping[3] as F).content.readInt32LE(0), 19);
  const offerWhileStopping = await answerOf(runCall(new MessageReader(callMessage(CALL.QUEUE_OFFER, longs(1500n), [frame('full'), frame(stringData('v'))])), stopping));
  assert.equal((offerWhileStopping[3] as F).content.readInt32LE(0), 19);

  // drainTo: all (0 to the API); with a maximum: that many; 0 drains nothing; negative all.
  const drained = await run(CALL.QUEUE_DRAIN_TO, Buffer.alloc(0), [frame('q')]);
  assert.deepEqual(seen.pop(), ['drain', 'q', 0]);
  assert.deepEqual(drained.slice(2, -1).map((f) => f.content), [stringData('i')]);
  await run(CALL.QUEUE_DRAIN_TO_MAX_SIZE, int32(7), [frame('q')]);
  assert.deepEqual(seen.pop(), ['drain', 'q', 7]);
  await run(CALL.QUEUE_DRAIN_TO_MAX_SIZE, int32(-1), [frame('q')]);
  assert.deepEqual(seen.pop(), ['drain', 'q', 0]);
  seen.length = 0;
  const none = await run(CALL.QUEUE_DRAIN_TO_MAX_SIZE, int32(0), [frame('q')]);
  assert.deepEqual(none.slice(1).map((f) => f.flags & 0x1c00), [FLAG_BEGIN_STRUCT, FLAG_END_STRUCT]);
  assert.equal(seen.length, 0, 'a maximum of 0 asks the member nothing');
  assert.equal(typeOf(await run(CALL.QUEUE_CLEAR, Buffer.alloc(0), [frame('q')])), CALL.QUEUE_CLEAR + 1);
  assert.deepEqual(seen.pop(), ['clear', 'q']);
});

/** Where an answer's correlation id lies: after the frame header (6 bytes) and the message type (4). */
const FRAME_ID_AT = 10;

test('the one-buffer answers equal what the message writer builds, byte for byte', () => {
  const random = new SeededRandom(11);
  for (let i = 0; i < 200; i++) {
    const type = random.nextInt(0x7fffffff);
    const id = BigInt(random.nextInt(0x7fffffff)) * 4096n - 17n;
    assert.deepEqual(simpleResponse(type, id, 0), MessageWriter.response(type, id).build());
    const flag = simpleResponse(type, id, 1);
    flag[SIMPLE_FIXED_AT] = 1;
    assert.deepEqual(flag, MessageWriter.response(type, id, 1).setBoolean(0, true).build());
    const n = random.nextInt(1 << 30) - (1 << 29);
    const int = simpleResponse(type, id, 4);
    int.writeInt32LE(n, SIMPLE_FIXED_AT);
    assert.deepEqual(int, MessageWriter.response(type, id, 4).setInt(0, n).build());
    assert.deepEqual(simpleResponse(type, id, 0, null), MessageWriter.response(type, id).nullFrame().build());
    const data = Buffer.from(Array.from({ length: random.nextInt(300) }, () => random.nextInt(256)));
    const withData = simpleResponse(type, id, 0, data.length);
    data.copy(withData, withData.length - data.length);
    assert.deepEqual(withData, MessageWriter.response(type, id).bytes(data).build());
  }
  // Correlation ids at the edges of the fast path (a safe integer) and of int64.
  const safe = BigInt(Number.MAX_SAFE_INTEGER);
  for (const id of [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, safe - 1n, safe, safe + 1n, -1n, -(2n ** 63n), 2n ** 63n - 1n]) {
    assert.deepEqual(simpleResponse(7, id, 0), MessageWriter.response(7, id).build(), String(id));
    assert.equal(simpleResponse(7, id, 0).readBigInt64LE(FRAME_ID_AT), id);
  }
  // A stored value written in place reads as dataOfStored says, for every kind.
  for (const [value, contentType] of [[Buffer.from('héllo'), 'text/plain'], [Buffer.from('{"a":1}'), 'application/json'], [Buffer.from([0xff, 0]), null], [stringData('kept whole'), CONTENT_TYPE_SERIALIZED]] as const) {
    const kind = valueKind(value, contentType);
    const out = Buffer.alloc(3 + dataLengthOfKind(value, kind));
    writeDataOfKind(out, 3, value, kind);
    assert.deepEqual(out.subarray(3), dataOfStored(value, contentType));
  }
});

test('a long parameter reads as the number it names, clamped to ±(2^53 - 1) beyond', () => {
  const safe = BigInt(Number.MAX_SAFE_INTEGER);
  const expected = (v: bigint): number => (v > safe ? Number.MAX_SAFE_INTEGER : v < -safe ? Number.MIN_SAFE_INTEGER : Number(v));
  const random = new SeededRandom(5);
  const values = [0n, 1n, -1n, 2n ** 32n - 1n, 2n ** 32n, -(2n ** 32n), safe - 1n, safe, safe + 1n, -safe, -safe - 1n, -(2n ** 53n), -(2n ** 53n) + 1n, 2n ** 53n, -(2n ** 63n), 2n ** 63n - 1n];
  for (let i = 0; i < 500; i++) values.push(BigInt.asIntN(64, (BigInt(random.nextInt(0x7fffffff)) << 33n) ^ BigInt(random.nextInt(0x7fffffff))));
  for (const v of values) {
    const r = new MessageReader(callMessage(CALL.MAP_SET, longs(7n, v), []));
    assert.equal(r.long(0, 'threadId'), 7);
    assert.equal(r.long(8, 'ttl'), expected(v), String(v));
  }
});

test('decodeUtf8 reads strict UTF-8 as TextDecoder does, short ASCII included, and refuses the rest', () => {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const random = new SeededRandom(23);
  const pool = [0x00, 0x41, 0x7a, 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff];
  for (let i = 0; i < 5000; i++) {
    const n = random.nextInt(30);
    const bytes = Buffer.from(Array.from({ length: n }, () => (random.nextInt(2) === 0 ? 0x20 + random.nextInt(0x5f) : (pool[random.nextInt(pool.length)] as number))));
    // Seen through a view with other bytes around it, as a frame's content is.
    const view = Buffer.concat([Buffer.from([0xff]), bytes, Buffer.from([0xff])]).subarray(1, 1 + n);
    let expected: string | null = null;
    try {
      expected = strict.decode(bytes);
    } catch {
      expected = null;
    }
    if (expected === null) assert.throws(() => decodeUtf8(view, 'a key'), (e: unknown) => e instanceof GridError && e.code === 'ERR_CLIENT_PROTOCOL');
    else assert.equal(decodeUtf8(view, 'a key'), expected);
  }
  for (const text of ['k12345', 'a key longer than twelve bytes', 'é', 'clé longue, non ASCII']) assert.equal(decodeUtf8(new Uint8Array(Buffer.from(text)), 'a key'), text);
});
