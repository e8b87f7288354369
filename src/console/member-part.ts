// A member's row of the cluster view (spec/console.md, `GET /grid/rest/cluster/view`), from its own
// figures: who it is, its state, its partitions, its process, and how long ago it heard each other
// member. The member asked merges the rows (clusterView) and adds what only it states: the cluster
// name, state and safety as it sees them. No I/O.
import type { Gathered } from './views-service.js';

/** What the member's metrics snapshot gives (member/metrics-snapshot.ts has these fields). */
export interface MemberFigures {
  readonly member: string;
  readonly nodeState: string;
  readonly clusterState: string;
  /** `clusterSafe` is 1 when the member is cluster-safe. */
  readonly flat: Readonly<Record<string, number>>;
  /** Its WAN publishers (metrics-snapshot.ts WanFigures). */
  readonly wan?: readonly WanPublisherPart[];
}

/** One WAN publisher on one member, as the console's WAN screen shows it. */
export interface WanPublisherPart {
  readonly replication: string;
  readonly publisher: string;
  readonly state: string;
  readonly queued: number;
  readonly backupQueued: number;
  readonly sent: number;
  readonly acked: number;
  readonly dropped: number;
  readonly lagMs: number;
  readonly syncsRunning: number;
}

/** A member's persistence figures (all 0 without persistence). */
export interface PersistencePart {
  readonly logBytes: number;
  readonly logSegments: number;
  readonly recovering: boolean;
  readonly recordsWritten: number;
  readonly writeFailures: number;
}

export interface MemberPartInput {
  readonly uuid: string;
  readonly master: boolean;
  readonly lite: boolean;
  readonly cpMember: boolean;
  readonly version: string;
  readonly uptimeMs: number;
  readonly replicas: readonly (readonly (string | null)[])[];
  readonly members: readonly string[];
  /** When each other member was last heard (monotonic ms), and now on the same clock. */
  readonly lastHeard: ReadonlyMap<string, number>;
  readonly nowMs: number;
  readonly figures: MemberFigures;
  readonly migrationsInProgress: number;
}

export interface MemberPart {
  readonly uuid: string;
  readonly address: string;
  readonly master: boolean;
  readonly lite: boolean;
  readonly cpMember: boolean;
  readonly state: string;
  readonly version: string;
  readonly uptimeMs: number;
  readonly ownedPartitions: number;
  readonly backupPartitions: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly eventLoopDelayP99Ms: number;
  readonly heartbeatAgeMs: Readonly<Record<string, number>>;
  /** The member list this member holds (UUIDs in join order): members that disagree show a split. */
  readonly memberList: readonly string[];
  /** The cluster state this member holds: during a two-phase change, who has it already. */
  readonly clusterState: string;
  readonly wan: readonly WanPublisherPart[];
  readonly persistence: PersistencePart;
  readonly clusterSafe: boolean;
  readonly migrationsInProgress: number;
}

export function memberPart(i: MemberPartInput): MemberPart {
  let owned = 0;
  let backups = 0;
  for (const r of i.replicas) {
    if (r[0] === i.uuid) owned++;
    else if (r.includes(i.uuid)) backups++;
  }
  const heartbeatAgeMs: Record<string, number> = {};
  for (const u of i.members) {
    if (u === i.uuid) continue;
    const at = i.lastHeard.get(u);
    if (at !== undefined) heartbeatAgeMs[u] = Math.max(0, Math.round(i.nowMs - at));
  }
  const f = i.figures.flat;
  return {
    uuid: i.uuid,
    // `[host]:port` in the metrics; the view names it host:port, as member lists do.
    address: i.figures.member.replace(/^\[(.*)\]:(\d+)$/, '$1:$2'),
    master: i.master,
    lite: i.lite,
    cpMember: i.cpMember,
    state: i.figures.nodeState,
    version: i.version,
    uptimeMs: Math.round(i.uptimeMs),
    ownedPartitions: owned,
    backupPartitions: backups,
    rssBytes: f.residentMemoryBytes ?? 0,
    heapUsedBytes: f.heapUsedBytes ?? 0,
    eventLoopDelayP99Ms: Math.round((f.eventLoopDelayP99Seconds ?? 0) * 1e6) / 1e3,
    heartbeatAgeMs,
    memberList: [...i.members],
    clusterState: i.figures.clusterState,
    wan: (i.figures.wan ?? []).map((w) => ({ replication: w.replication, publisher: w.publisher, state: w.state, queued: w.queued, backupQueued: w.backupQueued, sent: w.sent, acked: w.acked, dropped: w.dropped, lagMs: w.lagMs, syncsRunning: w.syncsRunning })),
    persistence: {
      logBytes: f.persistenceLogBytes ?? 0,
      logSegments: f.persistenceLogSegments ?? 0,
      recovering: f.persistenceRecovering === 1,
      recordsWritten: f.persistenceRecordsWritten ?? 0,
      writeFailures: f.persistenceWriteFailures ?? 0,
    },
    clusterSafe: f.clusterSafe === 1,
    migrationsInProgress: i.migrationsInProgress,
  };
}

export interface ClusterViewAnswer {
  readonly clusterName: string;
  readonly answered: number;
  readonly of: number;
  readonly missing: readonly string[];
  readonly members: readonly Omit<MemberPart, 'clusterSafe' | 'migrationsInProgress'>[];
  readonly clusterState: string;
  readonly clusterSafe: boolean;
  readonly migrationsInProgress: number;
}

/** The rows in member-list order; the cluster's state and safety as the member asked sees them (the master's migrations). */
export function clusterView(clusterName: string, selfUuid: string, g: Gathered): ClusterViewAnswer {
  const rows = [...g.parts.values()].filter((p): p is MemberPart => p !== null && typeof p === 'object' && typeof (p as MemberPart).uuid === 'string');
  const own = rows.find((r) => r.uuid === selfUuid);
  const master = rows.find((r) => r.master);
  return {
    clusterName,
    answered: g.parts.size,
    of: g.of,
    missing: g.missing,
    members: rows.map(({ clusterSafe: _c, migrationsInProgress: _m, ...row }) => row),
    clusterState: own?.clusterState ?? 'ACTIVE',
    clusterSafe: (own?.clusterSafe ?? false) && g.missing.length === 0,
    migrationsInProgress: master?.migrationsInProgress ?? own?.migrationsInProgress ?? 0,
  };
}
