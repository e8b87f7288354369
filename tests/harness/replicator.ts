// A Replicator for unit tests: member 'owner' on a fake clock, the given transport and replica list
// (read at each call, so a test may change it), one sync backup, logging off.
import { Replicator } from '../../src/replication/replicator.js';
import type { Transport } from '../../src/cluster/transport.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from './fake-time.js';
import { testStore } from './store.js';

export function ownerReplicator(transport: Transport, replicas: () => (string | null)[]): { replicator: Replicator; time: FakeTime } {
  const time = new FakeTime();
  const replicator = new Replicator(
    { backupTimeoutMs: 1000, transferAckTimeoutMs: 1000, chunkBytesMax: 65536, antiEntropyIntervalMs: 30_000, bufferedBackupsMax: 100 },
    { selfUuid: 'owner', addressOf: (u) => `${u}:5701`, isMember: () => true, replicas, syncBackups: () => 1, onBackupsSettled: () => {}, onPartitionImported: () => {} },
    testStore({ partitionCount: 3 }),
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
    new Logger('OFF', 'text', { write: () => {} }).component('replication'),
  );
  return { replicator, time };
}
