// What a member reports about its cluster machinery: whether it is cluster-safe (health, the
// cluster-safe call, a graceful shutdown's wait) and its figures (metrics, the Prometheus page).
// Functions over the parts the composition root built (cluster-node.ts); nothing here acts.
import type { Config } from '../config/types.js';
import { REPLICA_WIDTH_MAX } from '../partition/table.js';
import type { Membership } from '../cluster/membership.js';
import type { PartitionService } from '../replication/partition-service.js';
import type { Replicator } from '../replication/replicator.js';
import type { Invoker } from '../invocation/invoker.js';
import type { NodePersistence } from '../persistence/node-persistence.js';
import type { ReplicaStore } from '../data/replica-store.js';
import type { WanService } from '../wan/wan-service.js';
import type { CpService } from '../cp/cp-service.js';
import type { ClusterState, NodeState } from './states.js';
import type { MapFigures, MetricsSnapshot, QueueFigures, RuntimeFigures } from './metrics-snapshot.js';

/** The persistence figures of a member without persistence. */
const NO_PERSISTENCE_METRICS: Readonly<Record<string, number>> = {
  persistenceLogBytes: 0,
  persistenceLogSegments: 0,
  persistenceRecordsWritten: 0,
  persistenceWriteFailures: 0,
  persistenceCompactionPasses: 0,
  persistenceCompactionRuns: 0,
  persistenceCompactionReclaimedBytes: 0,
};

/** The parts the figures read. */
export interface NodeParts {
  readonly membership: Membership;
  readonly partitions: PartitionService;
  readonly replicator: Replicator;
  readonly invoker: Invoker;
  readonly handBack: { readonly busy: boolean; readonly counters: Record<string, number> };
  readonly recovery: { readonly recovering: boolean };
  readonly persistence: NodePersistence | null;
}

/**
 * Cluster-safe here: joined, nothing migrating or waiting to migrate, no copy being received, no
 * stale backup, no hand-back outstanding, and every partition with as many listed live replicas as
 * the configuration wants (at most one per data member).
 */
export function isSafe(n: NodeParts, width: number): boolean {
  if (!n.membership.joined || n.partitions.migrationQueueSize > 0 || n.partitions.activeMigrations > 0 || n.replicator.syncing || n.replicator.staleCount > 0) return false;
  // Data handed back after a split may be its only copy until the hand-back is done: stopping
  // this member now would lose it.
  if (n.handBack.busy) return false;
  const dataMembers = n.membership.list.filter((m) => !m.lite).length;
  const wanted = Math.min(width, dataMembers);
  const t = n.partitions.table;
  if (dataMembers > 0 && !t.isAssigned) return false;
  for (const r of t.replicas) {
    let c = 0;
    for (const u of r) if (u !== null && n.membership.isMember(u)) c++;
    if (dataMembers > 0 && c < wanted) return false;
  }
  return true;
}

/** The member's cluster figures, flat (metrics-catalog.ts names them for the REST and Prometheus pages). */
export function nodeMetrics(n: NodeParts): Record<string, number> {
  return {
    clusterSize: n.membership.list.length,
    membersVersion: n.membership.version,
    partitionTableVersion: n.partitions.table.version,
    migrationQueueSize: n.partitions.migrationQueueSize,
    migrationsActive: n.partitions.activeMigrations,
    ...prefixed('replication', n.replicator.counters),
    ...prefixed('migration', n.partitions.counters),
    ...prefixed('invocation', n.invoker.counters),
    ...prefixed('membership', n.membership.counters),
    pendingBackupAcks: n.replicator.pendingAckCount,
    ...prefixed('merge', n.handBack.counters),
    // Zero without persistence, so dashboards and the JSON keys are the same on every member.
    ...(n.persistence?.metrics() ?? NO_PERSISTENCE_METRICS),
    persistenceRecovering: n.recovery.recovering ? 1 : 0,
  };
}

/**
 * The metrics call's snapshot: the member's data figures (owned and backup entries and items, per
 * map and queue), its cluster figures, its connections, the WAN publishers and the runtime's.
 */
export function buildMetricsSnapshot(
  node: NodeParts & { readonly store: ReplicaStore; readonly wan: WanService; readonly cp: CpService; ownedFlags(): boolean[]; ownedPartitions(): number; metrics(): Record<string, number> },
  member: string,
  nodeState: NodeState,
  clusterState: ClusterState,
  clusterSafe: boolean,
  connections: { readonly http: number; readonly member: number },
  runtime: RuntimeFigures,
): MetricsSnapshot {
  const owned = node.ownedFlags();
  const maps: MapFigures[] = node.store.maps.entriesBySide(owned);
  const queues: QueueFigures[] = node.store.queues.queueSizes().map((q) => {
    const mine = owned[node.store.queuePartition(q.name)] === true;
    return { name: q.name, owned: mine ? q.size : 0, backup: mine ? 0 : q.size, waitingPolls: q.waitingPolls };
  });
  let ownedEntries = 0;
  let backupEntries = 0;
  for (const m of maps) {
    ownedEntries += m.owned;
    backupEntries += m.backup;
  }
  let ownedItems = 0;
  let backupItems = 0;
  for (const q of queues) {
    ownedItems += q.owned;
    backupItems += q.backup;
  }
  return {
    member,
    nodeState,
    clusterState,
    flat: {
      // Owned only: summed over the members this is the number of entries in the cluster. Before
      // this version it counted backup copies too (now `mapEntriesBackup`).
      mapEntries: ownedEntries,
      mapEntriesBackup: backupEntries,
      maps: maps.length,
      queues: queues.length,
      queueItems: ownedItems,
      queueItemsBackup: backupItems,
      waitingPolls: node.store.queues.waitingPolls(),
      ownedPartitions: node.ownedPartitions(),
      ...node.metrics(),
      clusterSafe: clusterSafe ? 1 : 0,
      httpConnections: connections.http,
      memberConnections: connections.member,
      cpCalls: node.cp.counters.calls,
      cpCallFailures: node.cp.counters.callFailures,
      cpRaftMessagesIn: node.cp.counters.raftMessagesIn,
      cpRaftMessagesOut: node.cp.counters.raftMessagesOut,
      ...runtime.flat,
    },
    maps,
    queues,
    cp: node.cp.figures(),
    cpCalls: node.cp.callStats.figures(),
    wan: Object.entries(node.wan.figures()).map(([key, f]) => ({ replication: key.slice(0, key.indexOf('/')), publisher: key.slice(key.indexOf('/') + 1), ...f })),
    runtime,
  };
}

/** owned[p]: `uuid` owns partition p in the table held now. */
export function ownedFlags(n: NodeParts, uuid: string): boolean[] {
  const t = n.partitions.table;
  const out = new Array<boolean>(t.partitionCount);
  for (let p = 0; p < t.partitionCount; p++) out[p] = t.owner(p) === uuid;
  return out;
}

/** Replica slots per partition: 1 + the largest backup-count + async-backup-count of any map or queue. */
export function replicaWidth(c: Config): number {
  let backups = 0;
  for (const m of c.maps) backups = Math.max(backups, m.backupCount + m.asyncBackupCount);
  for (const q of c.queues) backups = Math.max(backups, q.backupCount + q.asyncBackupCount);
  return Math.min(REPLICA_WIDTH_MAX, 1 + backups);
}

function prefixed(prefix: string, counters: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counters)) out[`${prefix}${k[0]?.toUpperCase() ?? ''}${k.slice(1)}`] = v;
  return out;
}
