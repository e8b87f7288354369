// A partition that lost every replica starts empty on its new owner. A copy the new owner kept from
// a time it was listed for the partition, and not listed since, is stale even when it is of the new
// owner's own stream: the partition moved on to others, who took writes this copy never saw. Kept,
// it came back as the partition's authority: the member served it and, cut off later, handed it
// back as owner, an old value over every newer one (nemesis seed 1, the CI run of 2026-11-29:
// r-7 = 5 and 6, acknowledged outside any split brain, lost to r-7 = 4 under PassThrough).
import test from 'node:test';
import assert from 'node:assert/strict';
import { PartitionService, type PartitionServiceHost } from '../../src/replication/partition-service.js';
import { Replicator } from '../../src/replication/replicator.js';
import type { Transport } from '../../src/cluster/transport.js';
import { message } from '../../src/cluster/messages.js';
import { BACKUP } from '../../src/data/replica-store.js';
import { PartitionTable, type Replicas } from '../../src/partition/table.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import { testStore } from '../harness/store.js';

const SELF = 'a';
const P = 1;

function member(): { service: PartitionService; store: ReturnType<typeof testStore>; replicator: Replicator } {
  const time = new FakeTime();
  const clock = { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs };
  const log = new Logger('OFF', 'text', { write: () => {} });
  const store = testStore({ partitionCount: 3 });
  const transport: Transport = { send: () => true, disconnect: () => {}, connectionCount: () => 1 };
  let table = (): PartitionTable => service.table;
  const replicator = new Replicator(
    { backupTimeoutMs: 1000, transferAckTimeoutMs: 1000, chunkBytesMax: 65536, antiEntropyIntervalMs: 30_000, bufferedBackupsMax: 100 },
    { selfUuid: SELF, addressOf: (u) => `${u}:5701`, isMember: () => true, replicas: (p) => [...(table().replicas[p] as Replicas)], syncBackups: () => 1, onBackupsSettled: () => {}, onPartitionImported: () => {} },
    store,
    transport,
    clock,
    time,
    log.component('replication'),
  );
  const host: PartitionServiceHost = {
    selfUuid: SELF,
    isMaster: () => false,
    masterUuid: () => 'm',
    claimPending: () => false,
    membersVersion: () => 1,
    heardFrom: () => {},
    dataMembers: () => ['m', SELF, 'b', 'c'],
    isMember: () => true,
    send: () => {},
    migrationAllowed: () => true,
    promotionAllowed: () => true,
    publishTable: () => {},
    onTableApplied: () => {},
    onMemberDrained: () => {},
  };
  const service: PartitionService = new PartitionService(
    { partitionCount: 3, width: 2, migrationsParallelMax: 2, migrationTimeoutMs: 10_000, holdTimeoutMs: 30_000, tickMs: 100 },
    host,
    store,
    replicator,
    clock,
    time,
    log.component('migration'),
  );
  table = () => service.table;
  return { service, store, replicator };
}

/** The master's next table: partition P gets `replicas` (its version + 1), the table's version + 1. */
function next(t: PartitionTable, replicas: Replicas): PartitionTable {
  return t.withReplicas(new Map([[P, replicas]]));
}

function put(key: string, value: string): { code: number; name: string; key: Buffer; value: Buffer; contentType: null; itemId: number; timeMs: number } {
  return { code: BACKUP.MAP_PUT, name: 'reg', key: Buffer.from(key), value: Buffer.from(value), contentType: null, itemId: 0, timeMs: 1 };
}

test('a copy of its own stream that a member kept while not listed is dropped when the partition restarts empty on it', () => {
  const { service, store, replicator } = member();
  let t = new PartitionTable(1, 2, [['m', null], [SELF, 'b'], ['m', null]], [1, 1, 1]);
  service.applyFromMaster(t.toWire(), 0);
  assert.equal(replicator.lineageOf(P), SELF, 'the owner follows its own stream');
  store.applyBackup(P, store.version(P) + 1, put('r-7', '4'));
  // A migration moves the partition to b and c: this member keeps its copy for the hold, unlisted.
  t = next(t, ['b', 'c']);
  service.applyFromMaster(t.toWire(), 0);
  // b and c are lost (this member, cut off with the master, never hears their writes of 5 and 6).
  t = next(t, [null, null]);
  service.applyFromMaster(t.toWire(), 0);
  assert.equal(store.version(P) > 0, true, 'the unlisted copy is still held (its hold has not run out)');
  // The partition restarts empty, on this member.
  t = next(t, [SELF, null]);
  service.applyFromMaster(t.toWire(), 0);
  assert.equal(store.maps.peek('reg', Buffer.from('r-7'), P, Date.now()), null, 'the stale r-7 = 4 is not the new partition\'s');
});

test('a copy of the new owner\'s stream that this member held while listed up to the loss is kept (seed 1486)', () => {
  const { service, store, replicator } = member();
  let t = new PartitionTable(1, 2, [['m', null], ['b', SELF], ['m', null]], [1, 1, 1]);
  service.applyFromMaster(t.toWire(), 0);
  replicator.handle({ uuid: 'b', address: 'b:5701' }, message('backup', { partitionId: P, version: store.version(P) + 1, op: put('k', 'acknowledged') }, 3));
  assert.equal(replicator.lineageOf(P), 'b');
  // An empty listing this member held (the master's own previous listing), then the partition
  // listed again with b, whose stream built this copy, as owner.
  t = next(t, [null, null]);
  service.applyFromMaster(t.toWire(), 0);
  t = next(t, ['b', SELF]);
  service.applyFromMaster(t.toWire(), 0);
  assert.notEqual(store.maps.peek('reg', Buffer.from('k'), P, Date.now()), null);
});
