// An entry's own expiry (the client protocol's put with a TTL or max-idle): kept with the record,
// over the map's policy; reset by a write that names none; carried by backups, migration snapshots,
// merges (split brain, WAN) and the persistence log, so an entry expires at the same time wherever
// it ends up.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { MapConfig } from '../../src/config/types.js';
import { encodeWith } from '../../src/cluster/protocol/schema-codec.js';
import { ENTRY_EXPIRY_MAP, expiryOfWord, expiryWord, normalizedExpiryMs } from '../../src/data/expiry.js';
import { encodeMapMerge } from '../../src/data/merge-batch.js';
import { BACKUP, OP, PUT_EXPIRY_PAYLOAD, PUT_MODE, ReplicaStore } from '../../src/data/replica-store.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { applyRecord } from '../../src/persistence/persistence-service.js';
import { crc32c } from '../../src/persistence/crc32c.js';
import { readRecord, RecordBatch } from '../../src/persistence/log-record.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 7;
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function newStore(map: Partial<MapConfig> = {}): ReplicaStore {
  return testStore({ partitionCount: PARTITIONS, map: () => map, seed: 3 });
}

const pid = (key: string): number => partitionIdOfKey(utf8(key), PARTITIONS);

function putWithExpiry(store: ReplicaStore, key: string, value: string, ttlMs: number, maxIdleMs: number, nowMs: number, mode: number = PUT_MODE.PUT) {
  const payload = encodeWith(PUT_EXPIRY_PAYLOAD, { mode, ttlMs, maxIdleMs, value: utf8(value) });
  return store.runOwnerOp(pid(key), { code: OP.MAP_PUT_EXPIRY, name: 'm', key: utf8(key), value: payload, contentType: 'text/plain', timeoutMs: 0 }, nowMs);
}

const has = (store: ReplicaStore, key: string, nowMs: number): boolean => store.maps.peek('m', utf8(key), pid(key), nowMs) !== null;

test('the expiry words: the map\'s, never, milliseconds, and long settings kept to the second', () => {
  for (const ms of [ENTRY_EXPIRY_MAP, 0, 1, 1500, 2 ** 31 - 1]) assert.equal(expiryOfWord(expiryWord(ms)), ms, String(ms));
  assert.equal(expiryOfWord(expiryWord(2 ** 31 + 1)), Math.ceil((2 ** 31 + 1) / 1000) * 1000, 'rounded up to the second');
  assert.equal(expiryOfWord(expiryWord(90 * 24 * 3600 * 1000)), 90 * 24 * 3600 * 1000);
  assert.ok(expiryOfWord(expiryWord(1e15)) > 60 * 365 * 24 * 3600 * 1000, 'capped near 68 years, never below what was asked by much');
  assert.deepEqual([-5, -1, 0, 0.2, 7, 2 ** 60, Number.NaN].map(normalizedExpiryMs), [-1, -1, 0, 1, 7, 0, -1]);
});

test('an entry\'s own TTL and max-idle over the map\'s; a write naming none takes the map\'s again', () => {
  const store = newStore();
  putWithExpiry(store, 'a', 'v', 1000, ENTRY_EXPIRY_MAP, 0);
  assert.equal(has(store, 'a', 999), true);
  assert.equal(has(store, 'a', 1000), false, 'gone at its TTL although the map never expires entries');
  putWithExpiry(store, 'b', 'v', 1000, ENTRY_EXPIRY_MAP, 0);
  store.runOwnerOp(pid('b'), { code: OP.MAP_PUT, name: 'm', key: utf8('b'), value: utf8('w'), contentType: null, timeoutMs: 0 }, 500);
  assert.equal(has(store, 'b', 10_000), true, 'a plain put gives the record the map\'s expiry (none) again');
  // max-idle of its own: reads keep it, idleness ends it.
  putWithExpiry(store, 'c', 'v', ENTRY_EXPIRY_MAP, 1000, 0);
  assert.notEqual(store.maps.get('m', utf8('c'), pid('c'), 900), null);
  assert.equal(has(store, 'c', 1800), true);
  assert.equal(has(store, 'c', 1900), false);
  // A map with a TTL: 0 of an entry's own means never.
  const ttlMap = newStore({ timeToLiveSeconds: 10 });
  putWithExpiry(ttlMap, 'n', 'v', 0, ENTRY_EXPIRY_MAP, 0);
  putWithExpiry(ttlMap, 'd', 'v', ENTRY_EXPIRY_MAP, ENTRY_EXPIRY_MAP, 0);
  assert.equal(has(ttlMap, 'n', 1e9), true);
  assert.equal(has(ttlMap, 'd', 10_000), false, 'the map\'s TTL');
  // The sweep finds them in a map whose policy expires nothing.
  const swept = newStore();
  for (let i = 0; i < 20; i++) putWithExpiry(swept, `s${i}`, 'v', 100, ENTRY_EXPIRY_MAP, 0);
  assert.equal(swept.maps.sweepExpired(200, 1_000_000), 20);
  assert.equal(swept.maps.totalEntries(), 0);
});

test('modes: a set answers nothing, a put the old value, a putIfAbsent the value there and writes nothing then', () => {
  const store = newStore();
  const valueOf = (r: ReturnType<ReplicaStore['runOwnerOp']>): string | null => (r.outcome.kind === 'value' && r.outcome.value !== null ? r.outcome.value.toString() : null);
  assert.equal(valueOf(putWithExpiry(store, 'k', 'one', 5000, ENTRY_EXPIRY_MAP, 0, PUT_MODE.SET)), null);
  assert.equal(valueOf(putWithExpiry(store, 'k', 'two', 5000, ENTRY_EXPIRY_MAP, 0, PUT_MODE.PUT)), 'one');
  const absent = putWithExpiry(store, 'k', 'three', 5000, ENTRY_EXPIRY_MAP, 0, PUT_MODE.PUT_IF_ABSENT);
  assert.deepEqual([valueOf(absent), absent.backup], ['two', null]);
  assert.throws(() => putWithExpiry(store, 'k', 'x', -7, ENTRY_EXPIRY_MAP, 0), /put with expiry/);
  assert.throws(() => putWithExpiry(store, 'k', 'x', 10, 1.5, 0), /put with expiry/);
  assert.throws(() => putWithExpiry(store, 'k', 'x', 10, ENTRY_EXPIRY_MAP, 0, 9), /put with expiry/);
});

test('backups, migration snapshots and merges keep an entry\'s own expiry', () => {
  const owner = newStore();
  const backup = newStore();
  const p = pid('k');
  const r = putWithExpiry(owner, 'k', 'v', 1000, 4000, 100);
  assert.equal(r.backup?.code, BACKUP.MAP_PUT_EXPIRY);
  assert.equal(backup.applyBackup(p, owner.version(p), r.backup!), 'applied');
  const plain = owner.runOwnerOp(pid('plain'), { code: OP.MAP_PUT_EXPIRY, name: 'm', key: utf8('plain'), value: encodeWith(PUT_EXPIRY_PAYLOAD, { mode: PUT_MODE.SET, ttlMs: -1, maxIdleMs: -1, value: utf8('v') }), contentType: null, timeoutMs: 0 }, 100);
  assert.equal(plain.backup?.code, BACKUP.MAP_PUT, 'no expiry of its own: a plain backup write');
  assert.deepEqual([backup.maps.peek('m', utf8('k'), p, 200)?.ttlMs, backup.maps.peek('m', utf8('k'), p, 200)?.maxIdleMs], [1000, 4000]);
  assert.equal(has(backup, 'k', 1099), true);
  assert.equal(has(backup, 'k', 1100), false);
  // Migration: the snapshot carries it.
  const snapshot = owner.exportPartition(p, 200);
  const target = newStore();
  target.importPartition(p, snapshot.version, snapshot.entries, snapshot.queues, 200);
  assert.equal(has(target, 'k', 1099), true);
  assert.equal(has(target, 'k', 1100), false);
  // A merge (split brain, WAN) stores the merging entry's own expiry, and its backups too.
  const merged = newStore();
  const entry = { key: utf8('k'), value: utf8('m'), contentType: null, creationTimeMs: 100, updateTimeMs: 100, lastAccessTimeMs: 100, expirationTimeMs: 1100, hits: 0, version: 1, ttlMs: 1000, maxIdleMs: -1 };
  const m = merged.runOwnerOp(p, { code: OP.MAP_MERGE, name: 'm', key: Buffer.alloc(0), value: encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [entry] }), contentType: null, timeoutMs: 0 }, 150);
  assert.deepEqual(m.outcome, { kind: 'count', count: 1 });
  assert.equal(has(merged, 'k', 1099), true);
  assert.equal(has(merged, 'k', 1100), false);
  const mergedBackup = newStore();
  assert.equal(mergedBackup.applyBackup(p, merged.version(p), m.backup!), 'applied');
  assert.equal(mergedBackup.maps.peek('m', utf8('k'), p, 150)?.ttlMs, 1000);
  assert.throws(() => encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [{ ...entry, ttlMs: -3 }] }), /own expiry/);
});

test('the persistence log keeps an entry\'s own expiry; a put without one is written as before', () => {
  const batch = new RecordBatch(16);
  const common = { partitionId: pid('k'), seq: 1, partitionVersion: 1, name: 'm', key: utf8('k'), value: utf8('v'), contentType: null, creationTimeMs: 100, updateTimeMs: 100, lastAccessTimeMs: 100, expirationTimeMs: 1100, version: 0, hits: 0 };
  batch.add({ type: 'mapPut', ...common });
  const plainBytes = Buffer.from(batch.take());
  assert.equal(plainBytes[9], 0, 'no flag');
  batch.add({ type: 'mapPut', ...common, seq: 2, ttlMs: 1000, maxIdleMs: ENTRY_EXPIRY_MAP });
  const own = Buffer.from(batch.take());
  assert.equal(own[9], 1, 'FLAG_OWN_EXPIRY');
  assert.equal(own.length, plainBytes.length + 16);
  const read = readRecord(own, 0);
  assert.equal(read.kind, 'record');
  if (read.kind !== 'record' || read.record.type !== 'mapPut') return;
  assert.deepEqual([read.record.ttlMs, read.record.maxIdleMs], [1000, ENTRY_EXPIRY_MAP]);
  const plainRead = readRecord(plainBytes, 0);
  assert.ok(plainRead.kind === 'record' && plainRead.record.type === 'mapPut' && plainRead.record.ttlMs === undefined);
  // The flag on another record type is refused.
  const q = new RecordBatch(16);
  q.add({ type: 'mapClear', partitionId: 1, seq: 3, partitionVersion: 1, name: 'm' });
  const clear = Buffer.from(q.take());
  clear[9] = 1;
  clear.writeUInt32BE(crc32c(clear.subarray(8)) >>> 0, 4); // a well-checksummed record, refused for its flag
  const refused = readRecord(clear, 0);
  assert.equal(refused.kind, 'bad');
  assert.match(refused.kind === 'bad' ? refused.reason : '', /flags 1/);
  // Recovery: the TTL counts again from the load time, as the map's does.
  const store = newStore();
  applyRecord(store, read.record, 50, 5000, { records: 0, entriesSkippedExpired: 0 });
  assert.equal(has(store, 'k', 5999), true);
  assert.equal(has(store, 'k', 6000), false);
});
