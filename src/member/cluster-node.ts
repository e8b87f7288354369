// One member's cluster machinery wired together: membership, the replica store, replication,
// the partition table and migrations, invocations, and cluster-state changes. Everything reaches the
// world through the injected Transport, Clock and Timers, so the same code runs as a real process
// (runtime/) and inside the deterministic simulation (tests/sim/).
//
// The data calls have a fast path: when this member owns the key's partition, nothing is being
// handed over and no backup must ack, the call runs synchronously (no promise, no closure).
import type { Config } from '../config/types.js';
import { resolveMapConfig, resolveQueueConfig } from '../config/match.js';
import type { Message, MessageOf, OpWire } from '../cluster/messages.js';
import { message } from '../cluster/messages.js';
import { Membership, addressOf } from '../cluster/membership.js';
import { FAULT_SPACING_SHARE } from '../cluster/connection-monitor.js';
import type { Peer, Transport, TransportHandler } from '../cluster/transport.js';
import { OP, ReplicaStore } from '../data/replica-store.js';
import { type PollWaiter, type QueueItem, queueConfigName } from '../data/queue-service.js';
import { Invoker, type LocalResult, resultToWire } from '../invocation/invoker.js';
import { collectReplay, ReplayBacklog, replayLogLine, replayOutcome, type ReplayPolicies } from './merge-replay.js';
import { PartitionService, tablesMadeWithEveryone } from '../replication/partition-service.js';
import { Replicator } from '../replication/replicator.js';
import { REPLICA_WIDTH_MAX } from '../partition/table.js';
import type { Clock, Random, TimerHandle, Timers } from '../util/clock.js';
import { GridError, isGridError } from '../util/errors.js';
import type { Logger, ComponentLogger } from '../util/logger.js';
import type { ClusterState } from './member-api.js';
import type { WanBatchPublisherConfig } from '../config/types.js';
import { WanService } from '../wan/wan-service.js';
import { MAP_KEY_BYTES_MAX_DEFAULT, MAP_VALUE_BYTES_MAX_DEFAULT } from '../data/map-service.js';
import { NodePersistence, type PersistenceSetup } from './node-persistence.js';
import type { MemberMetadata } from '../persistence/member-metadata.js';
import { PartitionTable } from '../partition/table.js';

const STATE_CODES: Readonly<Record<Exclude<ClusterState, 'IN_TRANSITION'>, number>> = { ACTIVE: 0, NO_MIGRATION: 1, FROZEN: 2, PASSIVE: 3 };
const STATE_BY_CODE: readonly Exclude<ClusterState, 'IN_TRANSITION'>[] = ['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE'];
const EMPTY = Buffer.alloc(0);

export interface ClusterNodeOptions {
  readonly config: Config;
  readonly uuid: string;
  readonly memberVersion: string;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  readonly logger: Logger;
  readonly newUuid: () => string;
  /** Faster timings for simulations (join batching, claims, migration ticks). */
  readonly timings?: Partial<ClusterTimings>;
  /** clusterShutdown reached this member: stop the process. */
  readonly onShutdownRequested: (reason: string) => void;
  /** Another member took a new tcp-ip member list (POST config/tcp-ip/member-list): take it too. */
  readonly onMemberListSet?: (members: readonly string[], from: string) => void;
  /** A connection to another cluster for a WAN publisher; absent: WAN publishers cannot send. */
  readonly openWanTransport?: (publisher: WanBatchPublisherConfig, handler: TransportHandler) => Transport;
  /** `<persistence enabled="true">`: this member's directory (runtime: member-dir.ts). */
  readonly persistence?: PersistenceSetup;
  /** Persistence: start over as a new member (wiped data, new UUID): forceStart, stale data. */
  readonly onStartOver?: (reason: string) => void;
  /** Persistence: stale data that must not be removed (auto-remove-stale-data false): exit status 3. */
  readonly onStaleStop?: (reason: string) => void;
}

/** The metadata file is rewritten at least this often while the member runs (its last-alive time). */
const METADATA_REFRESH_MS = 1000;
/**
 * The longest a master keeps a drained leaving member in the list waiting for its `departing`. The
 * member waits for its clients at most half of this (member-runtime), so the timer only removes a
 * member whose message was lost or that hangs.
 */
export const DEPART_WAIT_MS = 10_000;
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

/** A backup's coordinator waits this long for every member's copy. */
const BACKUP_WAIT_MS = 30 * 60_000;
/** A whole-cluster recovery that waits logs whom it waits for this often. */
const RECOVERY_WAIT_LOG_MS = 10_000;

/** A whole-cluster restart in progress on this member (cluster.md "Persistence"). */
interface Recovery {
  /** Members the persisted partition table names: all of them must be back. */
  readonly expected: ReadonlySet<string>;
  /** The cluster state to resume. */
  readonly resumeState: Exclude<ClusterState, 'IN_TRANSITION'>;
  /** The persisted table's version and stamp, reported to the master. */
  readonly tableVersion: number;
  readonly tableStamp: number;
  /** Master: what each member reported. */
  readonly reports: Map<string, { tableVersion: number; tableStamp: number }>;
  readonly startedMs: number;
  lastWaitLogMs: number;
  /** Master: partialStart was called. */
  partialRequested: boolean;
}

/** A transport that sends nothing (a member given no way to reach other clusters). */
const NO_WAN_TRANSPORT: Transport = { send: () => false, disconnect: () => {}, connectionCount: () => 0 };

export interface ClusterTimings {
  readonly joinBatchQuietMs: number;
  readonly joinBatchMaxMs: number;
  readonly claimAfterMs: number;
  readonly claimTimeoutMs: number;
  readonly publishIntervalMs: number;
  readonly backupTimeoutMs: number;
  readonly antiEntropyIntervalMs: number;
  readonly migrationTickMs: number;
  readonly migrationTimeoutMs: number;
  readonly holdTimeoutMs: number;
  readonly transferAckTimeoutMs: number;
  readonly attemptTimeoutMs: number;
  readonly stateLeaseMs: number;
  readonly mergeProbeIntervalMs: number;
  /**
   * Share of grid.connection.monitor.interval two counted refusals are apart at least: 0.75 (a
   * timer can fire a fraction of a millisecond early). The simulation replays the seeds found
   * before that rule with 1, the schedule that found them.
   */
  readonly refusalSpacingShare: number;
}

export const DEFAULT_TIMINGS: ClusterTimings = {
  joinBatchQuietMs: 1000,
  joinBatchMaxMs: 5000,
  claimAfterMs: 3000,
  claimTimeoutMs: 5000,
  publishIntervalMs: 30_000,
  backupTimeoutMs: 5000,
  antiEntropyIntervalMs: 30_000,
  migrationTickMs: 250,
  migrationTimeoutMs: 120_000,
  holdTimeoutMs: 20_000,
  transferAckTimeoutMs: 30_000,
  attemptTimeoutMs: 10_000,
  stateLeaseMs: 20_000,
  mergeProbeIntervalMs: 5000,
  refusalSpacingShare: FAULT_SPACING_SHARE,
};

/** Replay calls in flight at once after rejoining, and their bytes (merge-replay.ts). */
const REPLAY_WINDOW = 64;
const REPLAY_BYTES_IN_FLIGHT_MAX = 8 * 1024 * 1024;
/** A hand-back call that failed transiently (owner unreachable, 503) goes again after this long. */
const REPLAY_RETRY_DELAY_MS = 1000;
/** A clusterShutdown resends its stop message this often to members that have not acknowledged it. */
const SHUTDOWN_RESEND_MS = 500;
/** The answer 'not the owner here (any more): ask again', shared (it carries nothing). */
const RETRY: LocalResult = Object.freeze({ kind: 'retry' });
/** Bytes of one MAP_MERGE batch (also at most half a member-protocol frame). */
const MERGE_BATCH_BYTES_MAX = 1024 * 1024;

/** Map writes a WAN publisher with a throwing queue-full behaviour refuses (clears never are). */
function isMapWrite(code: number): boolean {
  return code === OP.MAP_PUT || code === OP.MAP_PUT_IF_ABSENT || code === OP.MAP_REMOVE || code === OP.MAP_MERGE || code === OP.MAP_GET_AND_PUT || code === OP.MAP_GET_AND_REMOVE || code === OP.MAP_PUT_IF_ABSENT_GET || code === OP.MAP_REPLACE_GET || code === OP.MAP_REPLACE_IF_SAME || code === OP.MAP_REMOVE_IF_SAME || code === OP.MAP_PUT_EXPIRY;
}

/** A waiting poll on the owner, for a local REST client or a remote caller. */
class OwnerPoll implements PollWaiter {
  done = false;
  timer: TimerHandle | null = null;
  constructor(
    readonly partitionId: number,
    readonly queue: string,
    /** Answers the caller; runs once (settlePoll guards it). */
    readonly answer: (r: LocalResult) => void,
    private readonly settle: (poll: OwnerPoll, r: LocalResult) => void,
  ) {}
  deliver(item: QueueItem): boolean {
    if (this.done) return false;
    this.settle(this, { kind: 'ok', outcome: { kind: 'value', value: item.value, contentType: item.contentType } });
    return true;
  }
}

export class ClusterNode implements TransportHandler {
  readonly store: ReplicaStore;
  readonly membership: Membership;
  readonly replicator: Replicator;
  readonly partitions: PartitionService;
  readonly invoker: Invoker;
  readonly wan: WanService;
  private readonly log: ComponentLogger;
  private readonly t: ClusterTimings;
  private readonly self: Peer;
  private state: Exclude<ClusterState, 'IN_TRANSITION'> = 'ACTIVE';
  private lock: { txId: string; expiresMs: number } | null = null;
  /** Who asked for the state change this member is committing (for its log line), or null. */
  private stateRequester: string | null = null;
  /** Set while a clusterShutdown waits for acknowledgements. */
  private clusterShutdownAcks: ((uuid: string, callId: number) => void) | null = null;
  private readonly ownerPolls = new Map<number, Set<OwnerPoll>>();
  private readonly remotePolls = new Map<string, () => void>();
  private readonly stateTx = new Map<string, { waiting: Set<string>; failures: string[]; done: (failures: string[]) => void; timer: TimerHandle }>();
  private nextTx = 1;
  private leave: { resolve: () => void; timer: TimerHandle | null; deadlineMs: number } | null = null;
  /** This leaving member's replicas are all handed off: depart() takes it out of the member list. */
  private handedOff = false;
  /** Master: drained members it waits to hear `departing` from, each removed at the latest by its timer. */
  private readonly departing = new Map<string, TimerHandle>();
  private stopped = false;
  /** Joined a cluster at least once (node state STARTING until then). */
  private joinedOnce = false;
  /** clusterShutdown is under way: members are expected to go; nothing is promoted or migrated. */
  private clusterStopping = false;
  /** This member was told to stop by a clusterShutdown (resends are acknowledged, acted on once). */
  private stopRequested = false;
  private readonly width: number;
  /** Data to hand back to the cluster after this member was cut off (merge-replay.ts). */
  private readonly replay = new ReplayBacklog(REPLAY_WINDOW, REPLAY_BYTES_IN_FLIGHT_MAX);
  private replayPumping = false;
  /** Per entry, item or poll handed back; stored/kept say what the merge policy decided on the owner. */
  readonly mergeCounters = { replayed: 0, replayFailed: 0, replaySkipped: 0, replayStored: 0, replayKept: 0, replayDiscarded: 0, replayRetried: 0 };

  /** The hand-back still to send and in flight (diagnostics: the simulation's failure line). */
  get handBack(): { readonly pending: number; readonly inFlight: number } {
    return { pending: this.replay.pending, inFlight: this.replay.inFlight };
  }

  /** The persistence of this member, or null when `<persistence>` is off. */
  readonly persistence: NodePersistence | null;
  private recovery: Recovery | null = null;
  /** The member's log is being read (loadPersistedAsync). */
  private loading = false;
  /** The state before the last change to PASSIVE (resumed after a clusterShutdown's restart). */
  private stateBeforePassive: Exclude<ClusterState, 'IN_TRANSITION'> = 'ACTIVE';
  private metadataTimer: TimerHandle | null = null;
  /** The last backup sequence number this member took part in (persisted in its metadata). */
  private backupSeq = 0;
  /** This member's part of a backup that is running, or null. */
  private backupRun: { seq: number; interrupt: () => void } | null = null;
  /** The backup this member coordinates, or null. */
  private backupCoordination: { seq: number; waiting: Set<string>; failures: string[]; higherSeq: number; answer: (ok: boolean, message: string) => void; timer: TimerHandle } | null = null;

  constructor(private readonly o: ClusterNodeOptions) {
    const c = o.config;
    this.t = { ...DEFAULT_TIMINGS, ...o.timings };
    this.log = o.logger.component('cluster');
    this.width = replicaWidth(c);
    this.store = new ReplicaStore({
      partitionCount: c.properties.partitionCount,
      resolveMapConfig: (name) => resolveMapConfig(c.maps, name),
      resolveQueueConfig: (name) => resolveQueueConfig(c.queues, queueConfigName(name)),
      random: o.random,
      waitersMax: c.properties.queueWaitersMax,
    });
    this.persistence = o.persistence === undefined ? null : new NodePersistence(o.persistence, c, this.store, o.clock, o.logger.component('persistence'));
    this.backupSeq = o.persistence?.metadata?.backupSeq ?? 0;
    const selfWire = { uuid: o.uuid, host: '127.0.0.1', port: 5701, lite: c.liteMember, version: o.memberVersion };
    this.self = { uuid: o.uuid, address: addressOf(selfWire) };
    this.membership = new Membership(
      {
        self: selfWire,
        joinAddresses: [],
        heartbeatIntervalMs: c.properties.heartbeatIntervalSeconds * 1000,
        maxNoHeartbeatMs: c.properties.maxNoHeartbeatSeconds * 1000,
        connectionMonitorIntervalMs: c.properties.connectionMonitorIntervalMs,
        connectionMonitorMaxFaults: c.properties.connectionMonitorMaxFaults,
        connectionMonitorFaultSpacingShare: this.t.refusalSpacingShare,
        joinBatchQuietMs: this.t.joinBatchQuietMs,
        joinBatchMaxMs: this.t.joinBatchMaxMs,
        claimAfterMs: this.t.claimAfterMs,
        claimTimeoutMs: this.t.claimTimeoutMs,
        publishIntervalMs: this.t.publishIntervalMs,
        mergeProbeIntervalMs: this.t.mergeProbeIntervalMs,
        newClusterId: o.newUuid,
      },
      {
        tableWire: () => this.partitions.tableWire(),
        migrationQueue: () => this.partitions.migrationQueueSize,
        clusterStateCode: () => STATE_CODES[this.state],
        joinRefusal: (joiner) => this.joinRefusal(joiner.uuid),
        onView: (view, previous) => this.onView(view, previous),
        onMembersRemoved: (removed) => this.partitions.onMembersRemoved(removed),
        onClaimed: (views) => {
          this.partitions.adoptNewest(tablesMadeWithEveryone(views));
          // The newest table may still name members that left before the claim.
          this.partitions.promoteDeparted();
        },
        onLeftCluster: (reason) => this.onLeftCluster(reason),
        onFoundedCluster: () => {},
      },
      o.transport,
      o.clock,
      o.timers,
      this.log,
    );
    this.replicator = new Replicator(
      {
        backupTimeoutMs: this.t.backupTimeoutMs,
        transferAckTimeoutMs: this.t.transferAckTimeoutMs,
        chunkBytesMax: 1024 * 1024,
        antiEntropyIntervalMs: this.t.antiEntropyIntervalMs,
        bufferedBackupsMax: 100_000,
      },
      {
        selfUuid: o.uuid,
        addressOf: (u) => this.membership.addressOfUuid(u),
        isMember: (u) => this.membership.isMember(u),
        replicas: (p) => this.partitions.table.replicas[p] ?? [],
        syncBackups: (kind, name) => (kind === 'map' ? resolveMapConfig(c.maps, name) : resolveQueueConfig(c.queues, queueConfigName(name))).backupCount,
        onBackupsSettled: (p) => this.partitions.onBackupsSettled(p),
        onPartitionImported: (p) => this.partitions.onPartitionImported(p),
        ...(this.persistence === null ? {} : { whenPersisted: (send: () => void) => this.whenPersisted(send) }),
      },
      this.store,
      o.transport,
      o.clock,
      o.timers,
      o.logger.component('replication'),
    );
    this.partitions = new PartitionService(
      {
        partitionCount: c.properties.partitionCount,
        width: this.width,
        migrationsParallelMax: 10,
        migrationTimeoutMs: this.t.migrationTimeoutMs,
        holdTimeoutMs: this.t.holdTimeoutMs,
        tickMs: this.t.migrationTickMs,
      },
      {
        selfUuid: o.uuid,
        isMaster: () => this.membership.isMaster,
        masterUuid: () => this.membership.master?.uuid ?? null,
        membersVersion: () => this.membership.version,
        dataMembers: () => this.membership.list.filter((m) => !m.lite).map((m) => m.uuid),
        isMember: (u) => this.membership.isMember(u),
        send: (u, m) => this.sendTo(u, m),
        migrationAllowed: () => this.state === 'ACTIVE' && !this.isLocked() && !this.clusterStopping && this.recovery === null,
        promotionAllowed: () => (this.state === 'ACTIVE' || this.state === 'NO_MIGRATION') && !this.clusterStopping && this.recovery === null,
        publishTable: () => this.membership.publishTable(),
        onTableApplied: (changed) => this.onTableApplied(changed),
        onMemberDrained: (u) => this.onMemberDrained(u),
      },
      this.store,
      this.replicator,
      o.clock,
      o.timers,
      o.logger.component('migration'),
    );
    this.invoker = new Invoker(
      { attemptTimeoutMs: this.t.attemptTimeoutMs, retryDelayMinMs: 20, retryDelayMaxMs: 500 },
      {
        selfUuid: o.uuid,
        ownerOf: (p) => (this.membership.joined ? this.partitions.table.owner(p) : null),
        addressOf: (u) => this.membership.addressOfUuid(u),
        runLocal: (p, op, cb, hook) => this.runLocal(p, op, cb, hook),
        refusal: (p, owner) => this.refusal(p, owner),
      },
      o.transport,
      o.clock,
      o.timers,
    );
    this.wan = new WanService({
      config: c,
      clock: o.clock,
      timers: o.timers,
      log: o.logger.component('wan'),
      newUuid: o.newUuid,
      openTransport: o.openWanTransport ?? (() => NO_WAN_TRANSPORT),
      keyBytesMax: MAP_KEY_BYTES_MAX_DEFAULT,
      valueBytesMax: MAP_VALUE_BYTES_MAX_DEFAULT,
    });
    this.wan.selfId = o.uuid;
    this.wan.replyTo = (peer, m) => o.transport.send(peer.address, m);
    this.wan.attach({
      store: this.store,
      clusterName: c.clusterName,
      clusterId: () => this.membership.id,
      joined: () => this.membership.joined,
      isOwner: (p) => this.membership.joined && this.partitions.table.owner(p) === o.uuid,
      ownerOf: (p) => (this.membership.joined ? this.partitions.table.owner(p) : null),
      backupsOf: (p) => (this.partitions.table.replicas[p] ?? []).filter((u): u is string => u !== null && u !== o.uuid),
      memberUuids: () => (this.membership.joined ? this.membership.list.map((m) => m.uuid) : [o.uuid]),
      sendTo: (u, m) => this.sendTo(u, m),
      invoke: (p, op, cb) => {
        this.invoker.invoke(p, op, c.properties.operationCallTimeoutMs, cb);
      },
      targetRefusal: () => {
        if (!this.membership.joined) return 'the receiving member has not joined its cluster';
        if (this.state === 'PASSIVE' || this.clusterStopping) return 'the target cluster is PASSIVE';
        return null;
      },
    });
  }

  // ── life cycle ───────────────────────────────────────────────────────────────────────────────

  /** Starts joining, once the member's own address is known. */
  start(host: string, port: number, joinAddresses: readonly string[]): void {
    const selfWire = this.membership.self as { host: string; port: number };
    selfWire.host = host;
    selfWire.port = port;
    (this.self as { address: string }).address = `${host}:${port}`;
    this.membership.setJoinAddresses(joinAddresses);
    this.membership.start();
    this.replicator.start();
    this.partitions.start();
    if (this.persistence !== null) {
      const refresh = (): void => {
        this.saveMetadata();
        this.tickRecovery();
        this.persistence?.tick((fn) => void this.o.timers.setTimeout(fn, 0));
        this.metadataTimer = this.o.timers.setTimeout(refresh, METADATA_REFRESH_MS);
      };
      refresh();
    }
  }

  // ── persistence ──────────────────────────────────────────────────────────────────────────────

  /**
   * Reads this member's persisted log into its store (before `start`). With metadata from an
   * earlier run, the persisted partition table is installed as it was and a whole-cluster recovery
   * begins: data calls answer 503 (recovery in progress), nothing migrates or is promoted, until the
   * master has every member the table names back with the same table (recoveryDone).
   */
  loadPersisted(owner: string): void {
    const p = this.persistence;
    if (p === null) return;
    const t0 = this.o.clock.monotonicMs();
    this.afterLoad(p, p.load(owner), t0);
  }

  /**
   * The same as `loadPersisted`, giving the event loop a turn after each segment: meanwhile the
   * member answers (node state STARTING, data calls 503 recovery in progress). The runtime's way.
   */
  async loadPersistedAsync(owner: string, yieldTurn: () => Promise<void>): Promise<void> {
    const p = this.persistence;
    if (p === null) return;
    const t0 = this.o.clock.monotonicMs();
    this.loading = true;
    try {
      this.afterLoad(p, await p.loadAsync(owner, yieldTurn), t0);
    } finally {
      this.loading = false;
    }
  }

  private afterLoad(p: NodePersistence, loaded: ReturnType<NodePersistence['load']>, t0: number): void {
    const { report, tally } = loaded;
    const ms = Math.round(this.o.clock.monotonicMs() - t0);
    const meta = p.setup.metadata;
    this.log.info(`persistence: ${p.setup.dir}: loaded ${tally.records} record(s) from ${report.segments} segment(s), ${report.bytes} bytes, in ${ms} ms${tally.entriesSkippedExpired > 0 ? `; ${tally.entriesSkippedExpired} entr(ies) had expired before the stop` : ''}${report.tornTail === null ? '' : `; a torn last write of ${report.tornTail.bytes} bytes was dropped`}`);
    if (meta === null) {
      this.saveMetadata();
      return;
    }
    if (meta.partitionCount !== this.store.partitionCount) {
      throw new GridError('ERR_CONFIG_INVALID', `${p.setup.dir}: the persisted data has ${meta.partitionCount} partitions, this member is configured with ${this.store.partitionCount}`);
    }
    const table = PartitionTable.fromWire(meta.table, this.store.partitionCount);
    if (!table.isAssigned) {
      this.saveMetadata();
      return;
    }
    this.partitions.restore(table);
    const resume = (['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE'] as const).find((s) => s === meta.clusterState) ?? 'ACTIVE';
    // The cluster is PASSIVE while it recovers (only members the table names are admitted); the
    // persisted state resumes when the recovery is over.
    this.state = 'PASSIVE';
    this.recovery = { expected: table.members(), resumeState: resume, tableVersion: table.version, tableStamp: table.stamp(), reports: new Map(), startedMs: this.o.clock.monotonicMs(), lastWaitLogMs: this.o.clock.monotonicMs(), partialRequested: false };
    this.log.info(`persistence: recovering with partition table version ${table.version}; waiting for the ${table.members().size} member(s) it names (${this.o.config.persistence.clusterDataRecoveryPolicy}); the cluster state ${resume} resumes afterwards`);
  }

  /** Whether a whole-cluster recovery (or the load of this member's log before it) is under way here. */
  get recovering(): boolean {
    return this.recovery !== null || this.loading;
  }

  /** Replicator hook: an acknowledgement waits for the records of what it confirms. */
  private whenPersisted(send: () => void): void {
    const p = this.persistence as NodePersistence;
    const ticket = p.takeTicket();
    if (ticket === 0) return send();
    p.whenDone(ticket, (error) => {
      if (error === null) send();
      else this.log.severe(`a backup write could not be persisted, so it is not acknowledged: ${error.message}`);
    });
  }

  /** Wraps an owner's answer so it goes out only once the operation's records are persisted. */
  private afterPersisted(cb: (r: LocalResult) => void): (r: LocalResult) => void {
    const ticket = (this.persistence as NodePersistence).takeTicket();
    return ticket === 0 ? cb : this.afterTicket(ticket, cb);
  }

  /** `cb`, called once the records logged up to `ticket` are on disk (a write error answers as an error). */
  private afterTicket(ticket: number, cb: (r: LocalResult) => void): (r: LocalResult) => void {
    const p = this.persistence as NodePersistence;
    return (r) =>
      p.whenDone(ticket, (error) => {
        if (error === null || r.kind !== 'ok') return cb(r);
        cb({ kind: 'error', error: isGridError(error) ? error : new GridError('ERR_PERSISTENCE_IO', error.message) });
      });
  }

  /** The metadata this member persists now. */
  private metadataNow(): MemberMetadata {
    const self = this.membership.self;
    const members = this.membership.joined ? this.membership.list.map((m) => ({ uuid: m.uuid, address: addressOf(m) })) : [{ uuid: this.o.uuid, address: addressOf(self) }];
    // During a recovery the persisted table is kept as it was until the cluster has resumed.
    const state = this.recovery !== null ? this.recovery.resumeState : this.clusterStopping && this.state === 'PASSIVE' ? this.stateBeforePassive : this.state;
    return {
      memberUuid: this.o.uuid,
      address: addressOf(self),
      clusterName: this.o.config.clusterName,
      partitionCount: this.store.partitionCount,
      members,
      membersVersion: this.membership.version,
      table: this.partitions.tableWire(),
      clusterState: state,
      clusterVersion: this.o.memberVersion,
      lastAliveMs: this.o.clock.nowMs(),
      backupSeq: this.backupSeq,
    };
  }

  private saveMetadata(): void {
    this.persistence?.writeMetadata(this.metadataNow());
  }

  /** Every second while recovering: report to the master; the master decides; waiting is logged. */
  private tickRecovery(): void {
    const r = this.recovery;
    if (r === null || !this.membership.joined) return;
    const master = this.membership.master?.uuid;
    if (master !== undefined) this.sendTo(master, message('recoveryReport', { tableVersion: r.tableVersion, tableStamp: r.tableStamp }));
    if (!this.membership.isMaster) return;
    const missing = [...r.expected].filter((u) => !this.membership.isMember(u) || !r.reports.has(u));
    const now = this.o.clock.monotonicMs();
    if (missing.length === 0) {
      const differing = [...r.expected].filter((u) => r.reports.get(u)?.tableVersion !== r.tableVersion || r.reports.get(u)?.tableStamp !== r.tableStamp);
      if (differing.length === 0) {
        this.log.info(`persistence: every member of partition table version ${r.tableVersion} is back with it; recovery is over after ${Math.round(now - r.startedMs)} ms`);
        for (const m of this.membership.list) this.sendTo(m.uuid, message('recoveryDone', { state: STATE_CODES[r.resumeState] }));
        return;
      }
      if (now - r.lastWaitLogMs >= RECOVERY_WAIT_LOG_MS) {
        r.lastWaitLogMs = now;
        this.log.warning(`persistence: recovery waits: ${differing.join(', ')} persisted another partition table than version ${r.tableVersion} (stamp ${r.tableStamp}); forceStart starts the cluster empty`);
      }
      return;
    }
    const policy = this.o.config.persistence.clusterDataRecoveryPolicy;
    if (policy !== 'FULL_RECOVERY_ONLY' && (r.partialRequested || now - r.startedMs >= this.o.config.persistence.validationTimeoutSeconds * 1000)) {
      this.startPartially(r, policy);
      return;
    }
    if (now - r.lastWaitLogMs >= RECOVERY_WAIT_LOG_MS) {
      r.lastWaitLogMs = now;
      this.log.warning(`persistence: recovery waits for ${missing.length} member(s) of the persisted partition table: ${missing.join(', ')} (${policy}, ${Math.round((now - r.startedMs) / 1000)} s so far)`);
    }
  }

  /**
   * Master, PARTIAL policies: start with the members that are back, grouped by the table they
   * persisted: the group with the most recent table (MOST_RECENT) or the largest group
   * (MOST_COMPLETE). The others are stale. A master outside the chosen group starts over itself
   * (a member of the group then becomes master and decides again).
   */
  private startPartially(r: Recovery, policy: string): void {
    const groups = new Map<string, { version: number; members: string[] }>();
    for (const [u, rep] of r.reports) {
      if (!this.membership.isMember(u) && u !== this.o.uuid) continue;
      const key = `${rep.tableVersion}/${rep.tableStamp}`;
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = { version: rep.tableVersion, members: [] }));
      g.members.push(u);
    }
    const ranked = [...groups.entries()].sort(([, a], [, b]) =>
      policy === 'PARTIAL_RECOVERY_MOST_COMPLETE' ? b.members.length - a.members.length || b.version - a.version : b.version - a.version || b.members.length - a.members.length,
    );
    const chosen = ranked[0];
    if (chosen === undefined) return;
    const [key, group] = chosen;
    if (key !== `${r.tableVersion}/${r.tableStamp}`) {
      this.log.warning(`persistence: partial start (${policy}): the members with partition table version ${group.version} go on; this member's table (version ${r.tableVersion}) is stale`);
      this.startOver('partial start: this member persisted an older or smaller partition table');
      return;
    }
    const inGroup = new Set(group.members);
    const missing = [...r.expected].filter((u) => !inGroup.has(u));
    this.log.warning(`persistence: partial start (${policy}${r.partialRequested ? ', partialStart' : `, after ${this.o.config.persistence.validationTimeoutSeconds} s`}) with ${group.members.length} member(s) of partition table version ${group.version}; ${missing.length} member(s) of it are not back: ${missing.join(', ') || 'none'}`);
    for (const [u] of r.reports) if (!inGroup.has(u) && this.membership.isMember(u)) this.sendTo(u, message('recoveryStale', { reason: `the cluster started partially with partition table version ${group.version}` }));
    for (const u of group.members) this.sendTo(u, message('recoveryDone', { state: STATE_CODES[r.resumeState] }));
  }

  /** Master of a running cluster: a member reports a recovery (it restarted with persisted data). */
  private answerLateReport(from: Peer): void {
    if (this.partitions.table.members().has(from.uuid)) {
      // Still expected (its partitions stayed assigned, e.g. a rolling restart in FROZEN): it resumes.
      this.sendTo(from.uuid, message('recoveryDone', { state: STATE_CODES[this.state] }));
      return;
    }
    this.sendTo(from.uuid, message('recoveryStale', { reason: 'the cluster went on without this member: its persisted data is stale' }));
  }

  /** The master says this member's persisted data is stale. */
  private onStale(reason: string): void {
    if (this.o.config.persistence.autoRemoveStaleData) {
      this.startOver(`stale data (${reason})`);
      return;
    }
    this.log.severe(`persistence: ${reason}; auto-remove-stale-data is false, so the data stays in ${this.persistence?.setup.dir ?? 'its directory'} and this member stops (exit status 3): remove the directory, or start the member with another base-dir`);
    this.recovery = null;
    (this.o.onStaleStop ?? this.o.onShutdownRequested)(reason);
  }

  /** Wipes this member's store and starts it over as a new member (the runtime does it). */
  private startOver(reason: string): void {
    if (this.stopped) return;
    (this.o.onStartOver ?? this.o.onShutdownRequested)(reason);
  }

  /** `forceStart` through this member: every member starts over empty. False: no recovery waits. */
  forceStart(): boolean {
    if (this.recovery === null) return false;
    const members = this.membership.joined ? this.membership.list.map((m) => m.uuid) : [this.o.uuid];
    this.log.warning(`persistence: forceStart: ${members.length} member(s) wipe their stores and start over as new members`);
    for (const u of members) this.sendTo(u, message('forceStart', {}));
    return true;
  }

  /** `partialStart` through this member (PARTIAL policies only; the handler checks). False: no recovery waits. */
  partialStart(): boolean {
    if (this.recovery === null) return false;
    const master = this.membership.joined ? this.membership.master?.uuid : this.o.uuid;
    if (master !== undefined) this.sendTo(master, message('partialStart', {}));
    return true;
  }

  /**
   * `backup` through this member: every member copies its store to backup-dir/backup-<seq>/<uuid>/
   * (seq one above the highest any member used, the same on every member); resolves once every
   * copy is complete, or with why not.
   */
  startBackup(): Promise<{ ok: boolean; message: string }> {
    if (this.persistence === null) return Promise.resolve({ ok: false, message: 'persistence is not enabled' });
    if (this.recovery !== null) return Promise.resolve({ ok: false, message: 'recovery in progress: no backup until the cluster has resumed' });
    if (this.backupCoordination !== null) return Promise.resolve({ ok: false, message: 'a backup is already running' });
    return new Promise((resolve) => {
      // Round 0 asks every member for its last backup number; round `seq` copies.
      const round = (seq: number): void => {
        const members = this.membership.joined ? this.membership.list.map((m) => m.uuid) : [this.o.uuid];
        const timer = this.o.timers.setTimeout(() => this.finishBackupCoordination(`members did not finish within ${BACKUP_WAIT_MS / 1000} s`), BACKUP_WAIT_MS);
        this.backupCoordination = {
          seq,
          waiting: new Set(members),
          failures: [],
          higherSeq: this.backupSeq,
          timer,
          answer: (ok, message) => {
            const c = this.backupCoordination;
            this.backupCoordination = null;
            if (seq === 0 && ok && c !== null) return round(c.higherSeq + 1);
            resolve({ ok, message });
          },
        };
        if (seq > 0) this.log.info(`persistence: backup ${seq} started on ${members.length} member(s)`);
        for (const u of members) this.sendTo(u, message('backupStart', { seq }));
      };
      round(0);
    });
  }

  /** `backupInterrupt` through this member: every member stops the backup it runs. */
  interruptBackup(): void {
    const members = this.membership.joined ? this.membership.list.map((m) => m.uuid) : [this.o.uuid];
    for (const u of members) this.sendTo(u, message('backupInterrupt', {}));
  }

  private onBackupStart(from: Peer, seq: number): void {
    const reply = (ok: boolean, text: string): void => this.sendTo(from.uuid, message('backupResult', { seq, ok, message: text, lastSeq: this.backupSeq }));
    const p = this.persistence;
    if (p === null) return reply(false, 'persistence is not enabled on this member');
    if (p.setup.backupDir === '') return reply(false, 'no backup-dir is configured on this member');
    if (this.backupRun !== null) return reply(false, `backup ${this.backupRun.seq} is running on this member`);
    if (seq === 0) return reply(true, ''); // the number round
    if (seq <= this.backupSeq) return reply(false, `this member already took part in backup ${this.backupSeq}`);
    this.backupSeq = seq;
    let finished = false;
    const target = `${p.setup.backupDir}/backup-${seq}/${this.o.uuid}`;
    const startedMs = this.o.clock.monotonicMs();
    const interrupt = p.backup(target, this.metadataNow(), (fn) => void this.o.timers.setTimeout(fn, 0), (error) => {
      finished = true;
      this.backupRun = null;
      this.saveMetadata();
      if (error === null) this.log.info(`persistence: backup ${seq} copied to ${target} in ${Math.round(this.o.clock.monotonicMs() - startedMs)} ms`);
      else this.log.warning(`persistence: backup ${seq} on this member failed: ${error.message}`);
      reply(error === null, error === null ? '' : error.message);
    });
    if (!finished) this.backupRun = { seq, interrupt };
  }

  private onBackupResult(from: Peer, b: { seq: number; ok: boolean; message: string; lastSeq: number }): void {
    const c = this.backupCoordination;
    if (c === null || b.seq !== c.seq || !c.waiting.delete(from.uuid)) return;
    c.higherSeq = Math.max(c.higherSeq, b.lastSeq);
    if (!b.ok) c.failures.push(`${this.membership.addressOfUuid(from.uuid) ?? from.uuid}: ${b.message}`);
    if (c.waiting.size === 0) this.finishBackupCoordination(null);
  }

  private finishBackupCoordination(timeout: string | null): void {
    const c = this.backupCoordination;
    if (c === null) return;
    this.o.timers.clearTimeout(c.timer);
    if (timeout !== null) c.failures.push(timeout);
    const ok = c.failures.length === 0;
    if (c.seq > 0 || !ok) this.log.info(`persistence: backup ${c.seq} ${ok ? 'complete on every member' : `failed: ${c.failures.join('; ')}`}`);
    c.answer(ok, ok ? '' : `backup ${c.seq} failed: ${c.failures.join('; ')}`);
  }

  private onRecoveryDone(state: Exclude<ClusterState, 'IN_TRANSITION'>): void {
    if (this.recovery === null) return;
    this.recovery = null;
    // A backup's log may hold a write its owner's log lost (the owner stopped between sending the
    // backup and writing its own record): owners jump their versions, so each backup resyncs from
    // its owner on the next write instead of taking that write for one it has.
    const t = this.partitions.table;
    for (let p = 0; p < t.partitionCount; p++) if (t.owner(p) === this.o.uuid) this.store.jumpVersion(p);
    this.log.info(`persistence: recovery is over; the cluster state is ${state}`);
    if (state !== this.state) this.setState(state, 'the state persisted before the restart');
    else this.partitions.promoteDeparted();
    this.saveMetadata();
  }

  setJoinAddresses(addresses: readonly string[]): void {
    this.membership.setJoinAddresses(addresses);
  }

  stop(): void {
    this.stopped = true;
    if (this.metadataTimer !== null) this.o.timers.clearTimeout(this.metadataTimer);
    if (this.persistence !== null) {
      this.saveMetadata();
      this.persistence.close();
    }
    this.membership.stop();
    this.replicator.stop();
    this.partitions.stop();
    this.wan.stop();
    for (const timer of this.departing.values()) this.o.timers.clearTimeout(timer);
    this.departing.clear();
    this.invoker.failAll();
    for (const set of this.ownerPolls.values()) for (const p of set) this.settlePoll(p, { kind: 'ok', outcome: { kind: 'value', value: null, contentType: null } });
  }

  get uuid(): string {
    return this.o.uuid;
  }

  get clusterState(): ClusterState {
    return this.isLocked() ? 'IN_TRANSITION' : this.state;
  }

  // ── transport ────────────────────────────────────────────────────────────────────────────────

  onMessage(from: Peer, m: Message): void {
    if (this.stopped) return;
    if (this.membership.handle(from, m)) return;
    // A confirmed migration commit says its sender is alive and takes this member for its master
    // (it confirms only to its own master): as good as a heartbeat. Other messages are not: a member
    // that left for a cluster of its own still answers snapshots and says "not a member".
    if (m.kind === 'migrateCommitAck' && m.body.ok) this.membership.heardFrom(from.uuid);
    if (this.wan.handles(m.kind)) {
      // A batch may come from another cluster; everything else of this room only from members.
      if (m.kind === 'wanBatch' || m.kind === 'wanMerkleRequest' || this.membership.isMember(from.uuid) || from.uuid === this.o.uuid) this.wan.handle(from, m);
      return;
    }
    if (this.replicator.handle(from, m)) return;
    if (this.partitions.handle(from, m)) return;
    switch (m.kind) {
      case 'invoke':
        this.onInvoke(from, m);
        return;
      case 'invokeResult':
        this.invoker.onResult(from, m);
        return;
      case 'pollCancel':
        this.remotePolls.get(`${from.uuid}/${m.body.callId}`)?.();
        return;
      case 'shutdownRequest':
        if (this.membership.isMaster && this.membership.isMember(m.body.uuid)) this.partitions.requestLeave(m.body.uuid);
        return;
      case 'shutdownAllowed':
        if (m.body.uuid === this.o.uuid && this.leave !== null) {
          this.log.info('every replica handed off');
          this.handedOff = true;
          this.finishLeave();
        }
        return;
      case 'departing':
        if (m.body.uuid === from.uuid && this.membership.isMaster && this.membership.isMember(from.uuid)) this.removeDeparted(from.uuid);
        return;
      case 'stateLock':
        this.onStateLock(from, m);
        return;
      case 'stateLockAnswer': {
        const tx = this.stateTx.get(m.body.txId);
        if (tx === undefined || !tx.waiting.delete(from.uuid)) return;
        if (!m.body.ok) tx.failures.push(`${from.address}: ${m.body.message}`);
        if (tx.waiting.size === 0) tx.done(tx.failures);
        return;
      }
      case 'stateCommit':
        if (this.lock?.txId === m.body.txId || this.lock === null) {
          this.lock = null;
          this.setState(STATE_BY_CODE[m.body.state] ?? this.state, from.uuid === this.o.uuid ? `requested on this member${this.stateRequester === null ? '' : ` by ${this.stateRequester}`}` : `a change made through ${from.address}`);
        }
        return;
      case 'backupStart':
        if (this.membership.isMember(from.uuid) || from.uuid === this.o.uuid) this.onBackupStart(from, m.body.seq);
        return;
      case 'backupResult':
        this.onBackupResult(from, m.body);
        return;
      case 'backupInterrupt':
        if (this.membership.isMember(from.uuid) || from.uuid === this.o.uuid) this.backupRun?.interrupt();
        return;
      case 'recoveryReport':
        if (!this.membership.isMaster || !(this.membership.isMember(from.uuid) || from.uuid === this.o.uuid)) return;
        if (this.recovery !== null) this.recovery.reports.set(from.uuid, { tableVersion: m.body.tableVersion, tableStamp: m.body.tableStamp });
        else this.answerLateReport(from);
        return;
      case 'recoveryStale':
        if (this.recovery !== null && from.uuid === this.membership.master?.uuid) this.onStale(m.body.reason);
        return;
      case 'forceStart':
        if (this.recovery !== null && (this.membership.isMember(from.uuid) || from.uuid === this.o.uuid)) this.startOver('forceStart');
        return;
      case 'partialStart':
        if (this.recovery !== null && this.membership.isMaster) this.recovery.partialRequested = true;
        if (this.recovery !== null && this.membership.isMaster) this.tickRecovery();
        return;
      case 'recoveryDone': {
        const state = STATE_BY_CODE[m.body.state];
        if (state !== undefined && (from.uuid === this.membership.master?.uuid || from.uuid === this.o.uuid)) this.onRecoveryDone(state);
        return;
      }
      case 'stateRollback':
        if (this.lock?.txId === m.body.txId) this.lock = null;
        return;
      case 'shutdownMember':
        // Only from a member of this member's cluster: the initiator resends by address, and a new
        // process at a stopped member's address (restarted meanwhile) must not take it as its own.
        if (!this.membership.joined || !this.membership.isMember(from.uuid)) return;
        // Acknowledge every copy (the initiator resends until it hears back), act on the first.
        this.clusterStopping = true;
        this.saveMetadata();
        if (m.callId !== 0) this.o.transport.send(from.address, message('shutdownMemberAck', { uuid: this.o.uuid }, m.callId));
        if (!this.stopRequested) {
          this.stopRequested = true;
          this.o.onShutdownRequested(m.body.reason);
        }
        return;
      case 'shutdownMemberAck':
        this.clusterShutdownAcks?.(from.uuid, m.callId);
        return;
      case 'memberListSet':
        if (this.membership.isMember(from.uuid)) this.o.onMemberListSet?.(m.body.members, from.address);
        return;
      default:
        return;
    }
  }

  /** A refused handshake (another cluster, or incompatible) counts as "nobody to join there". */
  onRefused(address: string): void {
    this.membership.onUnreachable(address);
  }

  /** The transport could not connect to an address; `refused`: ECONNREFUSED (nothing listens there). */
  onUnreachable(address: string, refused = false): void {
    this.membership.onUnreachable(address, refused);
  }

  /** The open connection to a peer closed: membership re-dials it to tell a dead process from a live one. */
  onDisconnected(peer: Peer): void {
    this.membership.onDisconnected(peer);
  }

  private sendTo(uuid: string, m: Message): void {
    if (uuid === this.o.uuid) {
      this.o.timers.setTimeout(() => this.onMessage(this.self, m), 0);
      return;
    }
    const address = this.membership.addressOfUuid(uuid);
    if (address !== null) this.o.transport.send(address, m);
  }

  // ── membership events ────────────────────────────────────────────────────────────────────────

  private onView(view: MessageOf<'membersView'>['body'], previous: readonly { uuid: string }[]): void {
    this.joinedOnce = true;
    if (!this.membership.isMaster) {
      this.partitions.applyFromMaster(view.table, view.migrationQueue);
      const s = STATE_BY_CODE[view.clusterState];
      if (s !== undefined && s !== this.state && this.lock === null) this.setState(s);
    }
    const now = new Set(view.members.map((m) => m.uuid));
    const removed = previous.filter((m) => !now.has(m.uuid)).map((m) => m.uuid);
    const c = this.backupCoordination;
    if (c !== null) {
      for (const u of removed) if (c.waiting.delete(u)) c.failures.push(`${u}: left the cluster during the backup`);
      if (removed.length > 0 && c.waiting.size === 0) this.finishBackupCoordination(null);
    }
    for (const u of removed) {
      this.invoker.onMemberRemoved(u);
      this.replicator.forgetMember(u);
      this.wan.onMemberRemoved(u);
    }
    // Schemes added at run time reach members that joined since (addWanConfig is cluster-wide).
    const before = new Set(previous.map((m) => m.uuid));
    for (const m of view.members) if (!before.has(m.uuid) && m.uuid !== this.o.uuid) this.wan.shipAddedTo(m.uuid);
    const changed = removed.length > 0 || previous.length !== view.members.length;
    if (changed) this.log.info(this.membership.membersLine());
    if (this.membership.isMaster) this.partitions.onMembersChanged();
    if (this.recovery !== null) this.tickRecovery();
    if (this.persistence !== null && changed) this.saveMetadata();
    this.pumpReplay();
  }

  /**
   * Cut off from the cluster (removed by the master, or merging into a larger cluster): keep what
   * must be handed back, then hold nothing: this member joins again as a new one would.
   */
  private onLeftCluster(reason: string): void {
    // The member list is empty by now: every forwarded call is dropped, not only those of listed members.
    this.invoker.onLeftCluster();
    // Everything this member holds a replica of goes back, not only what it owned: the other side
    // may have lost every other copy of a partition (its owner crashed, or was cut off with this
    // member) and restarted it empty. Entries the other side still has are left as they are by the
    // merge policy; queue items it polled meanwhile can come again (at-least-once in a split brain).
    // A backup's copy may be behind its owner's: it goes back only where the cluster has no entry
    // (merge-replay.ts), the owner's under the structure's merge policy.
    const t = this.partitions.table;
    const owned: number[] = [];
    const backedUp: number[] = [];
    for (let p = 0; p < t.partitionCount; p++) {
      const r = t.replicas[p] ?? [];
      if (r[0] === this.o.uuid) owned.push(p);
      else if (r.includes(this.o.uuid)) backedUp.push(p);
    }
    const unconfirmed = this.replicator.reset();
    const c = this.o.config;
    const policies: ReplayPolicies = {
      map: (name) => resolveMapConfig(c.maps, name).mergePolicy,
      queue: (name) => resolveQueueConfig(c.queues, queueConfigName(name)).mergePolicy,
    };
    const batchBytesMax = Math.min(MERGE_BATCH_BYTES_MAX, Math.floor(c.properties.memberFrameBytesMax / 2));
    const plan = collectReplay(this.store, unconfirmed, owned, this.o.clock.nowMs(), policies, batchBytesMax, backedUp);
    this.partitions.reset();
    for (const set of this.ownerPolls.values()) for (const poll of [...set]) this.settlePoll(poll, { kind: 'retry' });
    // The hand-back is queued before the copies go, so at no moment is it in neither place.
    this.replay.add(plan.calls);
    for (let p = 0; p < this.store.partitionCount; p++) this.store.dropPartition(p);
    this.mergeCounters.replaySkipped += plan.skipped;
    this.mergeCounters.replayDiscarded += plan.discarded;
    const line = replayLogLine(reason, plan);
    if (line !== null) this.log.warning(line);
  }

  /** Sends the replay backlog through the normal call path, a bounded window at a time, once joined. */
  private pumpReplay(): void {
    // A call answered at once (local owner) must not recurse: the loop below goes on instead.
    if (this.replayPumping || this.stopped || !this.membership.joined || !this.partitions.table.isAssigned) return;
    this.replayPumping = true;
    try {
      for (let call = this.replay.take(); call !== null; call = this.replay.take()) {
        const r = call;
        this.invoker.invoke(r.partitionId, r.op, this.o.config.properties.operationCallTimeoutMs, (res) => {
          if (res.kind !== 'ok' && this.membership.joined && !this.stopped && (res.kind === 'retry' || res.error.status === 503)) {
            // The owner could not be reached in time, or the cluster cannot take it now: what is
            // handed back is the only copy of some acknowledged writes, so it is never given up on
            // a transient failure. It stays in flight (the window holds) and goes again shortly.
            this.mergeCounters.replayRetried += r.entries;
            this.o.timers.setTimeout(() => {
              this.replay.finish(r, true);
              this.pumpReplay();
            }, REPLAY_RETRY_DELAY_MS);
            return;
          }
          const again = res.kind !== 'ok' && !this.membership.joined; // cut off again meanwhile: keep it for the next join
          this.replay.finish(r, again);
          const m = this.mergeCounters;
          if (res.kind === 'ok') {
            const { stored, kept } = replayOutcome(r, res.outcome);
            m.replayed += r.entries;
            m.replayStored += stored;
            m.replayKept += kept;
          } else if (!again) {
            m.replayFailed += r.entries;
            this.log.warning(`handing back ${r.entries} entr(ies)/item(s) after a split failed: ${res.kind === 'error' ? res.error.message : 'retry'}`);
          }
          if (this.replay.pending === 0 && this.replay.inFlight === 0) {
            this.log.info(`handed back ${m.replayed} entr(ies)/item(s) after the split: the merge policies stored ${m.replayStored} and kept the cluster's own for ${m.replayKept}; ${m.replayFailed} failed`);
          }
          this.pumpReplay();
        });
      }
    } finally {
      this.replayPumping = false;
    }
  }


  private joinRefusal(joinerUuid: string): string | null {
    if (this.isLocked()) return 'the cluster state is changing (IN_TRANSITION)';
    // FROZEN and PASSIVE admit only members that left during them: their partitions stayed
    // assigned, so the table still names them (with persistence they come back with their UUID).
    if ((this.state === 'FROZEN' || this.state === 'PASSIVE') && !this.partitions.table.members().has(joinerUuid)) return `the cluster is ${this.state}: no new members are admitted`;
    return null;
  }

  private onTableApplied(changed: readonly number[]): void {
    this.wan.onTableApplied(changed);
    // The persisted table follows every change at once: a whole-cluster restart compares them.
    if (this.persistence !== null && this.recovery === null) this.saveMetadata();
    for (const p of changed) {
      if (this.partitions.table.owner(p) === this.o.uuid) continue;
      const polls = this.ownerPolls.get(p);
      if (polls === undefined) continue;
      for (const poll of [...polls]) {
        this.store.queues.cancelWaiter(poll.queue, poll);
        this.settlePoll(poll, { kind: 'retry' });
      }
    }
  }

  // ── data: owner side ─────────────────────────────────────────────────────────────────────────

  /** True when a call for the partition can run here synchronously right now. */
  isFastLocal(partitionId: number): boolean {
    return this.membership.joined && this.partitions.table.owner(partitionId) === this.o.uuid && !this.partitions.isHeld(partitionId) && !this.replicator.isReceiving(partitionId);
  }

  runLocal(partitionId: number, op: OpWire, cb: (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): void {
    const r = this.runLocalNow(partitionId, op, () => cb, cancelHook);
    if (r !== null) cb(r);
  }

  /**
   * Runs an operation on this member as its partition's owner. When the answer is ready at once
   * (no backup to wait for, nothing to persist first) it is returned and `defer` is never called,
   * so the hot path of a local call makes no callback. Otherwise runLocalNow calls `defer()` once,
   * before it returns null, and answers later through the callback `defer` gave.
   */
  runLocalNow(partitionId: number, op: OpWire, defer: () => (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): LocalResult | null {
    if (this.recovery !== null) return { kind: 'error', error: recoveringError() };
    if (!this.membership.joined || this.partitions.table.owner(partitionId) !== this.o.uuid || this.replicator.isReceiving(partitionId)) return RETRY;
    if (this.partitions.isHeld(partitionId)) {
      const cb = defer();
      this.partitions.whenReleased(partitionId, () => this.runLocal(partitionId, op, cb, cancelHook));
      return null;
    }
    let r;
    try {
      if (this.wan.publishing && isMapWrite(op.code)) this.wan.checkWrite(op.name);
      r = this.store.runOwnerOp(partitionId, op, this.o.clock.nowMs());
    } catch (e) {
      if (!isGridError(e)) throw e;
      return { kind: 'error', error: e };
    }
    if (op.code === OP.QUEUE_POLL && r.backup === null && op.timeoutMs > 0 && !this.stopped) {
      this.waitForItem(partitionId, op, defer(), cancelHook);
      return null;
    }
    const ticket = this.persistence === null ? 0 : this.persistence.takeTicket();
    const outcome = r.outcome;
    if (r.backup === null || !this.replicator.hasTargets(partitionId)) {
      if (ticket === 0) return { kind: 'ok', outcome };
      this.afterTicket(ticket, defer())({ kind: 'ok', outcome });
      return null;
    }
    const cb = ticket === 0 ? defer() : this.afterTicket(ticket, defer());
    if (this.replicator.replicate(partitionId, this.store.version(partitionId), r.backup, r.kind, r.name, () => cb({ kind: 'ok', outcome }))) cb({ kind: 'ok', outcome });
    return null;
  }

  private waitForItem(partitionId: number, op: OpWire, cb: (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): void {
    const poll = new OwnerPoll(partitionId, op.name, cb, (p, r) => this.settlePoll(p, r));
    let item: QueueItem | null;
    try {
      item = this.store.pollOrWait(op.name, poll);
    } catch (e) {
      if (!isGridError(e)) throw e;
      cb({ kind: 'error', error: e });
      return;
    }
    if (item !== null) {
      const r = this.store.polled(partitionId, op.name, item, this.o.clock.nowMs());
      if (this.persistence !== null) cb = this.afterPersisted(cb);
      const outcome = r.outcome;
      if (this.replicator.replicate(partitionId, this.store.version(partitionId), r.backup as NonNullable<typeof r.backup>, 'queue', op.name, () => cb({ kind: 'ok', outcome }))) cb({ kind: 'ok', outcome });
      return;
    }
    let set = this.ownerPolls.get(partitionId);
    if (set === undefined) this.ownerPolls.set(partitionId, (set = new Set()));
    set.add(poll);
    const expire = (): void => {
      if (poll.done) return;
      this.store.queues.cancelWaiter(op.name, poll);
      this.settlePoll(poll, { kind: 'ok', outcome: { kind: 'value', value: null, contentType: null } });
    };
    poll.timer = this.o.timers.setTimeout(expire, op.timeoutMs);
    cancelHook(expire);
  }

  private settlePoll(poll: OwnerPoll, r: LocalResult): void {
    if (poll.done) return;
    poll.done = true;
    if (poll.timer !== null) this.o.timers.clearTimeout(poll.timer);
    this.ownerPolls.get(poll.partitionId)?.delete(poll);
    poll.answer(r);
  }

  private onInvoke(from: Peer, m: MessageOf<'invoke'>): void {
    const { partitionId, op } = m.body;
    const reply = (r: LocalResult): void => {
      this.remotePolls.delete(`${from.uuid}/${m.callId}`);
      this.o.transport.send(from.address, message('invokeResult', resultToWire(r), m.callId));
    };
    if (partitionId < 0 || partitionId >= this.store.partitionCount) {
      reply({ kind: 'error', error: new GridError('ERR_PROTOCOL_MALFORMED', `partition ${partitionId} out of range`) });
      return;
    }
    this.runLocal(partitionId, op, reply, (cancel) => this.remotePolls.set(`${from.uuid}/${m.callId}`, cancel));
  }

  // ── data: caller side ────────────────────────────────────────────────────────────────────────

  /** Runs an operation wherever its partition lives; resolves with the outcome or rejects with a GridError. */
  call(partitionId: number, op: OpWire, onCancel?: (cancel: () => void) => void): Promise<LocalResult & { kind: 'ok' }> {
    return new Promise((resolve, reject) => {
      const handle = this.invoker.invoke(partitionId, op, this.o.config.properties.operationCallTimeoutMs, (r) => {
        if (r.kind === 'ok') resolve(r);
        else if (r.kind === 'error') reject(r.error);
        else reject(new GridError('ERR_CLUSTER_UNAVAILABLE', 'the call could not be placed', { retryAfterSeconds: 1 }));
      });
      onCancel?.(() => handle.cancel());
    });
  }

  static op(code: number, name: string, key: Uint8Array = EMPTY, value: Uint8Array = EMPTY, contentType: string | null = null, timeoutMs = 0): OpWire {
    return { code, name, key, value, contentType, timeoutMs };
  }

  // ── cluster state (two phases) ───────────────────────────────────────────────────────────────

  private isLocked(): boolean {
    if (this.lock !== null && this.o.clock.monotonicMs() > this.lock.expiresMs) this.lock = null;
    return this.lock !== null;
  }

  private setState(s: Exclude<ClusterState, 'IN_TRANSITION'>, by = 'a cluster-wide change'): void {
    if (s === this.state) return;
    this.log.info(`cluster state changed from ${this.state} to ${s} (${by})`);
    if (s === 'PASSIVE') this.stateBeforePassive = this.state;
    this.state = s;
    // Members that left in FROZEN or PASSIVE kept their partitions; now their backups take over.
    this.partitions.promoteDeparted();
  }

  /**
   * A call for a partition whose owner left while the cluster state forbids promotions (FROZEN,
   * PASSIVE): refused at once instead of retried until the call timeout.
   */
  private refusal(partitionId: number, owner: string): GridError | null {
    if (this.membership.isMember(owner) || !this.membership.joined) return null;
    if (this.state !== 'FROZEN' && this.state !== 'PASSIVE' && !this.clusterStopping) return null;
    return new GridError('ERR_CLUSTER_UNAVAILABLE', `partition ${partitionId} is unavailable: its owner left while the cluster is ${this.state}; it comes back when the cluster state is ACTIVE or NO_MIGRATION`, { retryAfterSeconds: 5 });
  }

  get currentState(): Exclude<ClusterState, 'IN_TRANSITION'> {
    return this.state;
  }

  private onStateLock(from: Peer, m: MessageOf<'stateLock'>): void {
    const b = m.body;
    const answer = (ok: boolean, text: string): void => this.sendTo(from.uuid, message('stateLockAnswer', { txId: b.txId, ok, message: text }));
    if (this.isLocked() && this.lock?.txId !== b.txId) return answer(false, 'another cluster-state change holds the lock');
    if (b.membersVersion !== this.membership.version) return answer(false, `member list version ${this.membership.version} differs from ${b.membersVersion}`);
    if (b.tableVersion !== this.partitions.table.version) return answer(false, `partition table version ${this.partitions.table.version} differs from ${b.tableVersion}`);
    if (this.partitions.activeMigrations > 0) return answer(false, 'migrations are running');
    this.lock = { txId: b.txId, expiresMs: this.o.clock.monotonicMs() + b.leaseMs };
    answer(true, '');
  }

  /** Changes the cluster state on every member: lock all, then commit all (or roll back → 409). `by` names who asked, for the log. */
  changeState(target: Exclude<ClusterState, 'IN_TRANSITION'>, by: string | null = null): Promise<'changed' | 'unchanged'> {
    if (target === this.state && !this.isLocked()) return Promise.resolve('unchanged');
    this.stateRequester = by;
    if (!this.membership.joined) return Promise.reject(new GridError('ERR_CLUSTER_STATE_CONFLICT', 'this member has not joined a cluster yet'));
    const members = this.membership.list.map((m) => m.uuid);
    const txId = `${this.o.uuid}/${this.nextTx++}`;
    return new Promise((resolve, reject) => {
      const finish = (failures: string[]): void => {
        const tx = this.stateTx.get(txId);
        if (tx === undefined) return;
        this.o.timers.clearTimeout(tx.timer);
        this.stateTx.delete(txId);
        if (failures.length === 0) {
          for (const u of members) if (u !== this.o.uuid) this.sendTo(u, message('stateCommit', { txId, state: STATE_CODES[target] }));
          // This member commits at once, so the caller sees the new state when the promise resolves.
          this.onMessage(this.self, message('stateCommit', { txId, state: STATE_CODES[target] }));
          resolve('changed');
        } else {
          for (const u of members) this.sendTo(u, message('stateRollback', { txId }));
          reject(new GridError('ERR_CLUSTER_STATE_CONFLICT', `cluster state not changed: ${failures.join('; ')}`));
        }
      };
      const timer = this.o.timers.setTimeout(() => {
        const tx = this.stateTx.get(txId);
        if (tx !== undefined) finish([...tx.failures, ...[...tx.waiting].map((u) => `${u} did not answer the lock`)]);
      }, 10_000);
      this.stateTx.set(txId, { waiting: new Set(members), failures: [], done: finish, timer });
      const lock = message('stateLock', { txId, state: STATE_CODES[target], membersVersion: this.membership.version, tableVersion: this.partitions.table.version, leaseMs: this.t.stateLeaseMs });
      for (const u of members) this.sendTo(u, lock);
    });
  }

  /**
   * clusterShutdown: every other member is told to stop, again every SHUTDOWN_RESEND_MS until it
   * acknowledges, for at most `waitMs`. From now on nothing is promoted or migrated here (members are
   * expected to go). Resolves with the addresses of the members that did not acknowledge.
   */
  shutdownOthers(reason: string, waitMs: number): Promise<string[]> {
    this.clusterStopping = true;
    this.saveMetadata();
    const others = new Map(this.membership.list.filter((m) => m.uuid !== this.o.uuid).map((m) => [m.uuid, addressOf(m)]));
    const callId = this.nextTx++;
    const deadline = this.o.clock.monotonicMs() + waitMs;
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const done = (): void => {
        if (timer !== null) this.o.timers.clearTimeout(timer);
        this.clusterShutdownAcks = null;
        resolve([...others.values()]);
      };
      this.clusterShutdownAcks = (uuid, id) => {
        if (id !== callId || !others.delete(uuid)) return;
        if (others.size === 0) done();
      };
      const send = (): void => {
        if (others.size === 0 || this.o.clock.monotonicMs() >= deadline) {
          done();
          return;
        }
        for (const address of others.values()) this.o.transport.send(address, message('shutdownMember', { reason }, callId));
        timer = this.o.timers.setTimeout(send, SHUTDOWN_RESEND_MS);
      };
      send();
    });
  }

  /** Sends a new tcp-ip member list to every other member (each applies it; see onMemberListSet). */
  broadcastMemberList(members: readonly string[]): void {
    for (const m of this.membership.list) if (m.uuid !== this.o.uuid) this.sendTo(m.uuid, message('memberListSet', { members: [...members] }));
  }

  /** Whether this member has joined a cluster since it started (node state STARTING until then). */
  get hasJoined(): boolean {
    return this.joinedOnce;
  }

  // ── graceful leave ───────────────────────────────────────────────────────────────────────────

  /** Moves every replica this member holds to others (through the master), bounded by maxWaitMs. */
  leaveGracefully(maxWaitMs: number): Promise<void> {
    const others = this.membership.list.filter((m) => m.uuid !== this.o.uuid && !m.lite);
    if (!this.membership.joined || others.length === 0 || this.o.config.liteMember || this.clusterStopping) return Promise.resolve();
    const forbidden = this.handOffForbidden();
    if (forbidden !== null) {
      this.log.warning(`${forbidden}: leaving without handing replicas off`);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.leave = { resolve, timer: null, deadlineMs: this.o.clock.monotonicMs() + maxWaitMs };
      const ask = (): void => {
        const l = this.leave;
        if (l === null) return;
        if (this.o.clock.monotonicMs() >= l.deadlineMs) {
          this.log.warning(`graceful shutdown: replicas not handed off within ${maxWaitMs} ms; leaving anyway`);
          this.finishLeave();
          return;
        }
        const master = this.membership.master;
        if (master !== null) {
          if (master.uuid === this.o.uuid) this.partitions.requestLeave(this.o.uuid);
          else this.sendTo(master.uuid, message('shutdownRequest', { uuid: this.o.uuid }));
        }
        l.timer = this.o.timers.setTimeout(ask, 1000);
      };
      ask();
    });
  }

  /**
   * Why a leaving member cannot hand its replicas off now (the cluster state forbids migrations), or
   * null. Its partitions then go to their backups (NO_MIGRATION) or stay assigned to it and are
   * unavailable until the state allows promotions again (FROZEN, PASSIVE), as the reference does.
   */
  handOffForbidden(): string | null {
    if (!this.membership.joined || this.o.config.liteMember) return null;
    if (this.state === 'ACTIVE') return null;
    const after = this.state === 'NO_MIGRATION' ? 'its partitions go to their backups, which get no new backups until the cluster is ACTIVE' : 'its partitions stay assigned to it and are unavailable until the cluster is ACTIVE or NO_MIGRATION';
    return `the cluster state ${this.state} forbids migrations; ${after}`;
  }

  private finishLeave(): void {
    const l = this.leave;
    if (l === null) return;
    this.leave = null;
    if (l.timer !== null) this.o.timers.clearTimeout(l.timer);
    l.resolve();
  }

  /**
   * A leaving member holds nothing any more. It stays in the member list, serving (forwarding) the
   * calls its clients still send it, until it says `departing` (depart(): its clients hold the table
   * without it by then), or at the latest DEPART_WAIT_MS from now. Removed at once, its clients
   * would close their connections to it with calls on them: those calls fail, and a call the Node
   * client was waiting to retry is still sent once its wait is over, after the caller's later
   * writes (docs/cluster.md "Graceful shutdown").
   */
  private onMemberDrained(uuid: string): void {
    if (uuid === this.o.uuid) {
      if (this.leave === null) return;
      this.log.info('every replica handed off');
      this.handedOff = true;
      this.finishLeave();
      return;
    }
    this.sendTo(uuid, message('shutdownAllowed', { uuid }));
    if (this.departing.has(uuid)) return;
    this.departing.set(
      uuid,
      this.o.timers.setTimeout(() => {
        this.departing.delete(uuid);
        if (!this.membership.isMaster || !this.membership.isMember(uuid)) return;
        this.log.info(`member ${uuid} handed its replicas off and did not depart within ${DEPART_WAIT_MS} ms: removing it`);
        this.removeDeparted(uuid);
      }, DEPART_WAIT_MS),
    );
  }

  private removeDeparted(uuid: string): void {
    const timer = this.departing.get(uuid);
    if (timer !== undefined) this.o.timers.clearTimeout(timer);
    this.departing.delete(uuid);
    this.membership.memberDeparted(uuid);
  }

  /**
   * The leaving member, its replicas handed off and its clients gone elsewhere, leaves the member
   * list: the master removes it (`departing`), or, as the master, it hands mastership over. Nothing
   * when the hand-off did not finish (the member stops, and the others notice it is gone).
   */
  depart(): void {
    if (!this.handedOff) return;
    this.handedOff = false;
    if (!this.membership.joined) return;
    if (this.membership.isMaster) {
      this.log.info('handing mastership over');
      this.membership.handOverAndLeave();
      return;
    }
    const master = this.membership.master;
    if (master !== null) this.sendTo(master.uuid, message('departing', { uuid: this.o.uuid }));
  }

  /** Whether this leaving member handed every replica off (depart() is next). */
  get replicasHandedOff(): boolean {
    return this.handedOff;
  }

  // ── information ──────────────────────────────────────────────────────────────────────────────

  /** Replicas in the table below the wanted count, locally receiving data, writes awaiting acks, or data still to hand back after a split. */
  isSafe(): boolean {
    if (!this.membership.joined || this.partitions.migrationQueueSize > 0 || this.partitions.activeMigrations > 0 || this.replicator.syncing || this.replicator.staleCount > 0) return false;
    // Data handed back after a split may be its only copy until the hand-back is done: stopping
    // this member now would lose it.
    if (this.replay.pending > 0 || this.replay.inFlight > 0) return false;
    const dataMembers = this.membership.list.filter((m) => !m.lite).length;
    const wanted = Math.min(this.width, dataMembers);
    const t = this.partitions.table;
    if (dataMembers > 0 && !t.isAssigned) return false;
    for (const r of t.replicas) {
      let n = 0;
      for (const u of r) if (u !== null && this.membership.isMember(u)) n++;
      if (dataMembers > 0 && n < wanted) return false;
    }
    return true;
  }

  metrics(): Record<string, number> {
    return {
      clusterSize: this.membership.list.length,
      membersVersion: this.membership.version,
      partitionTableVersion: this.partitions.table.version,
      migrationQueueSize: this.partitions.migrationQueueSize,
      migrationsActive: this.partitions.activeMigrations,
      ...prefixed('replication', this.replicator.counters),
      ...prefixed('migration', this.partitions.counters),
      ...prefixed('invocation', this.invoker.counters),
      ...prefixed('membership', this.membership.counters),
      pendingBackupAcks: this.replicator.pendingAckCount,
      ...prefixed('merge', this.mergeCounters),
      // Zero without persistence, so dashboards and the JSON keys are the same on every member.
      ...(this.persistence?.metrics() ?? NO_PERSISTENCE_METRICS),
      persistenceRecovering: this.recovering ? 1 : 0,
    };
  }

  /** owned[p]: this member owns partition p in the table it holds now. */
  ownedFlags(): boolean[] {
    const t = this.partitions.table;
    const out = new Array<boolean>(t.partitionCount);
    for (let p = 0; p < t.partitionCount; p++) out[p] = t.owner(p) === this.o.uuid;
    return out;
  }

  /** Count of partitions this member owns. */
  ownedPartitions(): number {
    let n = 0;
    const t = this.partitions.table;
    for (let p = 0; p < t.partitionCount; p++) if (t.owner(p) === this.o.uuid) n++;
    return n;
  }
}

function prefixed(prefix: string, counters: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counters)) out[`${prefix}${k[0]?.toUpperCase() ?? ''}${k.slice(1)}`] = v;
  return out;
}

/** Replica slots per partition: 1 + the largest backup-count + async-backup-count of any map or queue. */
export function replicaWidth(c: Config): number {
  let backups = 0;
  for (const m of c.maps) backups = Math.max(backups, m.backupCount + m.asyncBackupCount);
  for (const q of c.queues) backups = Math.max(backups, q.backupCount + q.asyncBackupCount);
  return Math.min(REPLICA_WIDTH_MAX, 1 + backups);
}

/** The answer to data calls while a whole-cluster recovery runs (cluster.md "Persistence"). */
function recoveringError(): GridError {
  return new GridError('ERR_DATA_RECOVERING', 'recovery in progress', { retryAfterSeconds: 5 });
}
