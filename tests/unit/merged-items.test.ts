// Checks that a queue item handed back twice by a merging side (its owner and its backup both hold
// it) is stored once on the larger side (src/data/merged-items.ts, OP.QUEUE_MERGE_ADD/REMOVE in
// src/data/replica-store.ts): the second copy is recognised after the first was re-numbered and even
// after it was polled; a poll the merging side made removes the re-numbered copy; the log forgets
// after its ttl and keeps at most its bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpWire } from '../../src/cluster/messages.js';
import { MergedItemLog } from '../../src/data/merged-items.js';
import { OP, ReplicaStore } from '../../src/data/replica-store.js';
import { testStore } from '../harness/store.js';

const store = (): ReplicaStore =>
  testStore({ partitionCount: 7 });
const op = (code: number, id: number | string, value: string): OpWire => ({ code, name: 'q', key: Buffer.from(String(id)), value: Buffer.from(value), contentType: null, timeoutMs: 0 });
const items = (s: ReplicaStore): string[] => (s.queues.exportQueue('q')?.items ?? []).map((i) => `${i.id}:${i.value.toString()}`);
const flag = (s: ReplicaStore, o: OpWire, now = 1000): boolean => {
  const r = s.runOwnerOp(3, o, now).outcome;
  assert.equal(r.kind, 'flag');
  return r.kind === 'flag' && r.flag;
};

test('an item handed back by two replicas of the merging side is stored once, even after the first copy was polled', () => {
  const s = store();
  assert.equal(flag(s, op(OP.QUEUE_OFFER, 0, 'own-1')), true); // the larger side's own item, id 1
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'theirs-1')), true); // id 1 on the merging side, different bytes
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 2, 'theirs-2')), true);
  assert.deepEqual(items(s), ['1:own-1', '2:theirs-1', '3:theirs-2']);
  // The merging side's backup hands the same two items back.
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'theirs-1')), false);
  s.runOwnerOp(3, op(OP.QUEUE_POLL, 0, ''), 1000);
  s.runOwnerOp(3, op(OP.QUEUE_POLL, 0, ''), 1000);
  s.runOwnerOp(3, op(OP.QUEUE_POLL, 0, ''), 1000);
  assert.deepEqual(items(s), []);
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 2, 'theirs-2')), false, 'polled already: not stored again');
  // Same id, other bytes: another item.
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 2, 'theirs-2b')), true);
});

test('a poll made on the merging side removes the copy another replica handed back under a new id', () => {
  const s = store();
  flag(s, op(OP.QUEUE_OFFER, 0, 'own-1'));
  flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'x'));
  assert.deepEqual(items(s), ['1:own-1', '2:x']);
  assert.equal(flag(s, op(OP.QUEUE_MERGE_REMOVE, 1, 'x')), true);
  assert.deepEqual(items(s), ['1:own-1']);
  assert.equal(flag(s, op(OP.QUEUE_MERGE_REMOVE, 1, 'x')), false);
});

test('the log forgets after its ttl and holds at most its bound, oldest first', () => {
  const log = new MergedItemLog(100, 3);
  const v = Buffer.from('v');
  log.remember('q', 1, v, 11, 0);
  assert.equal(log.storedAs('q', 1, v, 99), 11);
  assert.equal(log.storedAs('q', 1, v, 100), null);
  for (let i = 1; i <= 4; i++) log.remember('q', i, v, 10 + i, 200 + i);
  assert.equal(log.size, 3);
  assert.equal(log.storedAs('q', 1, v, 210), null);
  assert.equal(log.storedAs('q', 4, v, 210), 14);
  assert.equal(log.storedAs('other', 4, v, 210), null);
  assert.equal(log.storedAs('q', 4, Buffer.from('w'), 210), null);
});

test('what a dropped or replaced copy remembered matches nothing: a hand-back under a reused id is stored again', () => {
  const s = store();
  // A member hands its queue back into its own one-member cluster (it could not reach the larger one).
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'item')), true);
  assert.deepEqual(items(s), ['1:item']);
  // It leaves again: its copy is dropped with the partition, and the queue numbers from 1 again.
  s.dropPartition(3);
  assert.deepEqual(items(s), []);
  // The next hand-back carries the same item under the same (reused) id: it must be stored, not
  // taken for the copy already stored (seed 212121 with --overlap lost it so).
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'item')), true);
  assert.deepEqual(items(s), ['1:item']);
  // A snapshot replacing the partition forgets likewise.
  s.importPartition(3, 5, [], [], 1000);
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'item')), true);
  // Without a drop the second copy is still kept out.
  assert.equal(flag(s, op(OP.QUEUE_MERGE_ADD, 1, 'item')), false);
});

test('MergedItemLog.forgetQueue forgets one queue only', () => {
  const log = new MergedItemLog();
  log.remember('a', 1, Buffer.from('x'), 7, 0);
  log.remember('b', 1, Buffer.from('x'), 8, 0);
  log.forgetQueue('a');
  assert.equal(log.storedAs('a', 1, Buffer.from('x'), 1), null);
  assert.equal(log.storedAs('b', 1, Buffer.from('x'), 1), 8);
});
