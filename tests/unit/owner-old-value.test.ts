// The owner operations that answer the value they replaced or removed (the client protocol's put,
// remove and putIfAbsent): the answer is the old value, the write happens exactly as a plain put or
// remove (same backup operation, version + 1), and a backup applying it ends with the owner's data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpWire } from '../../src/cluster/messages.js';
import { defaultMap, defaultQueue } from '../../src/config/draft.js';
import { BACKUP, OP, ReplicaStore } from '../../src/data/replica-store.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { SeededRandom } from '../../src/util/prng.js';

const PARTITIONS = 7;
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function newStore(): ReplicaStore {
  return new ReplicaStore({ partitionCount: PARTITIONS, resolveMapConfig: (name) => defaultMap(name), resolveQueueConfig: (name) => defaultQueue(name), random: new SeededRandom(1), waitersMax: 10 });
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
  const apply = (r: ReturnType<ReplicaStore['runOwnerOp']>): void => {
    if (r.backup !== null) assert.equal(backup.applyBackup(p, owner.version(p), r.backup), 'applied');
  };
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
