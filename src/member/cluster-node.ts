// One member's cluster machinery, wired: the composition root. It builds the cores (membership, the
// replica store, replication, migration, invocation) and the services (the owner side of data
// calls, WAN, the cluster-state change, the graceful leave, cluster-wide commands, whole-cluster
// recovery, hot backup, the hand-back after a split), passes each the narrow view of the others it
// needs, registers them in the service table (cluster/service.ts) and routes every inbound message
// from that table. It implements no capability itself: what a member does is in the service rooms.
//
// Everything reaches the world through the injected Transport, Clock and Timers, so the same code
// runs as a real process (runtime/) and inside the deterministic simulation (tests/sim/).
import { resolveMapConfig, resolveQueueConfig } from '../config/match.js';
import type { Message, MessageOf, OpWire } from '../cluster/messages.js';
import { Membership, addressOf } from '../cluster/membership.js';
import { ServiceTable, type MemberContext } from '../cluster/service.js';
import { STATE_CODES } from '../cluster/cluster-state.js';
import type { Peer, Transport, TransportHandler } from '../cluster/transport.js';
import { ReplicaStore } from '../data/replica-store.js';
import { queueConfigName } from '../data/queue-service.js';
import { Invoker, type LocalResult } from '../invocation/invoker.js';
import { PartitionService, tablesMadeWithEveryone } from '../replication/partition-service.js';
import { Replicator } from '../replication/replicator.js';
import type { TimerHandle } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import { WanService } from '../wan/wan-service.js';
import { MAP_KEY_BYTES_MAX_DEFAULT, MAP_VALUE_BYTES_MAX_DEFAULT } from '../data/map-service.js';
import { NodePersistence } from '../persistence/node-persistence.js';
import { OwnerOps } from '../operations/owner-ops.js';
import { StateChange } from '../lifecycle/state-change.js';
import { Leave } from '../lifecycle/leave.js';
import { ClusterCommands } from '../lifecycle/cluster-commands.js';
import { ClusterRecovery, recoveringError } from '../recovery/cluster-recovery.js';
import { HotBackup } from '../recovery/hot-backup.js';
import { MetadataKeeper } from '../recovery/metadata-keeper.js';
import { HandBack } from '../merge/hand-back.js';
import { CpService } from '../cp/cp-service.js';
import { CpApi } from '../cp/cp-api.js';
import { CpPersistence } from '../cp/cp-persistence.js';
import { EventRing } from '../console/event-ring.js';
import { ViewsService } from '../console/views-service.js';
import { memberPart } from '../console/member-part.js';
import { EVENTS_LIMIT_MAX } from '../console/event-ring.js';
import type { PartitionsPart } from '../console/cluster-views.js';

/** The largest ready batch a CP group writes at once (appends of up to 100 entries of a value each): a torn tail is at most this. */
const CP_BATCH_BYTES_MAX = 64 * 1024 * 1024;
import { DEFAULT_TIMINGS, type ClusterNodeOptions, type ClusterTimings } from './node-options.js';
import { isSafe, nodeMetrics, ownedFlags, replicaWidth } from './node-figures.js';

export { DEPART_WAIT_MS } from '../lifecycle/leave.js';
export { DEFAULT_TIMINGS, type ClusterNodeOptions, type ClusterTimings } from './node-options.js';
export { replicaWidth } from './node-figures.js';

const EMPTY = Buffer.alloc(0);

/** The metadata file is rewritten at least this often while the member runs (its last-alive time). */
const METADATA_REFRESH_MS = 1000;

/** A transport that sends nothing (a member given no way to reach other clusters). */
const NO_WAN_TRANSPORT: Transport = { send: () => false, disconnect: () => {}, connectionCount: () => 0 };

export class ClusterNode implements TransportHandler {
  readonly store: ReplicaStore;
  readonly membership: Membership;
  readonly replicator: Replicator;
  readonly partitions: PartitionService;
  readonly invoker: Invoker;
  readonly wan: WanService;
  /** The owner side of data calls. */
  readonly ops: OwnerOps;
  readonly stateChange: StateChange;
  readonly leave: Leave;
  readonly commands: ClusterCommands;
  readonly recovery: ClusterRecovery;
  readonly hotBackup: HotBackup;
  readonly handBack: HandBack;
  readonly metadata: MetadataKeeper;
  /** The CP subsystem on this member (idle while `cp-member-count` is 0), and its calls. */
  readonly cp: CpService;
  readonly cpApi: CpApi;
  /** This member's part of the cluster's event timeline (spec/console.md). */
  readonly events: EventRing;
  /** Cluster-wide views gathered by this member (spec/console.md "The views it reads"). */
  readonly views: ViewsService;
  /** The persistence of this member, or null when `<persistence>` is off. */
  readonly persistence: NodePersistence | null;
  /** Who owns which message kind, and who hears which membership event, in which order. */
  readonly services = new ServiceTable();
  private readonly log: ComponentLogger;
  private readonly t: ClusterTimings;
  private readonly self: Peer;
  private readonly width: number;
  private stopped = false;
  /** Joined a cluster at least once (node state STARTING until then). */
  private joinedOnce = false;
  /** Left its cluster since the last view (the next view is a rejoin). */
  private leftSinceView = false;
  private lastMaster: string | null = null;
  private metadataTimer: TimerHandle | null = null;

  constructor(private readonly o: ClusterNodeOptions) {
    const c = o.config;
    const self = o.uuid;
    this.t = { ...DEFAULT_TIMINGS, ...o.timings };
    this.log = o.logger.component('cluster');
    this.events = new EventRing(self, o.clock);
    this.width = replicaWidth(c);
    this.store = new ReplicaStore({
      partitionCount: c.properties.partitionCount,
      resolveMapConfig: (name) => resolveMapConfig(c.maps, name),
      resolveQueueConfig: (name) => resolveQueueConfig(c.queues, queueConfigName(name)),
      random: o.random,
      waitersMax: c.properties.queueWaitersMax,
    });
    this.persistence = o.persistence === undefined ? null : new NodePersistence(o.persistence, c, this.store, o.clock, o.logger.component('persistence'));
    const selfWire = { uuid: self, host: '127.0.0.1', port: 5701, lite: c.liteMember, version: o.memberVersion };
    this.self = { uuid: self, address: addressOf(selfWire) };
    const ctx: MemberContext = {
      selfUuid: self,
      joined: () => this.membership.joined,
      isMaster: () => this.membership.isMaster,
      isMember: (u) => this.membership.isMember(u),
      masterUuid: () => this.membership.master?.uuid ?? null,
      memberUuids: () => (this.membership.joined ? this.membership.list.map((m) => m.uuid) : [self]),
      addressOf: (u) => this.membership.addressOfUuid(u),
      send: (u, m) => this.sendTo(u, m),
    };
    const { isMember, masterUuid, memberUuids, send } = ctx;
    const saveMetadata = (): void => this.metadata.save();
    const stopping = (): boolean => this.commands.stopping;
    this.stateChange = new StateChange(
      {
        ...ctx,
        membersVersion: () => this.membership.version,
        tableVersion: () => this.partitions.table.version,
        activeMigrations: () => this.partitions.activeMigrations,
        onChanged: (s) => {
          // Members that left in FROZEN or PASSIVE kept their partitions; now their backups take over.
          this.partitions.promoteDeparted();
          if (this.membership.isMaster) this.events.record('state-changed', `the cluster state is ${s} (a two-phase change committed on every member)`);
          this.services.emit('stateChanged', s);
        },
      },
      this.t.stateLeaseMs,
      o.clock,
      o.timers,
      this.log,
    );
    this.commands = new ClusterCommands({ ...ctx, saveMetadata, onShutdownRequested: o.onShutdownRequested, onMemberListSet: o.onMemberListSet }, o.transport, o.clock, o.timers);
    this.recovery = new ClusterRecovery(
      {
        ...ctx,
        config: c,
        events: this.events,
        table: () => this.partitions.table,
        restoreTable: (table) => this.partitions.restore(table),
        state: () => this.stateChange.state,
        setState: (s, by) => this.stateChange.set(s, by),
        holdState: (s) => this.stateChange.restore(s),
        promoteDeparted: () => this.partitions.promoteDeparted(),
        jumpVersion: (p) => this.store.jumpVersion(p),
        saveMetadata,
        stopped: () => this.stopped,
        startOver: (reason) => (o.onStartOver ?? o.onShutdownRequested)(reason),
        staleStop: (reason) => (o.onStaleStop ?? o.onShutdownRequested)(reason),
      },
      this.persistence,
      o.clock,
      this.log,
    );
    this.metadata = new MetadataKeeper(
      {
        selfUuid: self,
        clusterName: c.clusterName,
        memberVersion: o.memberVersion,
        partitionCount: c.properties.partitionCount,
        selfAddress: () => addressOf(this.membership.self),
        members: () => (this.membership.joined ? this.membership.list.map((m) => ({ uuid: m.uuid, address: addressOf(m) })) : [{ uuid: self, address: addressOf(this.membership.self) }]),
        membersVersion: () => this.membership.version,
        tableWire: () => this.partitions.tableWire(),
        state: () => this.stateChange.state,
        stateBeforePassive: () => this.stateChange.stateBeforePassive,
        clusterStopping: stopping,
        resumeState: () => this.recovery.resumeState,
        backupSeq: () => this.hotBackup.seq,
      },
      this.persistence,
      o.clock,
    );
    this.hotBackup = new HotBackup({ ...ctx, recovering: () => this.recovery.active, metadataNow: () => this.metadata.now(), saveMetadata }, this.persistence, o.clock, o.timers, this.log);
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
        events: this.events,
        tableWire: () => this.partitions.tableWire(),
        migrationQueue: () => this.partitions.migrationQueueSize,
        clusterStateCode: () => STATE_CODES[this.stateChange.state],
        joinRefusal: (joiner) => this.joinRefusal(joiner.uuid),
        onView: (view, previous) => this.onView(view, previous),
        onMembersRemoved: (removed) => this.partitions.onMembersRemoved(removed),
        onClaimed: (views) => {
          this.partitions.adoptNewest(tablesMadeWithEveryone(views));
          // The newest table may still name members that left before the claim.
          this.partitions.promoteDeparted();
        },
        onLeftCluster: (reason) => {
          this.leftSinceView = true;
        this.lastMaster = null;
          this.services.emit('leftCluster', reason);
        },
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
        selfUuid: self,
        addressOf: (u) => this.membership.addressOfUuid(u),
        isMember,
        replicas: (p) => this.partitions.table.replicas[p] ?? [],
        syncBackups: (kind, name) => (kind === 'map' ? resolveMapConfig(c.maps, name) : resolveQueueConfig(c.queues, queueConfigName(name))).backupCount,
        onBackupsSettled: (p) => this.partitions.onBackupsSettled(p),
        onPartitionImported: (p) => this.partitions.onPartitionImported(p),
        ...(this.persistence === null ? {} : { whenPersisted: (sendAck: () => void) => this.persistence?.whenPersisted(sendAck) }),
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
        selfUuid: self,
        isMaster: () => this.membership.isMaster,
        masterUuid,
        claimPending: () => this.membership.claims.claimPending(o.clock.monotonicMs()),
        events: this.events,
        membersVersion: () => this.membership.version,
        heardFrom: (u) => this.membership.heardFrom(u),
        dataMembers: () => this.membership.list.filter((m) => !m.lite).map((m) => m.uuid),
        isMember,
        send,
        migrationAllowed: () => this.stateChange.state === 'ACTIVE' && !this.stateChange.isLocked() && !stopping() && !this.recovery.active,
        promotionAllowed: () => (this.stateChange.state === 'ACTIVE' || this.stateChange.state === 'NO_MIGRATION') && !stopping() && !this.recovery.active,
        publishTable: () => this.membership.publishTable(),
        onTableApplied: (changed) => this.onTableApplied(changed),
        onMemberDrained: (u) => this.leave.onMemberDrained(u),
      },
      this.store,
      this.replicator,
      o.clock,
      o.timers,
      o.logger.component('migration'),
    );
    const wan = new WanService({
      config: c,
      clock: o.clock,
      timers: o.timers,
      log: o.logger.component('wan'),
      newUuid: o.newUuid,
      events: this.events,
      openTransport: o.openWanTransport ?? (() => NO_WAN_TRANSPORT),
      keyBytesMax: MAP_KEY_BYTES_MAX_DEFAULT,
      valueBytesMax: MAP_VALUE_BYTES_MAX_DEFAULT,
    });
    this.wan = wan;
    this.ops = new OwnerOps({
      selfUuid: self,
      store: this.store,
      membership: this.membership,
      partitions: this.partitions,
      replicator: this.replicator,
      wan,
      recovery: this.recovery,
      persistence: this.persistence,
      transport: o.transport,
      clock: o.clock,
      timers: o.timers,
      recoveringError,
      stopped: () => this.stopped,
    });
    this.invoker = new Invoker(
      { attemptTimeoutMs: this.t.attemptTimeoutMs, retryDelayMinMs: 20, retryDelayMaxMs: 500 },
      {
        selfUuid: self,
        ownerOf: (p) => (this.membership.joined ? this.partitions.table.owner(p) : null),
        addressOf: (u) => this.membership.addressOfUuid(u),
        runLocal: (p, op, cb, hook) => this.ops.runLocal(p, op, cb, hook),
        refusal: (p, owner) => this.refusal(p, owner),
      },
      o.transport,
      o.clock,
      o.timers,
    );
    wan.selfId = self;
    wan.replyTo = (peer, m) => o.transport.send(peer.address, m);
    wan.attach({
      store: this.store,
      clusterName: c.clusterName,
      clusterId: () => this.membership.id,
      joined: () => this.membership.joined,
      isOwner: (p) => this.membership.joined && this.partitions.table.owner(p) === self,
      ownerOf: (p) => (this.membership.joined ? this.partitions.table.owner(p) : null),
      backupsOf: (p) => (this.partitions.table.replicas[p] ?? []).filter((u): u is string => u !== null && u !== self),
      memberUuids,
      isMember,
      sendTo: send,
      invoke: (p, op, cb) => {
        this.invoker.invoke(p, op, c.properties.operationCallTimeoutMs, cb);
      },
      targetRefusal: () => {
        if (!this.membership.joined) return 'the receiving member has not joined its cluster';
        if (this.stateChange.state === 'PASSIVE' || stopping()) return 'the target cluster is PASSIVE';
        return null;
      },
    });
    this.leave = new Leave(
      {
        ...ctx,
        liteMember: c.liteMember,
        otherDataMembers: () => this.membership.list.filter((m) => m.uuid !== self && !m.lite).length,
        state: () => this.stateChange.state,
        clusterStopping: stopping,
        requestLeave: (u) => this.partitions.requestLeave(u),
        memberDeparted: (u) => this.membership.memberDeparted(u),
        handOverAndLeave: () => this.membership.handOverAndLeave(),
      },
      o.clock,
      o.timers,
      this.log,
    );
    this.handBack = new HandBack(
      {
        ...ctx,
        config: c,
        store: this.store,
        replicas: () => this.partitions.table.replicas,
        takeUnconfirmed: () => this.replicator.reset(),
        dropOwnership: () => {
          this.partitions.reset();
          this.ops.retryAll();
        },
        tableAssigned: () => this.partitions.table.isAssigned,
        stopped: () => this.stopped,
        invoke: (p, op, timeoutMs, cb) => void this.invoker.invoke(p, op, timeoutMs, cb),
      },
      o.clock,
      o.timers,
      this.log,
    );
    this.cp = new CpService(
      {
        ...ctx,
        selfAddress: () => addressOf(this.membership.self),
        isLite: () => c.liteMember,
        dataMembers: () => (this.membership.joined ? this.membership.list.filter((m) => !m.lite).map((m) => ({ uuid: m.uuid, address: addressOf(m) })) : []),
        sendToAddress: (address, m) => {
          if (address === this.self.address) this.o.timers.setTimeout(() => this.onMessage(this.self, m), 0);
          else o.transport.send(address, m);
        },
      },
      {
        config: c.cpSubsystem,
        callTimeoutMs: c.properties.cpCallTimeoutMs,
        dedupeMs: c.properties.cpInvocationDedupeSeconds * 1000,
        rebalanceMs: c.properties.cpLeadershipRebalanceSeconds * 1000,
        valueBytesMax: MAP_VALUE_BYTES_MAX_DEFAULT,
        clock: o.clock,
        timers: o.timers,
        defer: o.defer ?? ((fn) => void o.timers.setTimeout(fn, 0)),
        random: o.random,
        newUuid: o.newUuid,
        log: o.logger.component('cp'),
        events: this.events,
        persistence:
          o.cpPersistence === undefined
            ? null
            : new CpPersistence(o.cpPersistence.disk, o.cpPersistence.baseDir, () => addressOf(this.membership.self), { batchBytesMax: CP_BATCH_BYTES_MAX, dataBytesMax: MAP_VALUE_BYTES_MAX_DEFAULT + 4096 }),
      },
    );
    this.cpApi = new CpApi(this.cp, {
      isMaster: () => this.membership.isMaster,
      masterAddress: () => (this.membership.master === null ? null : addressOf(this.membership.master)),
      isLite: () => c.liteMember,
    });
    this.views = new ViewsService({ selfUuid: self, memberUuids, send }, o.timers, {
      events: (q) => {
        const { since, limit } = q as { since?: unknown; limit?: unknown };
        return this.events.list(typeof since === 'string' ? since : null, Math.min(EVENTS_LIMIT_MAX, Number(limit) || EVENTS_LIMIT_MAX));
      },
      // Only the master's table is used (it knows the migrations): the others answer null, not theirs.
      partitions: () => (this.membership.isMaster ? ownPartitions() : null),
    });
    const ownPartitions = (): PartitionsPart => {
      const t = this.partitions.table;
      const master = this.membership.isMaster;
      return { master, version: t.version, replicas: t.replicas, migrating: master ? this.partitions.migratingPartitions : [], planned: this.partitions.migrationQueueSize, completed: this.partitions.counters.migrationsCommitted };
    };
    this.views.register('ownPartitions', ownPartitions);
    const startedMs = o.clock.monotonicMs();
    this.views.register('member', () =>
      memberPart({
        uuid: self,
        master: this.membership.isMaster,
        lite: c.liteMember,
        cpMember: this.cp.localCpUuid !== null,
        version: o.memberVersion,
        uptimeMs: o.clock.monotonicMs() - startedMs,
        replicas: this.partitions.table.replicas,
        members: memberUuids(),
        lastHeard: this.membership.lastHeard,
        nowMs: o.clock.monotonicMs(),
        figures: o.memberFigures?.() ?? { member: addressOf(this.membership.self), nodeState: 'ACTIVE', clusterState: this.stateChange.state, flat: {} },
        migrationsInProgress: this.partitions.activeMigrations,
      }),
    );
    this.registerServices();
  }

  /**
   * The routing table, in the order events reach the services: the master's table is adopted before
   * its state; a backup stops waiting for a member before calls to it are retried; the migration
   * service plans before a recovery reports, the metadata is saved, and the hand-back goes out.
   */
  private registerServices(): void {
    const s = this.services;
    s.register(this.membership);
    s.register(this.partitions);
    s.register(this.stateChange);
    s.register(this.hotBackup);
    s.register(this.invoker);
    s.register(this.replicator);
    s.register(this.wan);
    s.register(this.ops);
    s.register(this.leave);
    s.register(this.commands);
    s.register(this.recovery);
    s.register(this.metadata);
    s.register(this.handBack);
    s.register(this.cp);
    s.register(this.views);
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
    this.cp.start();
    if (this.persistence !== null) {
      const refresh = (): void => {
        this.metadata.save();
        this.recovery.tick();
        this.persistence?.tick((fn) => void this.o.timers.setTimeout(fn, 0));
        this.metadataTimer = this.o.timers.setTimeout(refresh, METADATA_REFRESH_MS);
      };
      refresh();
    }
  }

  setJoinAddresses(addresses: readonly string[]): void {
    this.membership.setJoinAddresses(addresses);
  }

  stop(): void {
    this.stopped = true;
    if (this.metadataTimer !== null) this.o.timers.clearTimeout(this.metadataTimer);
    if (this.persistence !== null) {
      this.metadata.save();
      this.persistence.close();
    }
    this.membership.stop();
    this.replicator.stop();
    this.partitions.stop();
    this.wan.stop();
    this.leave.stop();
    this.invoker.failAll();
    this.ops.stop();
    this.cp.stop();
  }

  get uuid(): string {
    return this.o.uuid;
  }

  /** Whether this member has joined a cluster since it started (node state STARTING until then). */
  get hasJoined(): boolean {
    return this.joinedOnce;
  }

  // ── transport ────────────────────────────────────────────────────────────────────────────────

  onMessage(from: Peer, m: Message): void {
    if (this.stopped) return;
    this.services.route(from, m);
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

  /** A view was adopted: its events go to the services in the order cluster/service.ts gives. */
  private onView(view: MessageOf<'membersView'>['body'], previous: readonly { uuid: string }[]): void {
    this.joinedOnce = true;
    const s = this.services;
    if (!this.membership.isMaster) s.emit('viewFromMaster', view);
    const now = new Set(view.members.map((m) => m.uuid));
    const before = new Set(previous.map((m) => m.uuid));
    const removed = previous.filter((m) => !now.has(m.uuid)).map((m) => m.uuid);
    const added = view.members.filter((m) => !before.has(m.uuid)).map((m) => m.uuid);
    for (const u of removed) s.emit('memberRemoved', u);
    for (const u of added) s.emit('memberAdded', u);
    const changed = removed.length > 0 || previous.length !== view.members.length;
    if (changed) this.log.info(this.membership.membersLine());
    const master = this.membership.master?.uuid ?? null;
    if (master !== null && master !== this.lastMaster) {
      this.lastMaster = master;
      s.emit('masterChanged', master);
    }
    if (this.leftSinceView) {
      this.leftSinceView = false;
      s.emit('rejoined');
    }
    s.emit('membersChanged', { view, added, removed, changed });
  }

  private joinRefusal(joinerUuid: string): string | null {
    const state = this.stateChange.state;
    if (this.stateChange.isLocked()) return 'the cluster state is changing (IN_TRANSITION)';
    // FROZEN and PASSIVE admit only members that left during them: their partitions stayed
    // assigned, so the table still names them (with persistence they come back with their UUID).
    if ((state === 'FROZEN' || state === 'PASSIVE') && !this.partitions.table.members().has(joinerUuid)) return `the cluster is ${state}: no new members are admitted`;
    return null;
  }

  private onTableApplied(changed: readonly number[]): void {
    this.wan.onTableApplied(changed);
    this.metadata.tableApplied();
    this.ops.onTableApplied(changed);
  }

  /**
   * A call for a partition whose owner left while the cluster state forbids promotions (FROZEN,
   * PASSIVE): refused at once instead of retried until the call timeout.
   */
  private refusal(partitionId: number, owner: string): GridError | null {
    if (this.membership.isMember(owner) || !this.membership.joined) return null;
    const state = this.stateChange.state;
    if (state !== 'FROZEN' && state !== 'PASSIVE' && !this.commands.stopping) return null;
    return new GridError('ERR_CLUSTER_UNAVAILABLE', `partition ${partitionId} is unavailable: its owner left while the cluster is ${state}; it comes back when the cluster state is ACTIVE or NO_MIGRATION`, { retryAfterSeconds: 5 });
  }

  // ── the calls the member's API makes (local-member.ts) ───────────────────────────────────────

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

  // ── information (node-figures.ts) ────────────────────────────────────────────────────────────

  /** Cluster-safe here (node-figures.ts). */
  isSafe(): boolean {
    return isSafe(this, this.width);
  }

  metrics(): Record<string, number> {
    return nodeMetrics(this);
  }

  /** owned[p]: this member owns partition p in the table it holds now. */
  ownedFlags(): boolean[] {
    return ownedFlags(this, this.o.uuid);
  }

  /** Count of partitions this member owns. */
  ownedPartitions(): number {
    return this.ownedFlags().filter((x) => x).length;
  }
}
