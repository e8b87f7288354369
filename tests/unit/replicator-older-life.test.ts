// A backup buffered behind a gap waits for the owner's snapshot. When the partition started again at
// a lower version on its owner (every replica was lost and it was re-created empty), a write of its
// earlier life, buffered before the snapshot, is above the snapshot's version for ever: the member
// asked for a copy, got one, found the same gap and asked again, and never became safe (seed 1806
// with --overlap --tcp: a resync loop every few milliseconds for the rest of the run).
import test from 'node:test';
import assert from 'node:assert/strict';
import { Replicator } from '../../src/replication/replicator.js';
import type { Transport } from '../../src/cluster/transport.js';
import { message } from '../../src/cluster/messages.js';
import type { Message } from '../../src/cluster/messages.js';
import { BACKUP } from '../../src/data/replica-store.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import { testStore } from '../harness/store.js';

const OWNER = { uuid: 'x', address: 'x:5701' };

function backupMember(): { replicator: Replicator; sent: Message[]; store: ReturnType<typeof testStore> } {
  const time = new FakeTime();
  const sent: Message[] = [];
  const transport: Transport = { send: (_a, m) => (sent.push(m), true), disconnect: () => {}, connectionCount: () => 1 };
  const store = testStore({ partitionCount: 3 });
  const replicator = new Replicator(
    { backupTimeoutMs: 1000, transferAckTimeoutMs: 1000, chunkBytesMax: 65536, antiEntropyIntervalMs: 30_000, bufferedBackupsMax: 100 },
    { selfUuid: 'b', addressOf: (u) => `${u}:5701`, isMember: () => true, replicas: () => ['x', 'b'], syncBackups: () => 1, onBackupsSettled: () => {}, onPartitionImported: () => {} },
    store,
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
    new Logger('OFF', 'text', { write: () => {} }).component('replication'),
  );
  return { replicator, sent, store };
}

function put(key: string, value: string): { code: number; name: string; key: Buffer; value: Buffer; contentType: null; itemId: number; timeMs: number } {
  return { code: BACKUP.MAP_PUT, name: 'm', key: Buffer.from(key), value: Buffer.from(value), contentType: null, itemId: 0, timeMs: 1 };
}

function entry(key: string, value: string): { map: string; key: Buffer; value: Buffer; contentType: null; creationTimeMs: number; updateTimeMs: number; lastAccessTimeMs: number; version: number; hits: number; ttlMs: number; maxIdleMs: number } {
  return { map: 'm', key: Buffer.from(key), value: Buffer.from(value), contentType: null, creationTimeMs: 1, updateTimeMs: 1, lastAccessTimeMs: 1, version: 1, hits: 0, ttlMs: -1, maxIdleMs: -1 };
}

function chunk(transferId: number, version: number, index: number, last: boolean, entries: ReturnType<typeof entry>[]): Message {
  return message('snapshotChunk', { transferId, partitionId: 1, version, index, last, entries, queues: [], wan: [], wanMarks: [] });
}

test('a buffered write of an earlier life of the partition, above the snapshot that follows it, is dropped instead of asking for copies for ever', () => {
  const { replicator, sent } = backupMember();
  replicator.handle(OWNER, message('backup', { partitionId: 1, version: 2_097_156, op: put('k1', 'old') }, 7));
  assert.equal(replicator.syncing, true);
  assert.equal(sent.filter((m) => m.kind === 'resyncRequest').length, 1);
  // The partition lost every replica and started again on x, at a lower version.
  replicator.handle(OWNER, chunk(1, 1_048_577, 0, true, [entry('k83', 'v83')]));
  assert.equal(replicator.syncing, false, 'the partition is in sync with its owner');
  assert.equal(sent.filter((m) => m.kind === 'resyncRequest').length, 1, 'no second copy asked for');
  assert.equal(sent.filter((m) => m.kind === 'backupAck').length, 0, 'the dropped write is not acknowledged');
  assert.equal(replicator.counters.bufferedDropped, 1);
});

test('writes that arrive while a copy comes in are kept and applied on top of it', () => {
  const { replicator, sent, store } = backupMember();
  replicator.handle(OWNER, message('backup', { partitionId: 1, version: 5, op: put('k1', 'gap') }, 7));
  replicator.handle(OWNER, chunk(1, 5, 0, false, [entry('k1', 'gap')]));
  replicator.handle(OWNER, message('backup', { partitionId: 1, version: 6, op: put('k2', 'after') }, 8));
  replicator.handle(OWNER, chunk(1, 5, 1, true, []));
  assert.equal(replicator.syncing, false);
  assert.equal(store.version(1), 6);
  assert.deepEqual(
    sent.filter((m) => m.kind === 'backupAck').map((m) => m.callId),
    [7, 8],
    'the write inside the copy and the one after it are acknowledged',
  );
  assert.equal(replicator.counters.bufferedDropped, 0);
});

test('a write that arrived before the copy with a version inside it counts as in the copy', () => {
  const { replicator, store } = backupMember();
  replicator.handle(OWNER, message('backup', { partitionId: 1, version: 9, op: put('k1', 'x') }, 7));
  replicator.handle(OWNER, chunk(1, 12, 0, true, [entry('k1', 'x')]));
  assert.equal(replicator.syncing, false);
  assert.equal(store.version(1), 12);
  assert.equal(replicator.counters.bufferedDropped, 0);
});

test('an older snapshot of the stream a copy follows, delivered after a newer write, does not undo that write (seed 3029718)', () => {
  const { replicator, sent, store } = backupMember();
  replicator.handle(OWNER, chunk(1, 10, 0, true, [entry('k1', 'v1')]));
  // The owner took snapshot 2 at version 10, then ran a write at 11; the write overtook the snapshot.
  replicator.handle(OWNER, message('backup', { partitionId: 1, version: 11, op: put('k2', 'v2') }, 9));
  assert.deepEqual(sent.filter((m) => m.kind === 'backupAck').map((m) => m.callId), [9], 'the write is acknowledged');
  replicator.handle(OWNER, chunk(2, 10, 0, true, [entry('k1', 'v1')]));
  assert.equal(store.version(1), 11, 'the copy keeps its version');
  assert.equal(store.maps.peek('m', Buffer.from('k2'), 1, 1_700_000_000_000)?.value.toString(), 'v2', 'and the acknowledged write');
  const acks = sent.filter((m) => m.kind === 'snapshotAck') as (Message & { kind: 'snapshotAck' })[];
  assert.equal(acks.at(-1)?.body.ok, true, 'the owner hears the snapshot landed (this copy holds all of it)');
});

test('after its owner was removed, a lower version from the same member is a new life of the partition and is imported', () => {
  const { replicator, store } = backupMember();
  replicator.handle(OWNER, chunk(1, 2_097_160, 0, true, [entry('k1', 'old')]));
  replicator.memberRemoved('x');
  replicator.handle(OWNER, chunk(2, 1_048_577, 0, true, [entry('k9', 'new')]));
  assert.equal(store.version(1), 1_048_577);
  assert.equal(store.maps.peek('m', Buffer.from('k1'), 1, 1_700_000_000_000), null, 'the earlier life is gone');
});

test('an owner that dropped its copy and starts the partition again never reuses a version a backup of its old stream holds (seed 3012292)', () => {
  // The owner's side: it held the partition at 1_048_581, was not listed for it and dropped it, then
  // became its owner again when every replica was lost.
  const owner = testStore({ partitionCount: 3 });
  owner.jumpVersion(1);
  for (let i = 0; i < 5; i++) owner.applyBackup(1, owner.version(1) + 1, put(`k${i}`, 'old'));
  const oldVersion = owner.version(1);
  owner.dropPartition(1);
  owner.jumpVersion(1);
  assert.ok(owner.version(1) > oldVersion, `the new stream starts above the old one (${owner.version(1)} > ${oldVersion})`);
  // The same after a copy of another owner's stream at a lower version replaced its own.
  owner.importPartition(1, 7, [], [], 1);
  owner.jumpVersion(1);
  assert.ok(owner.version(1) > oldVersion + 1_048_576);
  // The backup that followed the old stream takes the new one's snapshot.
  const { replicator, store } = backupMember();
  replicator.handle(OWNER, chunk(1, oldVersion, 0, true, [entry('k1', 'old')]));
  replicator.handle(OWNER, chunk(2, owner.version(1), 0, true, [entry('k77', 'v77')]));
  assert.equal(store.version(1), owner.version(1));
  assert.equal(store.maps.peek('m', Buffer.from('k77'), 1, 1_700_000_000_000)?.value.toString(), 'v77', 'the new life\'s write is held');
});

test('a copy that went on as its own owner\'s stream is no longer taken for the stream it followed before (seed 2078324)', () => {
  const { replicator, store } = backupMember();
  replicator.handle(OWNER, chunk(1, 2_097_155, 0, true, [entry('k1', 'v1')]));
  assert.equal(replicator.lineageOf(1), 'x');
  // b became the owner, jumped its version and took writes of its own.
  store.jumpVersion(1);
  replicator.followOwnStream(1);
  for (let i = 0; i < 4; i++) store.applyBackup(1, store.version(1) + 1, put(`b${i}`, 'mine'));
  const mine = store.version(1);
  // Later x owns the partition again, started afresh at versions b's stream used (every replica
  // was lost): its snapshot is the copy to hold, not an older snapshot of the stream b follows.
  replicator.handle(OWNER, chunk(2, mine - 2, 0, true, [entry('k9', 'new')]));
  assert.equal(store.version(1), mine - 2);
  assert.equal(store.maps.peek('m', Buffer.from('k9'), 1, 1_700_000_000_000)?.value.toString(), 'new');
  assert.equal(replicator.lineageOf(1), 'x');
});
