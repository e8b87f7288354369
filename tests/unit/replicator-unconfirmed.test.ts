// The owner's list of writes no backup confirmed (replicator.ts) lives exactly as long as a replica
// marked stale may miss them. When the stale replica stops being a replica while it is still a
// member (a migration moved the backup elsewhere, copying the owner's whole partition there), the
// list goes too: kept, it would be handed back at this member's next cut-off from its cluster and
// put an old value over every newer one under a merge policy where the handing side wins (the
// nemesis register lost r-7=48 and 49, acknowledged outside any split brain, to r-7=46 so; a
// candidate path, docs/cluster.md "Status").
import test from 'node:test';
import assert from 'node:assert/strict';
import { Replicator } from '../../src/replication/replicator.js';
import type { Transport } from '../../src/cluster/transport.js';
import { BACKUP } from '../../src/data/replica-store.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import { testStore } from '../harness/store.js';
import { ownerReplicator } from '../harness/replicator.js';

test('writes a replica never confirmed are forgotten once that replica is no longer listed (the partition was copied to its successor)', () => {
  const time = new FakeTime();
  let replicas: (string | null)[] = ['owner', 'b'];
  const transport: Transport = { send: () => true, disconnect: () => {}, connectionCount: () => 1 };
  const store = testStore({ partitionCount: 3 });
  const replicator = new Replicator(
    { backupTimeoutMs: 1000, transferAckTimeoutMs: 1000, chunkBytesMax: 65536, antiEntropyIntervalMs: 30_000, bufferedBackupsMax: 100 },
    {
      selfUuid: 'owner',
      addressOf: (u) => `${u}:5701`,
      isMember: () => true,
      replicas: () => replicas,
      syncBackups: () => 1,
      onBackupsSettled: () => {},
      onPartitionImported: () => {},
    },
    store,
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
    new Logger('OFF', 'text', { write: () => {} }).component('replication'),
  );
  const op = { code: BACKUP.MAP_PUT, name: 'reg', key: Buffer.from('r-7'), value: Buffer.from('46'), contentType: null, itemId: 0, timeMs: 1 };
  let answered = false;
  replicator.replicate(1, 1, op, 'map', 'reg', () => (answered = true));
  time.advance(1500); // b never acks: the write stands, b is stale, the write is kept unconfirmed
  assert.ok(answered);
  assert.equal(replicator.hasStale(1), true);
  // A migration moved the backup from b to c (a whole copy of the partition went to c); b is still a member.
  replicas = ['owner', 'c'];
  assert.equal(replicator.hasStale(1), false);
  assert.deepEqual(replicator.reset(), [], 'nothing left to hand back at the next cut-off');
});

test('writes a stale replica never confirmed are still handed back while it is listed', () => {
  const transport: Transport = { send: () => true, disconnect: () => {}, connectionCount: () => 1 };
  const { replicator, time } = ownerReplicator(transport, () => ['owner', 'b']);
  const op = { code: BACKUP.MAP_PUT, name: 'reg', key: Buffer.from('r-7'), value: Buffer.from('46'), contentType: null, itemId: 0, timeMs: 1 };
  replicator.replicate(1, 1, op, 'map', 'reg', () => {});
  time.advance(1500);
  assert.equal(replicator.hasStale(1), true);
  assert.equal(replicator.reset().length, 1);
});
