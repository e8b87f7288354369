// Checks the owner side of a split-brain merge (OP.MAP_MERGE in src/data/replica-store.ts, payloads
// of src/data/merge-batch.ts): the owner applies the call's policy to every merging entry against the
// entry it holds, read without counting a hit; a stored entry keeps the merging entry's history and a
// version above the one it replaced; the answer counts the stored entries; one BACKUP.MAP_MERGE write
// brings a backup to exactly the owner's data and metadata; nothing stored means no backup write and
// no version bump; a refused batch (malformed, unknown policy, key too large) changes nothing. Also
// the payload codecs' round trip and their bounds (entry count, non-finite times).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpWire } from '../../src/cluster/messages.js';
import type { MapConfig } from '../../src/config/types.js';
import {
  decodeMapMerge,
  decodeMergedRecords,
  encodeMapMerge,
  encodeMergedRecords,
  localMapMerge,
  MAP_MERGE_SCHEMA,
  MERGE_BATCH_ENTRIES_MAX,
  type MergingEntry,
} from '../../src/data/merge-batch.js';
import type { MergePolicyName } from '../../src/data/merge-policy.js';
import { BACKUP, OP, ReplicaStore, wanGuard, type OwnerResult } from '../../src/data/replica-store.js';
import { encodeWith } from '../../src/cluster/protocol/schema-codec.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { GridError } from '../../src/util/errors.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 7;
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const pid = (key: string): number => partitionIdOfKey(utf8(key), PARTITIONS);

function newStore(map: Partial<MapConfig> = {}): ReplicaStore {
  return testStore({ partitionCount: PARTITIONS, map: () => map });
}

const op = (code: number, name: string, key: Buffer, value: Uint8Array = Buffer.alloc(0)): OpWire => ({ code, name, key, value, contentType: null, timeoutMs: 0 });

function merging(key: string, value: string, stats: Partial<MergingEntry> = {}): MergingEntry {
  return { key: utf8(key), value: utf8(value), contentType: 'text/plain', creationTimeMs: 10, updateTimeMs: 10, lastAccessTimeMs: 10, expirationTimeMs: Infinity, hits: 0, version: 0, ttlMs: -1, maxIdleMs: -1, ...stats };
}

/** Runs one MAP_MERGE on the owner; every entry must belong to one partition. */
function merge(store: ReplicaStore, policy: MergePolicyName, entries: MergingEntry[], nowMs = 50_000): OwnerResult {
  const p = partitionIdOfKey(entries[0]?.key ?? Buffer.alloc(0), PARTITIONS);
  for (const e of entries) assert.equal(partitionIdOfKey(e.key, PARTITIONS), p, 'test setup: one partition per call');
  return store.runOwnerOp(p, op(OP.MAP_MERGE, 'm', Buffer.alloc(0), encodeMapMerge({ policy, entries })), nowMs);
}

/** Keys of one partition, so they can travel in one call. */
function keysOfOnePartition(n: number): string[] {
  const target = pid('k0');
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (pid(`k${i}`) === target) out.push(`k${i}`);
  return out;
}

const value = (store: ReplicaStore, key: string): string | null => store.maps.peek('m', utf8(key), pid(key), 60_000)?.value.toString() ?? null;

/** Owner and backup start equal: every owner write is applied on the backup in version order. */
class Pair {
  readonly owner = newStore();
  readonly backup = newStore();
  run(partitionId: number, o: OpWire, nowMs: number): OwnerResult {
    const r = this.owner.runOwnerOp(partitionId, o, nowMs);
    if (r.backup !== null) assert.equal(this.backup.applyBackup(partitionId, this.owner.version(partitionId), r.backup), 'applied');
    return r;
  }
}

test('LatestUpdate on the owner: newer merging entries are stored with their history, older ones are not; the backup ends identical', () => {
  const [a, b, c] = keysOfOnePartition(3) as [string, string, string];
  const p = pid(a);
  const s = new Pair();
  s.run(p, op(OP.MAP_PUT, 'm', utf8(a), utf8('a-larger')), 1000);
  s.run(p, op(OP.MAP_PUT, 'm', utf8(a), utf8('a-larger-2')), 1100); // version 1
  s.run(p, op(OP.MAP_PUT, 'm', utf8(c), utf8('c-larger')), 3000);
  const before = s.owner.version(p);
  const r = s.run(
    p,
    op(
      OP.MAP_MERGE,
      'm',
      Buffer.alloc(0),
      encodeMapMerge({
        policy: 'LatestUpdateMergePolicy',
        entries: [
          merging(a, 'a-smaller', { creationTimeMs: 900, updateTimeMs: 2000, lastAccessTimeMs: 2500, hits: 7, version: 0 }),
          merging(b, 'b-smaller', { creationTimeMs: 5, updateTimeMs: 6, lastAccessTimeMs: 8, hits: 3, version: 9 }),
          merging(c, 'c-smaller', { updateTimeMs: 2999 }),
        ],
      }),
    ),
    50_000,
  );
  assert.deepEqual(r.outcome, { kind: 'count', count: 2 });
  assert.equal(r.backup?.code, BACKUP.MAP_MERGE);
  assert.equal(s.owner.version(p), before + 1, 'one write for the whole batch');
  assert.equal(value(s.owner, a), 'a-smaller');
  assert.equal(value(s.owner, b), 'b-smaller');
  assert.equal(value(s.owner, c), 'c-larger');
  const va = s.owner.maps.peek('m', utf8(a), p, 60_000);
  assert.deepEqual(
    { creation: va?.creationTimeMs, update: va?.updateTimeMs, access: va?.lastAccessTimeMs, hits: va?.hits, version: va?.version, type: va?.contentType },
    { creation: 900, update: 2000, access: 2500, hits: 7, version: 2, type: 'text/plain' },
    'history of the merging entry; version one above the replaced one',
  );
  assert.equal(s.owner.maps.peek('m', utf8(b), p, 60_000)?.version, 9, 'a new key keeps the merging version');
  assert.deepEqual(s.backup.exportPartition(p, 60_000), s.owner.exportPartition(p, 60_000));
});

test('HigherHits reads the existing entry without counting a hit; a kept entry is untouched and nothing is replicated', () => {
  const [a] = keysOfOnePartition(1) as [string];
  const p = pid(a);
  const store = newStore();
  store.runOwnerOp(p, op(OP.MAP_PUT, 'm', utf8(a), utf8('larger')), 1000);
  for (let i = 0; i < 3; i++) store.runOwnerOp(p, op(OP.MAP_GET, 'm', utf8(a)), 2000 + i);
  const version = store.version(p);
  const r = merge(store, 'HigherHitsMergePolicy', [merging(a, 'smaller', { hits: 2 })]);
  assert.deepEqual(r.outcome, { kind: 'count', count: 0 });
  assert.equal(r.backup, null);
  assert.equal(store.version(p), version);
  const held = store.maps.peek('m', utf8(a), p, 60_000);
  assert.deepEqual([held?.value.toString(), held?.hits, held?.lastAccessTimeMs], ['larger', 3, 2002]);
  assert.deepEqual(merge(store, 'HigherHitsMergePolicy', [merging(a, 'smaller', { hits: 3 })]).outcome, { kind: 'count', count: 1 }, 'a tie goes to the merging entry');
  assert.equal(value(store, a), 'smaller');
});

test('PassThrough, PutIfAbsent and Discard on the owner', () => {
  const [a, b] = keysOfOnePartition(2) as [string, string];
  const cases: [MergePolicyName, number, string, string | null][] = [
    ['PassThroughMergePolicy', 2, 'a-smaller', 'b-smaller'],
    ['PutIfAbsentMergePolicy', 1, 'a-larger', 'b-smaller'],
    ['DiscardMergePolicy', 0, 'a-larger', null],
  ];
  for (const [policy, count, expectA, expectB] of cases) {
    const store = newStore();
    store.runOwnerOp(pid(a), op(OP.MAP_PUT, 'm', utf8(a), utf8('a-larger')), 1000);
    const r = merge(store, policy, [merging(a, 'a-smaller', { updateTimeMs: 0 }), merging(b, 'b-smaller')]);
    assert.deepEqual(r.outcome, { kind: 'count', count }, policy);
    assert.equal(value(store, a), expectA, policy);
    assert.equal(value(store, b), expectB, policy);
    assert.equal(r.backup === null, count === 0, policy);
  }
});

test('LatestAccess and ExpirationTime compare the existing entry as the owner sees it (its map TTL and max-idle)', () => {
  const [a] = keysOfOnePartition(1) as [string];
  const p = pid(a);
  const store = newStore({ timeToLiveSeconds: 100 }); // existing expires at update + 100 s
  store.runOwnerOp(p, op(OP.MAP_PUT, 'm', utf8(a), utf8('larger')), 10_000);
  store.runOwnerOp(p, op(OP.MAP_GET, 'm', utf8(a)), 20_000); // last access 20 s
  assert.deepEqual(merge(store, 'ExpirationTimeMergePolicy', [merging(a, 's1', { expirationTimeMs: 109_999 })], 30_000).outcome, { kind: 'count', count: 0 });
  assert.deepEqual(merge(store, 'LatestAccessMergePolicy', [merging(a, 's2', { lastAccessTimeMs: 19_999, updateTimeMs: 29_000 })], 30_000).outcome, { kind: 'count', count: 0 });
  assert.deepEqual(merge(store, 'ExpirationTimeMergePolicy', [merging(a, 's3', { expirationTimeMs: 110_000, updateTimeMs: 15_000 })], 30_000).outcome, { kind: 'count', count: 1 });
  assert.equal(value(store, a), 's3');
  // Now the held entry is s3: last access 10 ms (its history), so a later access wins.
  assert.deepEqual(merge(store, 'LatestAccessMergePolicy', [merging(a, 's4', { lastAccessTimeMs: 11, updateTimeMs: 15_000 })], 30_000).outcome, { kind: 'count', count: 1 });
  assert.equal(value(store, a), 's4');
});

test('a refused batch changes nothing: malformed payload, unknown policy, a key over the limit', () => {
  const [a] = keysOfOnePartition(1) as [string];
  const p = pid(a);
  const store = newStore();
  const refuse = (payload: Uint8Array, code: string): void => {
    const version = store.version(p);
    assert.throws(
      () => store.runOwnerOp(p, op(OP.MAP_MERGE, 'm', Buffer.alloc(0), payload), 1000),
      (e: unknown) => e instanceof GridError && e.code === code,
    );
    assert.equal(store.version(p), version);
    assert.equal(value(store, a), null);
  };
  const good = encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [merging(a, 'x')] });
  refuse(good.subarray(0, good.length - 1), 'ERR_PROTOCOL_MALFORMED');
  refuse(Buffer.concat([good, Buffer.from([0])]), 'ERR_PROTOCOL_MALFORMED');
  refuse(encodeWith(MAP_MERGE_SCHEMA, { policy: 99, entries: [merging(a, 'x')] }), 'ERR_PROTOCOL_MALFORMED');
  const bigKey = Buffer.alloc(64 * 1024 + 1, 0x61);
  refuse(encodeWith(MAP_MERGE_SCHEMA, { policy: 1, entries: [merging(a, 'x'), { ...merging(a, 'y'), key: bigKey }] }), 'ERR_DATA_ENTRY_TOO_LARGE');
});

test('payload codecs: round trip, at most MERGE_BATCH_ENTRIES_MAX entries, finite times (expiration may be Infinity)', () => {
  const entries = [merging('a', '1', { expirationTimeMs: Infinity, hits: 2 ** 40, version: 3 }), { ...merging('b', '', { updateTimeMs: -5 }), contentType: null }];
  const batch = decodeMapMerge(encodeMapMerge({ policy: 'ExpirationTimeMergePolicy', entries }));
  assert.equal(batch.policy, 'ExpirationTimeMergePolicy');
  assert.deepEqual(batch.entries.map((e) => ({ ...e, key: Buffer.from(e.key), value: Buffer.from(e.value) })), entries);
  const records = entries.map(({ expirationTimeMs: _drop, ...r }) => r);
  assert.deepEqual(decodeMergedRecords(encodeMergedRecords(records)).map((e) => ({ ...e, key: Buffer.from(e.key), value: Buffer.from(e.value) })), records);
  const malformed = (f: () => unknown): void => assert.throws(f, (e: unknown) => e instanceof GridError && e.code === 'ERR_PROTOCOL_MALFORMED');
  const tiny = { ...merging('', ''), contentType: null };
  const many = Array.from({ length: MERGE_BATCH_ENTRIES_MAX + 1 }, () => tiny);
  assert.equal(decodeMapMerge(encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: many.slice(1) })).entries.length, MERGE_BATCH_ENTRIES_MAX);
  malformed(() => decodeMapMerge(encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: many })));
  malformed(() => decodeMergedRecords(encodeMergedRecords(many.map(({ expirationTimeMs: _drop, ...r }) => r))));
  for (const bad of [{ creationTimeMs: Infinity }, { updateTimeMs: -Infinity }, { lastAccessTimeMs: Infinity }, { expirationTimeMs: -Infinity }]) {
    malformed(() => decodeMapMerge(encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [merging('a', '1', bad)] })));
  }
  malformed(() => decodeMergedRecords(encodeMergedRecords([{ ...records[0]!, updateTimeMs: Infinity }])));
});

test('a merge encoded with remember decodes to its own batch on this member; a copy of its bytes decodes the same entries', () => {
  const entries = [merging('a', '1', { hits: 4 }), merging('b', '2')];
  const bytes = encodeMapMerge({ policy: 'PassThroughMergePolicy', entries }, true);
  assert.equal(decodeMapMerge(bytes).entries, entries, 'the remembered batch, not a decoding');
  const copied = decodeMapMerge(Buffer.from(bytes));
  assert.notEqual(copied.entries, entries);
  assert.deepEqual(copied.entries.map((e) => ({ ...e, key: Buffer.from(e.key), value: Buffer.from(e.value) })), entries);
  // Without remember, the bytes are decoded.
  assert.notEqual(decodeMapMerge(encodeMapMerge({ policy: 'PassThroughMergePolicy', entries })).entries, entries);
  // A batch that would not decode is refused when encoded.
  assert.throws(() => encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [merging('a', '1', { updateTimeMs: NaN })] }, true), (e: unknown) => e instanceof GridError && e.code === 'ERR_PROTOCOL_MALFORMED');
});

test('a local merge stand-in applies on this member; a copy of it (as another member would receive it) is malformed and changes nothing', () => {
  const store = newStore();
  const entries = [merging('sa', '1')];
  const p = pid('sa');
  const call = (value: Uint8Array): OpWire => ({ code: OP.WAN_MAP_MERGE, name: 'm', key: utf8('src'), value, contentType: wanGuard(false, 7, 'src/r/p'), timeoutMs: 0 });
  // Elsewhere the stand-in is zero bytes: refused as malformed, nothing stored.
  assert.throws(() => store.runOwnerOp(p, call(Buffer.from(localMapMerge({ policy: 'PassThroughMergePolicy', entries }))), 100), (e: unknown) => e instanceof GridError && e.code === 'ERR_PROTOCOL_MALFORMED');
  const before = store.runOwnerOp(p, op(OP.MAP_GET, 'm', utf8('sa')), 100).outcome;
  assert.ok(before.kind !== 'value' || before.value === null, 'nothing stored by the refused call');
  // Here it is the batch itself.
  const r = store.runOwnerOp(p, call(localMapMerge({ policy: 'PassThroughMergePolicy', entries })), 100);
  assert.deepEqual(r.outcome, { kind: 'count', count: 1 });
  const got = store.runOwnerOp(p, op(OP.MAP_GET, 'm', utf8('sa')), 200).outcome;
  assert.equal(got.kind === 'value' && got.value !== null && Buffer.from(got.value).toString(), '1');
});
