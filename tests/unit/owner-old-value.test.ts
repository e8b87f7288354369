// The owner operations the client protocol added: those that answer the value they replaced or
// removed (put, remove, putIfAbsent, replace), the conditional ones (replaceIfSame, removeIfSame),
// the whole-map read of one partition, and queue drain and clear. A write happens exactly as a plain
// put, remove or poll would (its backup operation, version + 1), and a backup applying it ends with
// the owner's data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BackupOpWire, OpWire } from '../../src/cluster/messages.js';
import { decodeWith, encodeWith } from '../../src/cluster/protocol/schema-codec.js';
import { collectReplay } from '../../src/merge/merge-replay.js';
import { defaultMap, defaultQueue } from '../../src/config/draft.js';
import { BACKUP, ENTRIES_ANSWER, ENTRIES_READ, IF_SAME_PAYLOAD, OP, QUEUE_ITEMS_ANSWER, ReplicaStore } from '../../src/data/replica-store.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 7;
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function newStore(): ReplicaStore {
  return testStore({ partitionCount: PARTITIONS });
}

/** Applies an owner's result on `backup` as the owner's backup write (nothing when it wrote nothing). */
function applierTo(owner: ReplicaStore, backup: ReplicaStore, p: number): (r: ReturnType<ReplicaStore['runOwnerOp']>) => void {
  return (r) => {
    if (r.backup !== null) assert.equal(backup.applyBackup(p, owner.version(p), r.backup), 'applied');
  };
}

const op = (code: number, key: string, value = ''): OpWire => ({ code, name: 'm', key: utf8(key), value: utf8(value), contentType: value === '' ? null : 'text/plain', timeoutMs: 0 });

function valueOf(outcome: { kind: string; value?: Uint8Array | null }): string | null {
  assert.equal(outcome.kind, 'value');
  return outcome.value === null || outcome.value === undefined ? null : Buffer.from(outcome.value).toString('utf8');
}

test('get-and-put, put-if-absent-get and get-and-remove answer the old value and write like put and remove', () => {
  const owner = newStore();
  const backup = newStore();
  const p = partitionIdOfKey(utf8('k'), PARTITIONS);
  const apply = applierTo(owner, backup, p);
  const get = (s: ReplicaStore): string | null => valueOf(s.runOwnerOp(p, op(OP.MAP_GET, 'k'), 2).outcome);

  let r = owner.runOwnerOp(p, op(OP.MAP_GET_AND_PUT, 'k', 'one'), 1);
  assert.equal(valueOf(r.outcome), null);
  assert.equal(r.backup?.code, BACKUP.MAP_PUT);
  apply(r);
  r = owner.runOwnerOp(p, op(OP.MAP_GET_AND_PUT, 'k', 'two'), 1);
  assert.equal(valueOf(r.outcome), 'one', 'the replaced value, still readable after the overwrite');
  apply(r);
  r = owner.runOwnerOp(p, op(OP.MAP_PUT_IF_ABSENT_GET, 'k', 'three'), 1);
  assert.equal(valueOf(r.outcome), 'two');
  assert.equal(r.backup, null, 'present: nothing written');
  assert.equal(get(owner), 'two');
  assert.equal(get(backup), 'two');
  r = owner.runOwnerOp(p, op(OP.MAP_GET_AND_REMOVE, 'k'), 1);
  assert.equal(valueOf(r.outcome), 'two');
  assert.equal(r.backup?.code, BACKUP.MAP_REMOVE);
  apply(r);
  assert.equal(get(owner), null);
  assert.equal(get(backup), null);
  r = owner.runOwnerOp(p, op(OP.MAP_GET_AND_REMOVE, 'k'), 1);
  assert.equal(valueOf(r.outcome), null);
  assert.equal(r.backup, null, 'absent: nothing written');
  r = owner.runOwnerOp(p, op(OP.MAP_PUT_IF_ABSENT_GET, 'k', 'four'), 1);
  assert.equal(valueOf(r.outcome), null, 'absent: stored');
  apply(r);
  assert.equal(get(backup), 'four');
  assert.equal(owner.version(p), backup.version(p));
  // The partition's live entries, as the cluster-wide size sums them.
  const count = owner.runOwnerOp(p, op(OP.MAP_SIZE_PARTITION, ''), 3).outcome;
  assert.deepEqual(count, { kind: 'count', count: 1 });
  assert.deepEqual(owner.runOwnerOp((p + 1) % PARTITIONS, op(OP.MAP_SIZE_PARTITION, ''), 3).outcome, { kind: 'count', count: 0 });
});

test('queue peek answers the head item and leaves it (no write, no backup)', () => {
  const owner = newStore();
  const q = (code: number, value = ''): OpWire => ({ code, name: 'q', key: Buffer.alloc(0), value: utf8(value), contentType: 'text/plain', timeoutMs: 0 });
  assert.equal(valueOf(owner.runOwnerOp(0, q(OP.QUEUE_PEEK), 1).outcome), null);
  owner.runOwnerOp(0, q(OP.QUEUE_OFFER, 'a'), 1);
  owner.runOwnerOp(0, q(OP.QUEUE_OFFER, 'b'), 1);
  const version = owner.version(0);
  const peeked = owner.runOwnerOp(0, q(OP.QUEUE_PEEK), 1);
  assert.equal(valueOf(peeked.outcome), 'a');
  assert.equal(peeked.backup, null);
  assert.equal(owner.version(0), version);
  assert.equal(valueOf(owner.runOwnerOp(0, q(OP.QUEUE_POLL), 1).outcome), 'a');
  assert.equal(valueOf(owner.runOwnerOp(0, q(OP.QUEUE_PEEK), 1).outcome), 'b');
});

test('replace, replaceIfSame and removeIfSame write only on their condition; a value is the same when a client reads it the same', () => {
  const owner = newStore();
  const backup = newStore();
  const p = partitionIdOfKey(utf8('k'), PARTITIONS);
  const apply = applierTo(owner, backup, p);
  const typed = (code: number, value: Buffer, contentType: string | null): OpWire => ({ code, name: 'm', key: utf8('k'), value, contentType, timeoutMs: 0 });
  const ifSame = (expected: string, expectedType: string | null, value: string): OpWire =>
    typed(OP.MAP_REPLACE_IF_SAME, encodeWith(IF_SAME_PAYLOAD, { expected: utf8(expected), expectedType, value: utf8(value) }), 'text/plain; charset=utf-8');

  let r = owner.runOwnerOp(p, op(OP.MAP_REPLACE_GET, 'k', 'one'), 1);
  assert.equal(valueOf(r.outcome), null, 'absent: nothing replaced');
  assert.equal(r.backup, null);
  assert.equal(owner.runOwnerOp(p, op(OP.MAP_GET, 'k'), 1).outcome.kind, 'value');
  assert.equal(valueOf(owner.runOwnerOp(p, op(OP.MAP_GET, 'k'), 1).outcome), null);
  apply(owner.runOwnerOp(p, op(OP.MAP_PUT, 'k', 'one'), 1)); // text/plain, as REST stores it
  r = owner.runOwnerOp(p, op(OP.MAP_REPLACE_GET, 'k', 'two'), 1);
  assert.equal(valueOf(r.outcome), 'one');
  assert.equal(r.backup?.code, BACKUP.MAP_PUT);
  apply(r);

  // Other bytes, or the same bytes read as another kind (byte[] against a String): not the same.
  r = owner.runOwnerOp(p, ifSame('one', 'text/plain; charset=utf-8', 'x'), 1);
  assert.deepEqual([r.outcome, r.backup], [{ kind: 'flag', flag: false }, null]);
  r = owner.runOwnerOp(p, ifSame('two', 'application/octet-stream', 'x'), 1);
  assert.deepEqual([r.outcome, r.backup], [{ kind: 'flag', flag: false }, null]);
  // 'text/plain' (REST) and 'text/plain; charset=utf-8' (a client String) are the same String.
  r = owner.runOwnerOp(p, ifSame('two', 'text/plain; charset=utf-8', 'three'), 1);
  assert.deepEqual(r.outcome, { kind: 'flag', flag: true });
  apply(r);
  assert.deepEqual(backup.maps.peek('m', utf8('k'), p, 1)?.contentType, 'text/plain; charset=utf-8');

  r = owner.runOwnerOp(p, typed(OP.MAP_REMOVE_IF_SAME, utf8('two'), 'text/plain'), 1);
  assert.deepEqual([r.outcome, r.backup], [{ kind: 'flag', flag: false }, null]);
  r = owner.runOwnerOp(p, typed(OP.MAP_REMOVE_IF_SAME, utf8('three'), 'text/plain'), 1);
  assert.deepEqual(r.outcome, { kind: 'flag', flag: true });
  assert.equal(r.backup?.code, BACKUP.MAP_REMOVE);
  apply(r);
  assert.equal(backup.maps.peek('m', utf8('k'), p, 1), null);
  assert.equal(owner.version(p), backup.version(p));
});

test('a partition\'s entries read keys, values or both, and touch nothing', () => {
  const owner = newStore();
  const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  for (const k of keys) owner.runOwnerOp(partitionIdOfKey(utf8(k), PARTITIONS), op(OP.MAP_PUT, k, `v-${k}`), 1);
  const read = (p: number, what: number): { key: string; value: string; contentType: string | null }[] => {
    const o = owner.runOwnerOp(p, { code: OP.MAP_ENTRIES_PARTITION, name: 'm', key: Buffer.alloc(0), value: Buffer.of(what), contentType: null, timeoutMs: 0 }, 5);
    assert.equal(o.backup, null);
    assert.equal(o.outcome.kind, 'value');
    const value = (o.outcome as { value: Buffer }).value;
    return decodeWith(ENTRIES_ANSWER, value, 'test').entries.map((e) => ({ key: Buffer.from(e.key).toString(), value: Buffer.from(e.value).toString(), contentType: e.contentType }));
  };
  const all: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const entries = read(p, ENTRIES_READ.ENTRIES);
    for (const e of entries) {
      assert.equal(partitionIdOfKey(utf8(e.key), PARTITIONS), p);
      assert.deepEqual(e, { key: e.key, value: `v-${e.key}`, contentType: 'text/plain' });
      all.push(e.key);
    }
    assert.deepEqual(read(p, ENTRIES_READ.KEYS).map((e) => [e.key, e.value, e.contentType]), entries.map((e) => [e.key, '', null]));
    assert.deepEqual(read(p, ENTRIES_READ.VALUES).map((e) => [e.key, e.value]), entries.map((e) => ['', e.value]));
  }
  assert.deepEqual(all.sort(), keys);
  const hits = owner.maps.peek('m', utf8('a'), partitionIdOfKey(utf8('a'), PARTITIONS), 6);
  assert.equal(hits?.hits, 0, 'a read of the whole map counts no hit');
  assert.throws(() => owner.runOwnerOp(0, { code: OP.MAP_ENTRIES_PARTITION, name: 'm', key: Buffer.alloc(0), value: Buffer.of(9), contentType: null, timeoutMs: 0 }, 5), /unknown selection/);
});

test('queue drain takes at most its maximum from the head, clear takes all; backups and a cut-off member\'s hand-back follow', () => {
  const owner = newStore();
  const backup = newStore();
  const q = (code: number, value = '', max = 0): OpWire => ({ code, name: 'q', key: Buffer.alloc(0), value: utf8(value), contentType: 'text/plain', timeoutMs: max });
  const p = owner.queuePartition('q');
  const apply = applierTo(owner, backup, p);
  const items = (r: ReturnType<ReplicaStore['runOwnerOp']>): string[] =>
    decodeWith(QUEUE_ITEMS_ANSWER, (r.outcome as { value: Buffer }).value, 'test').items.map((i) => Buffer.from(i.value).toString());
  for (const v of ['a', 'b', 'c', 'd', 'e']) apply(owner.runOwnerOp(p, q(OP.QUEUE_OFFER, v), 1));
  const drained = owner.runOwnerOp(p, q(OP.QUEUE_DRAIN, '', 2), 1);
  assert.deepEqual(items(drained), ['a', 'b']);
  assert.equal(drained.backup?.code, BACKUP.QUEUE_REMOVE_MANY);
  apply(drained);
  assert.deepEqual(owner.queues.exportQueue('q')?.items.map((i) => i.id), backup.queues.exportQueue('q')?.items.map((i) => i.id));
  // Not confirmed by the backups before a split: the hand-back takes those items on the other side.
  const plan = collectReplay(owner, [{ partitionId: p, op: drained.backup as BackupOpWire }], [], 1, { map: () => defaultMap('m').mergePolicy, queue: () => defaultQueue('q').mergePolicy }, 1 << 20);
  assert.deepEqual(plan.calls.map((c) => [c.op.code, Buffer.from(c.op.key).toString(), Buffer.from(c.op.value).toString()]), [[OP.QUEUE_MERGE_REMOVE, '1', 'a'], [OP.QUEUE_MERGE_REMOVE, '2', 'b']]);
  const rest = owner.runOwnerOp(p, q(OP.QUEUE_DRAIN), 1);
  assert.deepEqual(items(rest), ['c', 'd', 'e'], '0: all');
  apply(rest);
  const empty = owner.runOwnerOp(p, q(OP.QUEUE_DRAIN), 1);
  assert.deepEqual([items(empty), empty.backup], [[], null]);
  for (const v of ['x', 'y']) apply(owner.runOwnerOp(p, q(OP.QUEUE_OFFER, v), 1));
  const cleared = owner.runOwnerOp(p, q(OP.QUEUE_CLEAR), 1);
  assert.deepEqual(cleared.outcome, { kind: 'count', count: 2 });
  assert.equal(cleared.backup?.code, BACKUP.QUEUE_CLEAR);
  apply(cleared);
  assert.equal(backup.queues.size('q'), 0);
  assert.equal(owner.version(p), backup.version(p));
});
