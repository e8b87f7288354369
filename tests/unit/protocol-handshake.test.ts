// Checks src/cluster/protocol/handshake.ts: request and response payloads round trip (also inside a
// frame read back by FrameReader), every truncation of a valid payload and every out-of-range field is
// ERR_PROTOCOL_MALFORMED, and answerHandshake refuses in the documented order (cluster name, versions,
// partition count, then credentials when security is on) and accepts a compatible peer with the
// highest protocol version both speak.
import { test } from 'node:test';
import { sampleHandshake } from '../harness/handshake-fixture.js';
import assert from 'node:assert/strict';
import {
  ADDRESSES_MAX,
  CLUSTER_NAME_BYTES_MAX,
  HANDSHAKE_FRAME_BYTES_MAX,
  HOST_BYTES_MAX,
  MEMBER_VERSION_BYTES_MAX,
  PASSWORD_BYTES_MAX,
  USERNAME_BYTES_MAX,
  answerHandshake,
  decodeHandshakeRequest,
  decodeHandshakeResponse,
  encodeHandshakeRequest,
  encodeHandshakeResponse,
  isHardRefusal,
  REFUSAL_CODES,
  type HandshakeLocal,
  type HandshakeRequest,
  type HandshakeResponse,
} from '../../src/cluster/protocol/handshake.js';
import { encodeFrame, PREAMBLE } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';
import { AssertionError } from '../../src/util/assert.js';
import { ByteWriter } from '../../src/util/bytes.js';
import { GridError } from '../../src/util/errors.js';

const malformed = (e: unknown): boolean => e instanceof GridError && e.code === 'ERR_PROTOCOL_MALFORMED';

// Protocol versions 1..1 on both sides here: answerHandshake's rules do not depend on the build's own version.
const REQUEST: HandshakeRequest = sampleHandshake({
  protocolVersionMin: 1,
  protocolVersionMax: 1,
  addresses: [
    { host: '127.0.0.1', port: 5701 },
    { host: '::1', port: 5702 },
    { host: 'grid-1.example.org', port: 65535 },
  ],
});

const LOCAL: HandshakeLocal = {
  clusterName: 'dev',
  memberUuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  memberVersion: '0.1.3',
  protocolVersionMin: 1,
  protocolVersionMax: 1,
  partitionCount: 271,
};

test('requests round trip, with and without identity', () => {
  assert.deepEqual(decodeHandshakeRequest(encodeHandshakeRequest(REQUEST)), REQUEST);
  const secure = { ...REQUEST, clusterName: 'prod é', identity: { username: 'admin', password: 'p@ss wörd' }, addresses: [] };
  assert.deepEqual(decodeHandshakeRequest(encodeHandshakeRequest(secure)), secure);
});

test('responses round trip', () => {
  const responses: HandshakeResponse[] = [
    { kind: 'accepted', memberUuid: LOCAL.memberUuid, memberVersion: '1.2.3-rc.1', protocolVersion: 1 },
    ...(Object.keys(REFUSAL_CODES) as (keyof typeof REFUSAL_CODES)[]).map(
      (reason): HandshakeResponse => ({ kind: 'refused', memberUuid: LOCAL.memberUuid, memberVersion: '0.1.0', reason, message: `because ${reason}` }),
    ),
  ];
  for (const r of responses) assert.deepEqual(decodeHandshakeResponse(encodeHandshakeResponse(r)), r);
});

test('a request travels as the first frame after the preamble', () => {
  const stream = Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 1 }, encodeHandshakeRequest(REQUEST))]);
  const [frame] = new FrameReader({ frameBytesMax: 1 << 20 }).push(stream);
  assert.ok(frame !== undefined);
  assert.equal(frame.messageType, HANDSHAKE_REQUEST);
  assert.deepEqual(decodeHandshakeRequest(frame.payload), REQUEST);
});

test('every truncation and every extension of a valid payload is malformed', () => {
  const secure = { ...REQUEST, identity: { username: 'u', password: 'p' } };
  for (const payload of [encodeHandshakeRequest(secure), encodeHandshakeRequest(REQUEST)]) {
    for (let n = 0; n < payload.length; n++) assert.throws(() => decodeHandshakeRequest(payload.subarray(0, n)), malformed, `cut at ${n}`);
    assert.throws(() => decodeHandshakeRequest(Buffer.concat([payload, Buffer.from([0])])), malformed);
  }
  const refused = encodeHandshakeResponse({ kind: 'refused', memberUuid: LOCAL.memberUuid, memberVersion: '0.1.0', reason: 'CLUSTER_NAME_MISMATCH', message: 'x' });
  const accepted = encodeHandshakeResponse({ kind: 'accepted', memberUuid: LOCAL.memberUuid, memberVersion: '0.1.0', protocolVersion: 1 });
  for (const response of [refused, accepted]) {
    for (let n = 0; n < response.length; n++) assert.throws(() => decodeHandshakeResponse(response.subarray(0, n)), malformed, `cut at ${n}`);
  }
});

// Builds a request payload field by field, so that single fields can be made invalid.
function rawRequest(o: Partial<Record<'lo' | 'hi' | 'name' | 'uuid' | 'version' | 'partitions' | 'host' | 'port' | 'count' | 'identity', number | string>>): Buffer {
  const w = new ByteWriter();
  w.u8(Number(o.lo ?? 1)).u8(Number(o.hi ?? 1));
  w.string(String(o.name ?? 'dev'), 1e6).string(String(o.uuid ?? REQUEST.memberUuid), 1e6).string(String(o.version ?? '0.1.0'), 1e6);
  w.u32(Number(o.partitions ?? 271));
  w.u32(Number(o.count ?? 1));
  w.string(String(o.host ?? 'h'), 1e6).u16(Number(o.port ?? 5701));
  w.u8(Number(o.identity ?? 0));
  return w.finish();
}

test('out-of-range fields are malformed', () => {
  assert.deepEqual(decodeHandshakeRequest(rawRequest({})).addresses, [{ host: 'h', port: 5701 }]);
  const bad: [string, Parameters<typeof rawRequest>[0]][] = [
    ['version min 0', { lo: 0 }],
    ['min above max', { lo: 3, hi: 2 }],
    ['empty cluster name', { name: '' }],
    ['cluster name too long', { name: 'x'.repeat(257) }],
    ['uuid not canonical', { uuid: 'not-a-uuid' }],
    ['uuid too long', { uuid: REQUEST.memberUuid + 'x' }],
    ['member version not semver', { version: '1.2' }],
    ['partition count 0', { partitions: 0 }],
    ['partition count above i32', { partitions: 0x8000_0000 }],
    ['empty host', { host: '' }],
    ['host with a space', { host: 'a b' }],
    ['port 0', { port: 0 }],
    ['too many addresses', { count: 17 }],
    ['identity flag 2', { identity: 2 }],
  ];
  for (const [name, o] of bad) assert.throws(() => decodeHandshakeRequest(rawRequest(o)), malformed, name);
  const unknownReason = Buffer.from(encodeHandshakeResponse({ kind: 'refused', memberUuid: LOCAL.memberUuid, memberVersion: '0.1.0', reason: 'VERSION_MISMATCH', message: '' }));
  unknownReason[unknownReason.length - 5] = 99; // the reason byte, before the empty message's u32 length
  assert.throws(() => decodeHandshakeResponse(unknownReason), malformed);
  assert.throws(() => decodeHandshakeResponse(Buffer.from([7])), malformed, 'unknown outcome');
});

test('encoding an invalid request is a programmer error', () => {
  assert.throws(() => encodeHandshakeRequest({ ...REQUEST, memberUuid: 'x' }), AssertionError);
  assert.throws(() => encodeHandshakeRequest({ ...REQUEST, addresses: [{ host: 'h', port: 70000 }] }), AssertionError);
  assert.throws(() => encodeHandshakeRequest({ ...REQUEST, clusterName: 'x'.repeat(300) }), AssertionError);
});

test('answerHandshake: a compatible peer is accepted with the highest common protocol version', () => {
  const a = answerHandshake(REQUEST, LOCAL);
  assert.deepEqual(a, { kind: 'accepted', memberUuid: LOCAL.memberUuid, memberVersion: LOCAL.memberVersion, protocolVersion: 1 });
  const wide = answerHandshake({ ...REQUEST, protocolVersionMin: 1, protocolVersionMax: 5 }, { ...LOCAL, protocolVersionMin: 2, protocolVersionMax: 3 });
  assert.equal(wide.kind === 'accepted' ? wide.protocolVersion : 0, 3, 'min of the two maxima');
  const narrow = answerHandshake({ ...REQUEST, protocolVersionMin: 1, protocolVersionMax: 2 }, { ...LOCAL, protocolVersionMin: 1, protocolVersionMax: 4 });
  assert.equal(narrow.kind === 'accepted' ? narrow.protocolVersion : 0, 2);
  assert.equal(isHardRefusal('NOT_CLUSTERED_YET'), false, 'the retired reason stays soft for old peers');
});

test('answerHandshake: with security on, credentials are required and checked', () => {
  const identity = { username: 'member', password: 'secret' };
  const secured: HandshakeLocal = { ...LOCAL, identityRequired: true, checkIdentity: (i) => i.username === 'member' && i.password === 'secret' };
  const reason = (r: HandshakeRequest, local: HandshakeLocal): string => {
    const a = answerHandshake(r, local);
    return a.kind === 'refused' ? a.reason : 'accepted';
  };
  assert.equal(reason({ ...REQUEST, identity }, secured), 'accepted');
  assert.equal(reason({ ...REQUEST, identity: null }, secured), 'AUTHENTICATION_FAILED');
  assert.equal(reason({ ...REQUEST, identity: { ...identity, password: 'guess' } }, secured), 'AUTHENTICATION_FAILED');
  assert.equal(reason({ ...REQUEST, identity: null }, { ...LOCAL, identityRequired: true }), 'AUTHENTICATION_FAILED', 'required even with the default check');
  assert.equal(reason({ ...REQUEST, identity: { username: 'x', password: 'y' } }, { ...LOCAL, identityRequired: true }), 'accepted', 'the default check accepts');
  assert.equal(reason({ ...REQUEST, identity: { username: 'x', password: 'y' } }, LOCAL), 'accepted', 'security off: credentials ignored');
  assert.equal(reason({ ...REQUEST, identity: null, clusterName: 'other' }, secured), 'CLUSTER_NAME_MISMATCH', 'the cluster name is checked first');
  assert.equal(isHardRefusal('AUTHENTICATION_FAILED'), true);
  const refused = answerHandshake({ ...REQUEST, identity: { ...identity, password: 'guess' } }, secured);
  assert.doesNotMatch(refused.kind === 'refused' ? refused.message : '', /secret|guess/);
});

test('answerHandshake: refusal reasons, in order, soft or hard', () => {
  const reason = (r: HandshakeRequest): string => {
    const a = answerHandshake(r, LOCAL);
    return a.kind === 'refused' ? a.reason : 'accepted';
  };
  assert.equal(reason({ ...REQUEST, clusterName: 'other', partitionCount: 7, memberVersion: '9.9.9' }), 'CLUSTER_NAME_MISMATCH');
  assert.equal(reason({ ...REQUEST, protocolVersionMin: 2, protocolVersionMax: 3 }), 'VERSION_MISMATCH');
  assert.equal(reason({ ...REQUEST, memberVersion: '0.2.0', partitionCount: 7 }), 'VERSION_MISMATCH');
  assert.equal(reason({ ...REQUEST, memberVersion: '0.1.99-beta' }), 'accepted', 'patch versions may differ');
  assert.equal(reason({ ...REQUEST, partitionCount: 7 }), 'PARTITION_COUNT_MISMATCH');
  assert.equal(isHardRefusal('CLUSTER_NAME_MISMATCH'), false);
  assert.equal(isHardRefusal('VERSION_MISMATCH'), true);
  assert.equal(isHardRefusal('PARTITION_COUNT_MISMATCH'), true);
});

test('a refusal never reveals this member\'s cluster name', () => {
  const a = answerHandshake({ ...REQUEST, clusterName: 'guess' }, { ...LOCAL, clusterName: 'secret-name' });
  assert.ok(a.kind === 'refused');
  assert.doesNotMatch(a.message, /secret-name/);
});

test('wire numbers are fixed (append-only)', () => {
  assert.deepEqual([HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE], [1, 2]);
  assert.deepEqual(REFUSAL_CODES, { CLUSTER_NAME_MISMATCH: 1, VERSION_MISMATCH: 2, PARTITION_COUNT_MISMATCH: 3, NOT_CLUSTERED_YET: 4, AUTHENTICATION_FAILED: 5 });
});

test('the largest valid handshake request fits HANDSHAKE_FRAME_BYTES_MAX exactly', () => {
  const longest = sampleHandshake({
    clusterName: 'c'.repeat(CLUSTER_NAME_BYTES_MAX),
    memberVersion: '123456789.123456789.123456789-' + 'x'.repeat(MEMBER_VERSION_BYTES_MAX - 30),
    addresses: Array.from({ length: ADDRESSES_MAX }, (_, i) => ({ host: 'h'.repeat(HOST_BYTES_MAX - 3) + String(100 + i), port: 65535 })),
    identity: { username: 'u'.repeat(USERNAME_BYTES_MAX), password: 'p'.repeat(PASSWORD_BYTES_MAX) },
  });
  const frame = encodeFrame({ messageType: HANDSHAKE_REQUEST }, encodeHandshakeRequest(longest));
  assert.equal(frame.length, HANDSHAKE_FRAME_BYTES_MAX);
});
