// Checks what a cut-off member hands back (src/merge/merge-replay.ts), on a real ReplicaStore:
// collectReplay turns owned partitions and unconfirmed writes into MAP_MERGE batches (one map and one
// partition each, at most batch-size entries and batchBytesMax bytes, every entry with its hits,
// times and expiration) under each map's policy, drops DiscardMergePolicy entries and queue items
// without a call (counted), keeps unconfirmed polls whatever the queue policy, counts removals as
// skipped, and hands each key or item back once; ReplayBacklog bounds calls, bytes and a queue's
// calls in flight and keeps order; replayOutcome splits answers into stored/kept; replayLogLine says
// what will happen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BackupOpWire, OpWire } from '../../src/cluster/messages.js';
import type { MapConfig, MergePolicyConfig, QueueMergePolicyName } from '../../src/config/types.js';
import { decodeMapMerge, encodeMapMerge, type MergingEntry } from '../../src/data/merge-batch.js';
import { BACKUP, OP, ReplicaStore } from '../../src/data/replica-store.js';
import { collectReplay, ReplayBacklog, replayLogLine, replayOutcome, type ReplayCall, type ReplayPlan, type ReplayPolicies } from '../../src/merge/merge-replay.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 11;
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const pid = (key: string): number => partitionIdOfKey(utf8(key), PARTITIONS);
const op = (code: number, name: string, key: string, value = ''): OpWire => ({ code, name, key: utf8(key), value: utf8(value), contentType: null, timeoutMs: 0 });

function newStore(maps: Record<string, Partial<MapConfig>> = {}): ReplicaStore {
  return testStore({ partitionCount: PARTITIONS, map: (name) => maps[name] ?? {} });
}

function policies(maps: Record<string, MergePolicyConfig>, queues: Record<string, MergePolicyConfig<QueueMergePolicyName>> = {}): ReplayPolicies {
  return {
    map: (name) => maps[name] ?? { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
    queue: (name) => queues[name] ?? { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
  };
}

const ALL = Array.from({ length: PARTITIONS }, (_, p) => p);
const MIB = 1024 * 1024;

/** Every entry the plan's map calls carry, with the map and partition of its call. */
function mergedEntries(plan: ReplayPlan): { map: string; partitionId: number; policy: string; entry: MergingEntry }[] {
  const out = [];
  for (const c of plan.calls) {
    if (c.op.code !== OP.MAP_MERGE) continue;
    const batch = decodeMapMerge(c.op.value);
    assert.equal(c.entries, batch.entries.length);
    for (const entry of batch.entries) out.push({ map: c.op.name, partitionId: c.partitionId, policy: batch.policy, entry });
  }
  return out;
}

test('merging: owned partitions go out as MAP_MERGE batches of one map and partition, at most batch-size entries, with hits, times and expiration', () => {
  const store = newStore({ m: { timeToLiveSeconds: 100 } });
  for (let i = 0; i < 60; i++) store.runOwnerOp(pid(`k${i}`), op(OP.MAP_PUT, 'm', `k${i}`, `v${i}`), 1000 + i);
  for (let i = 0; i < 7; i++) store.runOwnerOp(pid(`n${i}`), op(OP.MAP_PUT, 'n', `n${i}`, `w${i}`), 500);
  for (let g = 0; g < 3; g++) store.runOwnerOp(pid('k5'), op(OP.MAP_GET, 'm', 'k5'), 2000 + g);
  const owned = ALL.filter((p) => p !== pid('k0'));
  const plan = collectReplay(store, [], owned, 3000, policies({ m: { policy: 'LatestUpdateMergePolicy', batchSize: 3 }, n: { policy: 'PassThroughMergePolicy', batchSize: 100 } }), MIB);
  const got = mergedEntries(plan);
  const expectedKeys = [...Array.from({ length: 60 }, (_, i) => `k${i}`), ...Array.from({ length: 7 }, (_, i) => `n${i}`)].filter((k) => owned.includes(pid(k)));
  assert.deepEqual(got.map((g) => Buffer.from(g.entry.key).toString()).sort(), expectedKeys.sort(), 'every owned key once, nothing else');
  assert.equal(plan.entries, expectedKeys.length);
  assert.deepEqual([plan.items, plan.discarded, plan.skipped], [0, 0, 0]);
  for (const c of plan.calls) {
    const batch = decodeMapMerge(c.op.value);
    assert.ok(batch.entries.length <= (c.op.name === 'm' ? 3 : 100));
    for (const e of batch.entries) assert.equal(pid(Buffer.from(e.key).toString()), c.partitionId, 'one partition per call');
    assert.equal(batch.policy, c.op.name === 'm' ? 'LatestUpdateMergePolicy' : 'PassThroughMergePolicy');
    assert.equal(c.queue, null);
  }
  // Full batches: per (map, partition) group, only the last batch may be short.
  const perGroup = new Map<string, number>();
  for (const g of got) perGroup.set(`${g.map}/${g.partitionId}`, (perGroup.get(`${g.map}/${g.partitionId}`) ?? 0) + 1);
  const expectedCalls = [...perGroup].reduce((n, [k, count]) => n + Math.ceil(count / (k.startsWith('m/') ? 3 : 100)), 0);
  assert.equal(plan.calls.length, expectedCalls);
  const k5 = got.find((g) => Buffer.from(g.entry.key).toString() === 'k5')?.entry;
  assert.deepEqual(
    { ...k5, key: undefined, value: Buffer.from(k5?.value ?? []).toString() },
    { key: undefined, value: 'v5', contentType: null, creationTimeMs: 1005, updateTimeMs: 1005, lastAccessTimeMs: 2002, expirationTimeMs: 101_005, hits: 3, version: 0, ttlMs: -1, maxIdleMs: -1 },
  );
  assert.equal(got.find((g) => g.map === 'n')?.entry.expirationTimeMs, Infinity, 'a map without TTL or max-idle never expires');
  assert.deepEqual([...plan.policies].sort(), ['map m: LatestUpdateMergePolicy', 'map n: PassThroughMergePolicy']);
});

test('a batch stays under batchBytesMax; an entry larger than that goes alone', () => {
  const store = newStore();
  const keys: string[] = [];
  for (let i = 0; keys.length < 6; i++) if (pid(`k${i}`) === pid('k0')) keys.push(`k${i}`);
  for (const k of keys) store.runOwnerOp(pid(k), op(OP.MAP_PUT, 'm', k, 'x'.repeat(100)), 1);
  store.runOwnerOp(pid(keys[5]!), op(OP.MAP_PUT, 'm', keys[5]!, 'y'.repeat(1000)), 2);
  const plan = collectReplay(store, [], [pid('k0')], 3, policies({}), 400);
  const sizes = plan.calls.map((c) => c.entries);
  assert.equal(sizes.reduce((a, b) => a + b, 0), 6);
  for (const c of plan.calls) assert.ok(c.bytes <= 400 || c.entries === 1, `a batch of ${c.entries} entries has ${c.bytes} bytes`);
  assert.ok(plan.calls.some((c) => c.entries === 1 && c.bytes > 1000), 'the large entry travels alone');
  assert.ok(plan.calls.some((c) => c.entries > 1), 'small entries share calls');
});

test('DiscardMergePolicy: map entries and queue items are dropped without a call and counted; unconfirmed polls still go', () => {
  const store = newStore();
  const qp = store.queuePartition('d');
  for (let i = 0; i < 3; i++) store.runOwnerOp(pid(`k${i}`), op(OP.MAP_PUT, 'm', `k${i}`, 'v'), 1);
  for (let i = 0; i < 4; i++) store.runOwnerOp(qp, op(OP.QUEUE_OFFER, 'd', '', `item${i}`), 1);
  const poll = store.runOwnerOp(qp, op(OP.QUEUE_POLL, 'd', ''), 2).backup as BackupOpWire; // takes item0
  const unconfirmedAdd = store.runOwnerOp(qp, op(OP.QUEUE_OFFER, 'd', '', 'late'), 2).backup as BackupOpWire;
  const unconfirmedMapPut = store.runOwnerOp(pid('k0'), op(OP.MAP_PUT, 'm', 'k0', 'v2'), 3).backup as BackupOpWire;
  const plan = collectReplay(
    store,
    [
      { partitionId: qp, op: poll },
      { partitionId: qp, op: unconfirmedAdd },
      { partitionId: pid('k0'), op: unconfirmedMapPut },
    ],
    ALL,
    5,
    policies({ m: { policy: 'DiscardMergePolicy', batchSize: 100 } }, { d: { policy: 'DiscardMergePolicy', batchSize: 100 } }),
    MIB,
  );
  assert.equal(plan.discarded, 3 + 4, '3 map entries; item1..3 and late');
  assert.deepEqual([plan.entries, plan.items], [0, 0]);
  assert.deepEqual(
    plan.calls.map((c) => [c.op.code, c.op.name, c.op.value.toString()]),
    [[OP.QUEUE_MERGE_REMOVE, 'd', 'item0']],
  );
  assert.match(replayLogLine('removed', plan) ?? '', /^removed: 0 map entr\(ies\) in 0 batch\(es\), 0 queue item\(s\) and 1 poll\(s\) will be handed back .*\(merge policies: map m: DiscardMergePolicy, queue d: DiscardMergePolicy\); 7 entr\(ies\)\/item\(s\) dropped by DiscardMergePolicy$/);
});

test('removed, not merging: unconfirmed writes only, each key once, with the history of the record they made when it is still held', () => {
  const store = newStore();
  const [a, b, c, d] = ['a', 'b', 'c', 'd'];
  const ua = store.runOwnerOp(pid(a), op(OP.MAP_PUT, 'm', a, 'a1'), 1000).backup as BackupOpWire;
  store.runOwnerOp(pid(a), op(OP.MAP_GET, 'm', a), 1500);
  store.runOwnerOp(pid(a), op(OP.MAP_GET, 'm', a), 1600);
  const ub = store.runOwnerOp(pid(b), op(OP.MAP_PUT, 'm', b, 'b1'), 1000).backup as BackupOpWire;
  store.runOwnerOp(pid(b), op(OP.MAP_PUT, 'm', b, 'b2'), 2000); // confirmed: not in the list
  const uc1 = store.runOwnerOp(pid(c), op(OP.MAP_PUT, 'm', c, 'c1'), 1000).backup as BackupOpWire;
  const uc2 = store.runOwnerOp(pid(c), op(OP.MAP_PUT, 'm', c, 'c2'), 1100).backup as BackupOpWire;
  const removal = store.runOwnerOp(pid(c), op(OP.MAP_REMOVE, 'm', d), 1200).backup; // d absent: no write
  assert.equal(removal, null);
  const ur = store.runOwnerOp(pid(a), op(OP.MAP_REMOVE, 'm', a), 1700).backup as BackupOpWire;
  store.runOwnerOp(pid(d), op(OP.MAP_PUT, 'm', d, 'd1'), 1000);
  const merged = store.runOwnerOp(
    pid(d),
    { ...op(OP.MAP_MERGE, 'm', ''), value: encodeMapMerge({ policy: 'PassThroughMergePolicy', entries: [{ key: utf8(d), value: utf8('d-merged'), contentType: 'x/y', creationTimeMs: 7, updateTimeMs: 8, lastAccessTimeMs: 9, expirationTimeMs: Infinity, hits: 4, version: 5, ttlMs: -1, maxIdleMs: -1 }] }) },
    1800,
  ).backup as BackupOpWire;
  const unconfirmed = [ua, ub, uc1, uc2, ur, merged].map((o) => ({ partitionId: pid(o.name === 'm' && o.key.length > 0 ? Buffer.from(o.key).toString() : d), op: o }));
  const plan = collectReplay(store, unconfirmed, [], 5000, policies({ m: { policy: 'LatestUpdateMergePolicy', batchSize: 100 } }), MIB);
  assert.equal(plan.skipped, 1, 'the removal is not merged');
  const byKey = new Map(mergedEntries(plan).map((g) => [Buffer.from(g.entry.key).toString(), g.entry]));
  assert.deepEqual([...byKey.keys()].sort(), ['a', 'b', 'c', 'd']);
  const view = (e: MergingEntry | undefined) => e && [Buffer.from(e.value).toString(), e.creationTimeMs, e.updateTimeMs, e.lastAccessTimeMs, e.hits, e.version];
  // a was removed afterwards (not merged), so its record is gone: the write's own time, no hits.
  assert.deepEqual(view(byKey.get(a)), ['a1', 1000, 1000, 1000, 0, 0]);
  assert.deepEqual(view(byKey.get(b)), ['b1', 1000, 1000, 1000, 0, 0], 'overwritten since: the write as it was made');
  assert.deepEqual(view(byKey.get(c)), ['c2', 1000, 1100, 1100, 0, 1], 'the later write, with the history of the record it made');
  assert.deepEqual(view(byKey.get(d)), ['d-merged', 7, 8, 9, 4, 5], 'an unconfirmed merge hands back what it stored');
  assert.equal(byKey.get(d)?.contentType, 'x/y');
});

test('a record that reads are counted on keeps its hits when its unconfirmed write is handed back', () => {
  const store = newStore();
  const u = store.runOwnerOp(pid('a'), op(OP.MAP_PUT, 'm', 'a', 'a1'), 1000).backup as BackupOpWire;
  for (let i = 0; i < 4; i++) store.runOwnerOp(pid('a'), op(OP.MAP_GET, 'm', 'a'), 1100 + i);
  const [g] = mergedEntries(collectReplay(store, [{ partitionId: pid('a'), op: u }], [], 2000, policies({}), MIB));
  assert.deepEqual([g?.entry.hits, g?.entry.lastAccessTimeMs, g?.policy], [4, 1103, 'PutIfAbsentMergePolicy']);
});

test('merging with unconfirmed writes: a key or item in both is handed back once, as the partition holds it now', () => {
  const store = newStore();
  const qp = store.queuePartition('q');
  const u = store.runOwnerOp(pid('a'), op(OP.MAP_PUT, 'm', 'a', 'old'), 1000).backup as BackupOpWire;
  store.runOwnerOp(pid('a'), op(OP.MAP_PUT, 'm', 'a', 'new'), 2000);
  const item = store.runOwnerOp(qp, op(OP.QUEUE_OFFER, 'q', '', 'i1'), 1000).backup as BackupOpWire;
  const plan = collectReplay(store, [{ partitionId: pid('a'), op: u }, { partitionId: qp, op: item }], ALL, 3000, policies({}, { q: { policy: 'PutIfAbsentMergePolicy', batchSize: 5 } }), MIB);
  const entries = mergedEntries(plan);
  assert.deepEqual(entries.map((e) => Buffer.from(e.entry.value).toString()), ['new']);
  const queueCalls = plan.calls.filter((c) => c.op.code === OP.QUEUE_MERGE_ADD);
  assert.deepEqual(queueCalls.map((c) => [c.op.value.toString(), c.op.key.toString(), c.queue]), [['i1', String(item.itemId), { name: 'q', inFlightMax: 5 }]]);
  assert.deepEqual([plan.entries, plan.items], [1, 1]);
});

function call(bytes: number, queue: string | null = null, inFlightMax = 100): ReplayCall {
  return { partitionId: 0, op: op(OP.MAP_MERGE, 'm', ''), entries: 1, bytes, queue: queue === null ? null : { name: queue, inFlightMax } };
}

test('ReplayBacklog: at most callsMax calls and bytesMax bytes in flight (one call always may go), in order', () => {
  const b = new ReplayBacklog(3, 1000);
  const calls = [call(10), call(10), call(10), call(10), call(2000), call(10)];
  b.add(calls);
  assert.deepEqual([b.take(), b.take(), b.take(), b.take()], [calls[0], calls[1], calls[2], null], 'three calls at most');
  b.finish(calls[0]!, false);
  assert.equal(b.take(), calls[3]);
  assert.equal(b.take(), null, 'the 2000-byte call waits while others are in flight');
  for (const c of calls.slice(1, 4)) b.finish(c, false);
  assert.equal(b.inFlight, 0);
  assert.equal(b.take(), calls[4], 'alone it may go');
  assert.equal(b.take(), null);
  b.finish(calls[4]!, true); // cut off again: back at the end
  assert.deepEqual([b.take(), b.take()], [calls[5], null]);
  b.finish(calls[5]!, false);
  assert.deepEqual([b.take(), b.take()], [calls[4], null]);
  assert.equal(b.pending, 0);
});

test('ReplayBacklog: a queue has at most its batch-size calls in flight, and the calls behind wait (order kept)', () => {
  const b = new ReplayBacklog(64, 1 << 30);
  const q = [call(1, 'q', 2), call(1, 'q', 2), call(1, 'q', 2), call(1, 'r', 2)];
  b.add(q);
  assert.deepEqual([b.take(), b.take(), b.take()], [q[0], q[1], null]);
  b.finish(q[1]!, false);
  assert.deepEqual([b.take(), b.take(), b.take()], [q[2], q[3], null]);
  assert.equal(b.pending, 0);
  assert.equal(b.inFlight, 3);
  // Many calls: the taken prefix is dropped as it grows, the order stays.
  const many = Array.from({ length: 5000 }, () => call(1));
  const big = new ReplayBacklog(10_000, 1 << 30);
  big.add(many.slice(0, 2500));
  const seen: ReplayCall[] = [];
  for (let c = big.take(); c !== null; c = big.take()) seen.push(c);
  big.add(many.slice(2500));
  for (let c = big.take(); c !== null; c = big.take()) seen.push(c);
  assert.equal(seen.length, 5000);
  assert.ok(seen.every((c, i) => c === many[i]));
});

test('replayOutcome: a MAP_MERGE count splits its entries into stored and kept; a queue add is stored or kept; a poll is neither', () => {
  const batch: ReplayCall = { ...call(1), entries: 5 };
  assert.deepEqual(replayOutcome(batch, { kind: 'count', count: 3 }), { stored: 3, kept: 2 });
  const add: ReplayCall = { ...call(1, 'q'), op: op(OP.QUEUE_MERGE_ADD, 'q', '1', 'x') };
  assert.deepEqual(replayOutcome(add, { kind: 'flag', flag: true }), { stored: 1, kept: 0 });
  assert.deepEqual(replayOutcome(add, { kind: 'flag', flag: false }), { stored: 0, kept: 1 });
  const removal: ReplayCall = { ...call(1, 'q'), op: op(OP.QUEUE_MERGE_REMOVE, 'q', '1', 'x') };
  assert.deepEqual(replayOutcome(removal, { kind: 'flag', flag: true }), { stored: 0, kept: 0 });
});

test('replayLogLine: nothing to say is null; otherwise counts, policies (at most 8 named) and what is not merged', () => {
  const empty: ReplayPlan = { calls: [], entries: 0, items: 0, discarded: 0, skipped: 0, policies: [] };
  assert.equal(replayLogLine('x', empty), null);
  const plan: ReplayPlan = { ...empty, calls: [call(1), call(1)], entries: 150, skipped: 2, policies: Array.from({ length: 10 }, (_, i) => `map m${i}: PutIfAbsentMergePolicy`) };
  assert.equal(
    replayLogLine('merging into cluster c', plan),
    `merging into cluster c: 150 map entr(ies) in 2 batch(es), 0 queue item(s) and 0 poll(s) will be handed back to the cluster after joining (merge policies: ${plan.policies.slice(0, 8).join(', ')} and 2 more); 2 removal(s) made meanwhile are not merged`,
  );
});

test('the plan counts the entries that come from unconfirmed writes alone (no listed copy of their partition here), and the log line says so', () => {
  const store = newStore();
  store.runOwnerOp(pid('a'), op(OP.MAP_PUT, 'm', 'a', 'new'), 1000);
  const unconfirmed = ['a', 'b'].map((k) => ({ partitionId: pid(k), op: { code: BACKUP.MAP_PUT, name: 'm', key: utf8(k), value: utf8('old'), contentType: null, itemId: 0, timeMs: 900 } }));
  // 'a' is in a partition handed back whole (its held value wins); 'b' only as an unconfirmed write.
  const plan = collectReplay(store, unconfirmed, pid('a') === pid('b') ? [] : [pid('a')], 3000, policies({}), MIB);
  assert.equal(plan.unconfirmedOnly, pid('a') === pid('b') ? 2 : 1);
  assert.match(replayLogLine('merging', plan) ?? '', /; \d of the entries are writes no backup confirmed, of partitions this member holds no listed copy of$/);
});

test('copies held as a backup go back only where the cluster has no entry; the owner\'s under the map\'s policy (nemesis seed 101)', () => {
  // A stale backup handing back r-7=46 with PassThrough after its owner handed back the newer value
  // put the old value over every newer one; as a fill-only hand-back it restores only what is missing.
  const store = newStore();
  const keys = ['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-6', 'r-7', 'r-8'];
  for (const k of keys) store.runOwnerOp(pid(k), op(OP.MAP_PUT, 'reg', k, '46'), 1);
  const owned = [pid('r-1')];
  const backedUp = [...new Set(keys.map(pid))].filter((p) => !owned.includes(p));
  const plan = collectReplay(store, [], owned, 10, policies({ reg: { policy: 'PassThroughMergePolicy', batchSize: 100 } }), MIB, backedUp);
  const got = mergedEntries(plan);
  assert.equal(got.length, keys.length, 'every key goes back');
  for (const g of got) assert.equal(g.policy, owned.includes(g.partitionId) ? 'PassThroughMergePolicy' : 'PutIfAbsentMergePolicy', `key ${Buffer.from(g.entry.key).toString()}`);
  assert.equal(plan.fromBackups, got.filter((g) => !owned.includes(g.partitionId)).length);
  assert.deepEqual(plan.policies, ['map reg: PassThroughMergePolicy'], 'the log names the configured policy');
  assert.match(replayLogLine('merging', plan) ?? '', /from backup copies, stored only where the cluster has none/);
  // Discard stays discard for backups too.
  const discarded = collectReplay(store, [], [], 10, policies({ reg: { policy: 'DiscardMergePolicy', batchSize: 100 } }), MIB, backedUp);
  assert.deepEqual([discarded.calls.length, discarded.fromBackups], [0, 0]);
});

test('a write this member made as owner and no backup confirmed keeps its policy when the partition is now a backup copy here', () => {
  const store = newStore();
  store.runOwnerOp(pid('a'), op(OP.MAP_PUT, 'm', 'a', 'new'), 2000);
  const u: BackupOpWire = { code: BACKUP.MAP_PUT, name: 'm', key: utf8('a'), value: utf8('new'), contentType: null, itemId: 0, timeMs: 2000 };
  const [g] = mergedEntries(collectReplay(store, [{ partitionId: pid('a'), op: u }], [], 3000, policies({ m: { policy: 'PassThroughMergePolicy', batchSize: 100 } }), MIB, [pid('a')]));
  assert.equal(g?.policy, 'PassThroughMergePolicy');
});
