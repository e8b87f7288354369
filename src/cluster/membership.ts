// Membership: join, the member list, heartbeats, failure detection and mastership. A pure core: time
// comes from the Clock, timers from Timers, the network is the Transport; the host (the member's
// cluster node) owns the partition table and reacts to view changes.
//
// Rules (cluster.md "Join and membership"):
// - The master is the oldest member: members[0]. Only it changes the list; every change bumps the
//   members version and is published as a whole view (members + partition table + state).
// - A member applies a view only from the member it considers master (or, while joining, from any
//   master that lists it), and only when the view is newer than its own.
// - Joiners are admitted in batches: the batch closes joinBatchQuietMs after the last joiner, at
//   most joinBatchMaxMs after the first.
// - No master answering: a member that found no master and no lower (address, uuid) among the
//   members it can reach claims mastership of a cluster of one; others then join it. A member of a
//   cluster that answered (even "ask the master", or a refusal) means a cluster exists: the joiner
//   keeps asking and never founds its own (cluster.md: an address that answers never counts as
//   absent).
// - A restart: a new uuid at the address of a listed member is a new incarnation. The master removes
//   the old one at once; a member whose master restarted suspects the old master at once (its
//   process is gone), so the mastership claim starts without waiting for the heartbeat timeout.
// - Heartbeats every heartbeatIntervalMs on the monotonic clock; silence for maxNoHeartbeatMs makes
//   a member suspected. Refused reconnects suspect sooner (connection-monitor.ts): when the
//   connection to a member closes it is dialled every connectionMonitorIntervalMs, and
//   connectionMonitorMaxFaults refused dials (ECONNREFUSED: its process is gone) suspect it. A
//   non-master only tells the master (memberSuspected); the master removes a member on its own
//   evidence alone (its own refused dials, or the heartbeat timeout), so one member's local trouble
//   never removes another. The master removes suspects at once; when the master is suspected, the
//   oldest non-suspected member asks the others to accept it (claim) and takes over with those that
//   accept.
// - Split brain: the master probes every address it knows of (join addresses and every member it
//   has seen) that is not in its list, every mergeProbeIntervalMs (mergeProbe). It decides only on
//   an answer to its own latest probe of that address that came back within half an interval; a
//   probe it receives makes it probe back. When it meets the master of another cluster, the smaller side (fewer data members; tie: the younger cluster, then the
//   greater id) merges: its master tells its members to leave and join the other master, and
//   leaves too. The host replays the data it held into the larger cluster (ClusterNode).
import type { MemberWire, Message, MessageOf, TableWire, ViewWire } from './messages.js';
import { message } from './messages.js';
import { ConnectionMonitor } from './connection-monitor.js';
import type { Peer, Transport } from './transport.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

export interface MembershipOptions {
  readonly self: MemberWire;
  readonly joinAddresses: readonly string[];
  readonly heartbeatIntervalMs: number;
  readonly maxNoHeartbeatMs: number;
  /** grid.connection.monitor.interval: ms between re-dials of a member whose connection closed, and between counted refusals. */
  readonly connectionMonitorIntervalMs: number;
  /** grid.connection.monitor.max.faults: refused reconnects that suspect a member. */
  readonly connectionMonitorMaxFaults: number;
  /** Share of the interval two counted refusals are apart at least (tests; default in connection-monitor.ts). */
  readonly connectionMonitorFaultSpacingShare?: number;
  readonly joinBatchQuietMs: number;
  readonly joinBatchMaxMs: number;
  /** How long a member without a master keeps asking before it may claim mastership. */
  readonly claimAfterMs: number;
  /** How long a claimer waits for answers. */
  readonly claimTimeoutMs: number;
  /** Master re-publishes the view this often (lost updates heal). */
  readonly publishIntervalMs: number;
  /** The master probes for other clusters (split brain) this often. */
  readonly mergeProbeIntervalMs: number;
  readonly newClusterId: () => string;
}

/** Who a cluster is, as compared when two meet after a split brain. */
export interface ClusterInfo {
  readonly clusterId: string;
  readonly dataMembers: number;
  readonly foundedAtMs: number;
}

/**
 * Whether cluster `a` (master `aMaster`) merges into cluster `b`: fewer data members; tie: younger;
 * tie: greater id; tie (two halves of one cluster split apart, same id): greater master uuid.
 */
export function mergesInto(a: ClusterInfo, aMaster: string, b: ClusterInfo, bMaster: string): boolean {
  if (a.dataMembers !== b.dataMembers) return a.dataMembers < b.dataMembers;
  if (a.foundedAtMs !== b.foundedAtMs) return a.foundedAtMs > b.foundedAtMs;
  if (a.clusterId !== b.clusterId) return a.clusterId > b.clusterId;
  return aMaster > bMaster;
}

export interface MembershipHost {
  tableWire(): TableWire;
  migrationQueue(): number;
  clusterStateCode(): number;
  /** Refusal reason for a joiner (cluster state), or null to admit. */
  joinRefusal(joiner: MemberWire): string | null;
  /** A new view was applied (on every member, the master included). */
  onView(view: ViewWire, previous: readonly MemberWire[]): void;
  /** Master only: members were removed (crash, suspicion, departure); promote their replicas. */
  onMembersRemoved(removed: readonly string[]): void;
  /** Master only, after a claim: the views of the members that accepted, to rebuild the table. */
  onClaimed(views: readonly ViewWire[]): void;
  /** This member is not in the cluster any more (removed, or merging into another); it will rejoin. */
  onLeftCluster(reason: string, merging: boolean): void;
  /** This member became master of a cluster of one. */
  onFoundedCluster(): void;
}

interface Joiner {
  readonly member: MemberWire;
  readonly address: string;
}

export function addressOf(m: { host: string; port: number }): string {
  return `${m.host}:${m.port}`;
}

export class Membership {
  private members: MemberWire[] = [];
  private membersVersion = 0;
  private clusterId = '';
  private foundedAtMs = 0;
  /** Addresses of every member this one has seen: probed for split brains when not in the list. */
  private readonly seenAddresses = new Set<string>();
  private lastProbeMs = 0;
  /** Split-brain probes: the last round number, and per address the latest probe sent there and when (monotonic ms). */
  private probeId = 0;
  private readonly probesSent = new Map<string, { readonly id: number; readonly atMs: number }>();
  private joinedFlag = false;
  /** Left a cluster (and dropped its data) since it last joined one: said in join requests. */
  private resetSinceJoin = false;
  private readonly lastHeard = new Map<string, number>();
  /** Members that sent a heartbeat since they were admitted (they took the view that admitted them). */
  private readonly heardSinceAdmitted = new Set<string>();
  /** Listed members that asked this non-master to join after its master was suspected: since when. */
  private readonly askingToJoinSince = new Map<string, number>();
  private readonly suspects = new Set<string>();
  private readonly unjoinedPeers = new Map<string, { uuid: string; address: string; atMs: number }>();
  private readonly joiners = new Map<string, Joiner>();
  private batchFirstMs = 0;
  private batchLastMs = 0;
  private joinStartMs: number;
  private masterAddressHint: string | null = null;
  /** When a master last answered this (unjoined) member: no claim while one is known to exist. */
  private masterHeardAtMs = Number.NEGATIVE_INFINITY;
  /**
   * Not joined: the master that answered this member's join request with "you are in my batch"
   * since it last left a cluster. Only its views are adopted: a view that names this member but
   * was sent before this member asked to join (held in a partitioned connection, from the cluster
   * it was removed from) comes before that answer on the connection, and would make it a member
   * with a table its cluster no longer has (nemesis seed 102: 127.0.0.12, merging, took a view of
   * version 26 that 127.0.0.13 had sent before removing it, pumped its hand-back and retried its
   * forwarded calls against that table for 17 ms, until told it was not a member).
   */
  private admittingMaster: string | null = null;
  /** When a member of a cluster (any, master or not) last answered this unjoined member. */
  private clusterHeardAtMs = Number.NEGATIVE_INFINITY;
  /** The member whose mastership claim this one accepted last (its views are taken). */
  private acceptedClaimant: string | null = null;
  /** This member's table version when it accepted that claim (its answer carried that table). */
  private acceptedTableVersion = -1;
  private claim: { readonly answers: Map<string, ViewWire>; readonly asked: Set<string>; readonly startMs: number } | null = null;
  private readonly unreachable = new Map<string, number>();
  /** Refused reconnects per member (the second failure detector). */
  private readonly monitor: ConnectionMonitor;
  private monitorTimer: TimerHandle | null = null;
  private lastPublishMs = 0;
  private tickTimer: TimerHandle | null = null;
  /** When the last tick ran (monotonic), to notice this member's own stalls. */
  private lastTickMs: number | null = null;
  private stopped = false;
  private joinAddresses: string[];
  readonly counters = {
    viewsPublished: 0,
    membersRemoved: 0,
    claims: 0,
    merges: 0,
    /** Views naming this member, received while not joined, from a master that had not answered its join request since it left. */
    unaskedViews: 0,
    /** Split-brain probe answers ignored: to an earlier probe, or slower than half a probe interval. */
    staleProbeAnswers: 0,
    clustersFounded: 0,
    restartsDetected: 0,
    leftCluster: 0,
    /** Members this one suspected because their reconnects were refused. */
    refusalSuspicions: 0,
    /** Ticks that ran more than a heartbeat interval late (this member stood still). */
    stalls: 0,
  };

  constructor(
    private readonly opts: MembershipOptions,
    private readonly host: MembershipHost,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {
    this.joinStartMs = clock.monotonicMs();
    this.joinAddresses = opts.joinAddresses.filter((a) => a !== addressOf(opts.self));
    this.monitor = new ConnectionMonitor({
      intervalMs: opts.connectionMonitorIntervalMs,
      maxFaults: opts.connectionMonitorMaxFaults,
      ...(opts.connectionMonitorFaultSpacingShare === undefined ? {} : { faultSpacingShare: opts.connectionMonitorFaultSpacingShare }),
      // After the heartbeat timeout the other detector has decided anyway.
      watchMs: opts.maxNoHeartbeatMs,
    });
  }

  // ── queries ──────────────────────────────────────────────────────────────────────────────────

  get self(): MemberWire {
    return this.opts.self;
  }
  get joined(): boolean {
    return this.joinedFlag;
  }
  get list(): readonly MemberWire[] {
    return this.members;
  }
  get version(): number {
    return this.membersVersion;
  }
  get id(): string {
    return this.clusterId;
  }
  /** This member's cluster as compared in a split-brain merge ('' id when not joined). */
  get clusterInfo(): ClusterInfo {
    if (!this.joinedFlag) return { clusterId: '', dataMembers: 0, foundedAtMs: 0 };
    return { clusterId: this.clusterId, dataMembers: this.members.filter((m) => !m.lite).length, foundedAtMs: this.foundedAtMs };
  }
  get master(): MemberWire | null {
    return this.joinedFlag ? (this.members[0] ?? null) : null;
  }
  get isMaster(): boolean {
    return this.joinedFlag && this.members[0]?.uuid === this.opts.self.uuid;
  }
  member(uuid: string): MemberWire | undefined {
    return this.members.find((m) => m.uuid === uuid);
  }
  addressOfUuid(uuid: string): string | null {
    const m = this.member(uuid);
    return m === undefined ? null : addressOf(m);
  }
  isMember(uuid: string): boolean {
    return this.members.some((m) => m.uuid === uuid);
  }

  setJoinAddresses(addresses: readonly string[]): void {
    this.joinAddresses = addresses.filter((a) => a !== addressOf(this.opts.self));
  }

  /** A view for the wire with the host's table and state. */
  currentView(): ViewWire {
    return {
      clusterId: this.clusterId,
      foundedAtMs: this.foundedAtMs,
      membersVersion: this.membersVersion,
      members: this.members,
      table: this.host.tableWire(),
      clusterState: this.host.clusterStateCode(),
      migrationQueue: this.host.migrationQueue(),
    };
  }

  // ── life cycle ───────────────────────────────────────────────────────────────────────────────

  start(): void {
    if (this.joinAddresses.length === 0) this.found('no join addresses configured');
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    this.tickTimer = null;
    if (this.monitorTimer !== null) this.timers.clearTimeout(this.monitorTimer);
    this.monitorTimer = null;
    this.monitor.clear();
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.clock.monotonicMs();
    const stalled = this.noteStall(now);
    if (!this.joinedFlag) this.joinRound(now, stalled);
    else {
      this.sendHeartbeats();
      // Silence measured across this member's own stall is not the others' silence: what they sent
      // meanwhile is still unread (noteStall gave everyone a fresh window).
      if (!stalled) this.detectFailures(now);
      if (this.isMaster) {
        this.maybeCloseBatch(now);
        if (now - this.lastPublishMs >= this.opts.publishIntervalMs) this.publish();
        if (now - this.lastProbeMs >= this.opts.mergeProbeIntervalMs) this.probe(now);
      }
    }
    if (!stalled && this.claim !== null && now - this.claim.startMs >= this.opts.claimTimeoutMs) this.finishClaim();
    this.lastTickMs = now;
    this.tickTimer = this.timers.setTimeout(() => this.tick(), this.tickIntervalMs());
  }

  /**
   * Whether this tick ran more than a heartbeat interval late: the process itself stood still (a
   * long GC pause, SIGSTOP, a starved host). The messages that reached it meanwhile are not read
   * yet, so every timeout measured across the stall would blame the others for this member's own
   * silence: a master would remove every member and split the cluster in two; a joiner would found
   * a cluster of its own although the view admitting it is waiting in its inbox. On a stall the
   * member gives every member a fresh heartbeat window, restarts its join wait, and decides nothing
   * this tick; the next tick, a fraction of a second later, sees what arrived.
   */
  private noteStall(now: number): boolean {
    const last = this.lastTickMs;
    if (last === null || now - last <= this.tickIntervalMs() + this.opts.heartbeatIntervalMs) return false;
    this.counters.stalls++;
    this.log.warning(`this member stood still for ${Math.round(now - last)} ms (timers ran late: a GC pause, SIGSTOP or a starved host); silence during the stall is not held against other members`);
    for (const uuid of this.lastHeard.keys()) this.lastHeard.set(uuid, now);
    if (!this.joinedFlag) this.joinStartMs = now;
    return true;
  }

  private tickIntervalMs(): number {
    // Joining and batching want finer steps than heartbeats.
    return Math.min(this.opts.heartbeatIntervalMs, this.joinedFlag && this.joiners.size === 0 ? this.opts.heartbeatIntervalMs : 200);
  }

  // ── join (joiner side) ───────────────────────────────────────────────────────────────────────

  private joinRound(now: number, stalled: boolean): void {
    const request = message('joinRequest', { member: this.opts.self, cluster: this.clusterInfo, reset: this.resetSinceJoin });
    if (this.masterAddressHint !== null) this.transport.send(this.masterAddressHint, request);
    for (const a of this.joinAddresses) if (a !== this.masterAddressHint) this.transport.send(a, request);
    if (stalled) return;
    if (now - this.joinStartMs < this.opts.claimAfterMs && !this.allUnreachable(now)) return;
    // A master answered recently (we are in its join batch, or it told us where it is): wait for it.
    if (now - this.masterHeardAtMs < this.opts.claimAfterMs) return;
    // A member of a cluster answered: the cluster exists (its master may be restarting, or busy
    // electing a successor). Founding another one now would be a split brain of our own making.
    if (now - this.clusterHeardAtMs < this.opts.claimAfterMs) return;
    // No master found: claim if nobody lower answered recently.
    const me = rank(addressOf(this.opts.self), this.opts.self.uuid);
    for (const p of this.unjoinedPeers.values()) {
      if (now - p.atMs > this.opts.claimAfterMs) continue;
      if (rank(p.address, p.uuid) < me) return;
    }
    this.found('no master answered');
  }

  /** True when every join address failed to connect recently (nobody else is up: start alone now). */
  private allUnreachable(now: number): boolean {
    if (this.joinAddresses.length === 0) return true;
    return this.joinAddresses.every((a) => {
      const at = this.unreachable.get(a);
      return at !== undefined && now - at < 2 * this.opts.heartbeatIntervalMs + 1000;
    });
  }

  /**
   * The transport could not connect to an address; `refused`: the connection was refused
   * (ECONNREFUSED), a fault against the member listed there.
   */
  onUnreachable(address: string, refused = false): void {
    const now = this.clock.monotonicMs();
    this.unreachable.set(address, now);
    if (!refused || !this.joinedFlag) return;
    // By uuid: only the incarnation this member lists at that address. A new one that listens
    // there accepts dials, so it is never refused.
    for (const x of this.members) {
      if (x.uuid === this.opts.self.uuid || addressOf(x) !== address || this.suspects.has(x.uuid)) continue;
      const r = this.monitor.refused(x.uuid, address, now);
      if (r.kind === 'counted') this.log.fine(`reconnect to member ${address} (${x.uuid}) refused (${r.faults} of ${this.opts.connectionMonitorMaxFaults})`);
      else if (r.kind === 'suspect') this.suspectRefused(x, `${r.faults} reconnect(s) refused in ${Math.round(r.spanMs)} ms (connection refused: its process is gone)`);
      this.scheduleMonitor();
    }
  }

  /** The open connection to a peer closed: if it is a member, dial it again at once and keep watching. */
  onDisconnected(peer: Peer): void {
    if (!this.joinedFlag || peer.uuid === this.opts.self.uuid || this.suspects.has(peer.uuid)) return;
    const x = this.member(peer.uuid);
    if (x === undefined) return;
    this.monitor.watch(x.uuid, addressOf(x), this.clock.monotonicMs());
    this.redial(addressOf(x));
    this.scheduleMonitor();
  }

  /** A dial is what tells a dead process from a live one: any message to the address makes one. */
  private redial(address: string): void {
    this.transport.send(address, message('heartbeat', { membersVersion: this.membersVersion, masterUuid: this.members[0]?.uuid ?? '', suspects: [...this.suspects] }));
  }

  private scheduleMonitor(): void {
    if (this.monitorTimer !== null || this.stopped || this.monitor.size === 0) return;
    this.monitorTimer = this.timers.setTimeout(() => {
      this.monitorTimer = null;
      if (this.stopped) return;
      this.monitor.retain((u) => this.isMember(u) && !this.suspects.has(u));
      for (const d of this.monitor.due(this.clock.monotonicMs())) this.redial(d.address);
      this.scheduleMonitor();
    }, this.monitor.intervalMs);
  }

  /**
   * Reconnects to `x` were refused maxFaults times. The master removes it; a non-master suspects it
   * (a claim may follow if it is the master) and tells the master, which checks for itself.
   */
  private suspectRefused(x: MemberWire, why: string): void {
    this.counters.refusalSuspicions++;
    this.suspects.add(x.uuid);
    this.log.warning(`member ${addressOf(x)} (${x.uuid}) suspected: ${why}`);
    if (this.isMaster) {
      this.removeMembers([x.uuid], 'reconnects refused');
      return;
    }
    const master = this.members[0];
    if (master !== undefined && master.uuid !== x.uuid) this.transport.send(addressOf(master), message('memberSuspected', { uuid: x.uuid, reason: why }));
    this.maybeClaim();
  }

  /** Master: a member reports refused reconnects to `uuid`. Its word removes nobody: dial it ourselves. */
  private onMemberSuspected(from: Peer, m: MessageOf<'memberSuspected'>): void {
    if (!this.isMaster || !this.isMember(from.uuid)) return;
    const x = this.member(m.body.uuid);
    if (x === undefined || x.uuid === this.opts.self.uuid || this.suspects.has(x.uuid)) return;
    this.log.info(`member ${from.address} suspects ${addressOf(x)} (${x.uuid}): ${m.body.reason}; checking its connection`);
    this.monitor.watch(x.uuid, addressOf(x), this.clock.monotonicMs());
    this.redial(addressOf(x));
    this.scheduleMonitor();
  }

  private found(reason: string): void {
    this.clusterId = this.opts.newClusterId();
    this.foundedAtMs = this.clock.nowMs();
    this.members = [this.opts.self];
    this.membersVersion = 1;
    this.joinedFlag = true;
    this.resetSinceJoin = false;
    this.counters.clustersFounded++;
    this.log.info(`this member is the master of a new cluster (${reason})`);
    this.host.onFoundedCluster();
    this.host.onView(this.currentView(), []);
  }

  // ── inbound messages ─────────────────────────────────────────────────────────────────────────

  /** Handles membership messages; returns false for kinds it does not own. */
  handle(from: Peer, m: Message): boolean {
    switch (m.kind) {
      case 'joinRequest':
        this.onJoinRequest(m);
        return true;
      case 'joinAnswer':
        this.onJoinAnswer(m);
        return true;
      case 'mergeProbe':
        this.onMergeProbe(m);
        return true;
      case 'mergeProbeAnswer':
        this.onMergeProbeAnswer(m);
        return true;
      case 'membersView':
        this.onMembersView(from, m.body);
        return true;
      case 'heartbeat':
        this.onHeartbeat(from, m);
        return true;
      case 'claimRequest':
        this.onClaimRequest(from, m);
        return true;
      case 'claimAnswer':
        this.onClaimAnswer(from, m);
        return true;
      case 'mergeTo':
        if (this.joinedFlag && this.master !== null && from.uuid === this.master.uuid && !this.isMaster) {
          this.leave(`merging into the cluster of ${m.body.masterAddress}: ${m.body.reason}`, true);
          this.masterAddressHint = m.body.masterAddress;
        }
        return true;
      case 'memberSuspected':
        this.onMemberSuspected(from, m);
        return true;
      case 'notMember':
        if (this.joinedFlag && this.master !== null && from.uuid === this.master.uuid) this.leave('the master removed this member');
        return true;
      default:
        return false;
    }
  }

  private onJoinRequest(m: MessageOf<'joinRequest'>): void {
    const joiner = m.body.member;
    const reply = (body: { masterAddress: string; joined: boolean; refusal: string }): void => {
      this.transport.send(addressOf(joiner), message('joinAnswer', { ...body, uuid: this.opts.self.uuid, address: addressOf(this.opts.self), cluster: this.clusterInfo }));
    };
    if (m.body.cluster.clusterId !== '') return; // a joined member asks nothing with it (probes are mergeProbe)
    if (!this.joinedFlag) {
      reply({ masterAddress: '', joined: false, refusal: '' });
      return;
    }
    if (!this.isMaster) {
      const master = this.members[0] as MemberWire;
      if (addressOf(master) === addressOf(joiner) && master.uuid !== joiner.uuid) {
        // Our master's process restarted: the old incarnation is gone for good. Suspect it now, so the
        // next oldest claims mastership without waiting for the heartbeat timeout.
        if (!this.suspects.has(master.uuid)) {
          this.counters.restartsDetected++;
          this.suspects.add(master.uuid);
          this.log.warning(`master ${addressOf(master)} restarted (new uuid ${joiner.uuid}); its old incarnation ${master.uuid} is gone`);
          this.maybeClaim();
        }
        reply({ masterAddress: '', joined: true, refusal: '' });
        return;
      }
      if (this.isMember(joiner.uuid) && this.suspects.has(master.uuid) && !this.suspects.has(joiner.uuid) && this.keepsAskingToJoin(joiner.uuid)) {
        // A member of our view has kept asking to join for a heartbeat interval since our master
        // was found gone, with no heartbeat between: it never got the view (the master died just
        // after admitting it) or left since, so it answers no claim. Waiting out the heartbeat
        // timeout for it would keep the dead master listed for seconds (seeds 1012984, 1057186).
        // One request is not enough: one sent just before it took the view can arrive late.
        this.suspects.add(joiner.uuid);
        this.log.warning(`member ${addressOf(joiner)} (${joiner.uuid}) asks to join after the master was suspected: it is not in this cluster`);
        // A claim already running asked it too, and it will not answer (it is not joined).
        const c = this.claim;
        if (c !== null && c.asked.delete(joiner.uuid) && c.answers.size === c.asked.size) this.finishClaim();
        this.maybeClaim();
      }
      reply({ masterAddress: addressOf(master), joined: true, refusal: '' });
      return;
    }
    if (this.isMember(joiner.uuid)) {
      if (!m.body.reset || !this.heardSinceAdmitted.has(joiner.uuid)) {
        // A re-sent request from a member we admitted: it missed the view (or has not seen it yet;
        // a request sent before the view arrived says reset too, and no heartbeat came since). The
        // answer goes first: a joiner adopts views only from a master that answered it.
        reply({ masterAddress: addressOf(this.opts.self), joined: true, refusal: '' });
        this.transport.send(addressOf(joiner), message('membersView', this.currentView()));
        return;
      }
      // It was cut off and reset: it holds no data any more, whatever the table says. Remove it (its
      // partitions are promoted or re-created from the others), then admit it anew.
      this.log.info(`member ${addressOf(joiner)} (${joiner.uuid}) left and joins again holding nothing: removing it before admitting it anew`);
      this.removeMembers([joiner.uuid], 'rejoining after a reset');
    }
    const sameAddress = this.members.find((x) => addressOf(x) === addressOf(joiner));
    if (sameAddress !== undefined) {
      // A restart at a known address: the old incarnation is gone. Remove it now, and tell the new
      // one it is heard (it is admitted with the next batch).
      this.counters.restartsDetected++;
      this.log.info(`member at ${addressOf(joiner)} restarted with uuid ${joiner.uuid}; removing ${sameAddress.uuid}`);
      this.removeMembers([sameAddress.uuid], 'restarted');
    }
    const refusal = this.host.joinRefusal(joiner);
    if (refusal !== null) {
      reply({ masterAddress: addressOf(this.opts.self), joined: true, refusal });
      return;
    }
    const now = this.clock.monotonicMs();
    if (!this.joiners.has(joiner.uuid)) {
      if (this.joiners.size === 0) this.batchFirstMs = now;
      this.batchLastMs = now;
      this.joiners.set(joiner.uuid, { member: joiner, address: addressOf(joiner) });
      this.log.fine(`join request from ${addressOf(joiner)} (${joiner.uuid}); batch of ${this.joiners.size}`);
    }
    // Tell the joiner a master has it in its batch, so it does not claim mastership meanwhile.
    reply({ masterAddress: addressOf(this.opts.self), joined: true, refusal: '' });
  }

  private maybeCloseBatch(now: number): void {
    if (this.joiners.size === 0) return;
    if (now - this.batchLastMs < this.opts.joinBatchQuietMs && now - this.batchFirstMs < this.opts.joinBatchMaxMs) return;
    const admitted = [...this.joiners.values()].map((j) => j.member).filter((j) => !this.isMember(j.uuid));
    this.joiners.clear();
    if (admitted.length === 0) return;
    const previous = this.members;
    this.members = [...this.members, ...admitted];
    this.membersVersion = Math.max(this.membersVersion, previous.length) + admitted.length;
    for (const a of admitted) {
      this.lastHeard.set(a.uuid, now);
      this.heardSinceAdmitted.delete(a.uuid);
      this.seenAddresses.add(addressOf(a));
    }
    this.log.info(`admitting ${admitted.map((a) => `${addressOf(a)}`).join(', ')}`);
    // Publish first: the migrations onView plans name the new members, and every member must know
    // their addresses before a move request reaches it (same connection, so the view arrives first).
    this.publish();
    this.host.onView(this.currentView(), previous);
  }

  /**
   * A split-brain probe from the master of a cluster: ours, or another side. Members of another side
   * answer with their master and cluster as they are now. A master also probes the prober at once
   * instead of deciding on the probe: the probe may have waited in a partitioned connection and
   * describe the prober's cluster as it was (seed 520 with --register --tcp: both masters merged
   * into each other, one on a fresh answer, one on a probe held through the partition).
   */
  private onMergeProbe(m: MessageOf<'mergeProbe'>): void {
    const prober = m.body.member;
    if (!this.isOtherSide(m.body.cluster, prober.uuid)) return;
    const master = this.members[0] as MemberWire;
    this.transport.send(
      addressOf(prober),
      message('mergeProbeAnswer', { probeId: m.body.probeId, uuid: this.opts.self.uuid, address: addressOf(this.opts.self), masterAddress: addressOf(master), cluster: this.clusterInfo }),
    );
    if (!this.isMaster) return;
    const now = this.clock.monotonicMs();
    const sent = this.probesSent.get(addressOf(prober));
    if (sent === undefined || now - sent.atMs > this.opts.mergeProbeIntervalMs / 2) this.sendProbe(addressOf(prober), now);
  }

  /**
   * Master: an answer to a probe. Merges are decided only on an answer to this master's latest probe
   * round that came back within half a probe interval, so both sides decide on each other's cluster
   * as it is now: an answer held in a partitioned connection describes a cluster that may since have
   * grown, shrunk or merged.
   */
  private onMergeProbeAnswer(m: MessageOf<'mergeProbeAnswer'>): void {
    const b = m.body;
    if (!this.isMaster || !this.isOtherSide(b.cluster, b.uuid)) return;
    const now = this.clock.monotonicMs();
    const sent = this.probesSent.get(b.address);
    if (sent === undefined || sent.id !== b.probeId || now - sent.atMs > this.opts.mergeProbeIntervalMs / 2) {
      this.counters.staleProbeAnswers++;
      return;
    }
    if (b.masterAddress === b.address) this.considerMerge(b.cluster, b.address, b.uuid);
    else if (b.masterAddress !== '') this.sendProbe(b.masterAddress, now);
  }

  private onJoinAnswer(m: MessageOf<'joinAnswer'>): void {
    const b = m.body;
    if (this.joinedFlag) return;
    if (!b.joined) {
      this.unjoinedPeers.set(b.address, { uuid: b.uuid, address: b.address, atMs: this.clock.monotonicMs() });
      return;
    }
    this.clusterHeardAtMs = this.clock.monotonicMs();
    if (b.refusal !== '') {
      this.log.warning(`join refused by ${b.address}: ${b.refusal}`);
      return;
    }
    if (b.masterAddress !== '') this.masterAddressHint = b.masterAddress;
    if (b.masterAddress === b.address) {
      this.masterHeardAtMs = this.clock.monotonicMs();
      this.admittingMaster = b.uuid;
    }
  }

  private onMembersView(from: Peer, view: ViewWire): void {
    const listsMe = view.members.some((x) => x.uuid === this.opts.self.uuid);
    const sender = view.members[0];
    // Only a master publishes views; a leaving master hands over with a list that starts with its
    // successor and no longer names itself.
    const handOver = this.joinedFlag && this.members[0]?.uuid === from.uuid && !view.members.some((x) => x.uuid === from.uuid);
    if (sender === undefined || (sender.uuid !== from.uuid && !handOver)) return;
    if (!this.joinedFlag) {
      if (!listsMe) return;
      if (from.uuid !== this.admittingMaster) {
        this.counters.unaskedViews++;
        return;
      }
      this.adopt(view);
      return;
    }
    const myMaster = this.members[0];
    if (view.clusterId !== this.clusterId) return; // another cluster: split brains meet through probes
    if (myMaster !== undefined && from.uuid !== myMaster.uuid) {
      // A master takes no view from another master of the same cluster id: that is the other half
      // of a split (a mastership claim cut the cluster in two); the halves meet through probes and
      // merge, handing data back. Adopting the view would drop this half's data unannounced.
      if (this.isMaster) return;
      // A view from someone who is not our master, while our master is fine: ignore, unless we
      // accepted that member's mastership claim.
      if (this.isMember(myMaster.uuid) && !this.suspects.has(myMaster.uuid) && from.uuid !== this.acceptedClaimant) return;
      if (from.uuid === this.acceptedClaimant && this.host.tableWire().version !== this.acceptedTableVersion) {
        // Since answering that claim this member followed its old master again (it heard it once
        // the network healed, and took its tables): it may own partitions and hold writes the
        // claimer's table, built from the answers, knows nothing of. Moving to the claimer's side
        // by adopting its view would let the claimer's stale copies replace them (seed 214595 with
        // --overlap). It moves the way a member of a merging side does: it leaves, hands back what
        // it holds, and joins the claimer.
        this.leave(`the member ${from.address}, whose mastership claim this member accepted, took over after this member followed its old master again`, true);
        this.masterAddressHint = from.address;
        return;
      }
      if (from.uuid === this.acceptedClaimant && view.table.version < this.host.tableWire().version) {
        // The claimer did not take the table this member answered with: it came from a master that
        // had removed the claimer (the other half of a split). Adopting the view would leave this
        // member on a table newer than every table its new master makes, taking none of them, and
        // the partitions that table gave it could never move (seed 1036190 never settled). Its
        // copies may hold writes taken under that table, so it moves as a merging member does.
        this.leave(`the member ${from.address}, whose mastership claim this member accepted, did not take this member's partition table (version ${this.host.tableWire().version}, from a master that had removed it)`, true);
        this.masterAddressHint = from.address;
        return;
      }
    }
    if (view.membersVersion < this.membersVersion) return;
    if (view.membersVersion === this.membersVersion && from.uuid === myMaster?.uuid) {
      // Same member list; the table may be newer.
      this.host.onView(view, this.members);
      return;
    }
    if (!listsMe) {
      this.leave('a newer member list does not include this member');
      return;
    }
    this.adopt(view);
  }

  private adopt(view: ViewWire): void {
    this.resetSinceJoin = false;
    this.acceptedClaimant = null;
    const previous = this.members;
    const wasJoined = this.joinedFlag;
    this.members = [...view.members];
    this.membersVersion = view.membersVersion;
    this.clusterId = view.clusterId;
    this.foundedAtMs = view.foundedAtMs;
    for (const x of this.members) this.seenAddresses.add(addressOf(x));
    this.joinedFlag = true;
    this.claim = null;
    const now = this.clock.monotonicMs();
    for (const x of this.members) if (!this.lastHeard.has(x.uuid) || !wasJoined) this.lastHeard.set(x.uuid, now);
    for (const s of [...this.suspects]) if (!this.isMember(s)) this.suspects.delete(s);
    this.askingToJoinSince.clear();
    this.monitor.retain((u) => this.isMember(u));
    this.host.onView(view, previous);
  }

  private leave(reason: string, merging = false): void {
    this.counters.leftCluster++;
    this.probesSent.clear();
    this.admittingMaster = null;
    this.resetSinceJoin = true;
    this.log.warning(`left the cluster: ${reason}; joining again`);
    this.joinedFlag = false;
    this.members = [];
    this.membersVersion = 0;
    this.suspects.clear();
    this.askingToJoinSince.clear();
    this.monitor.clear();
    this.joiners.clear();
    this.claim = null;
    this.unjoinedPeers.clear();
    this.masterAddressHint = null;
    this.joinStartMs = this.clock.monotonicMs();
    this.host.onLeftCluster(reason, merging);
  }

  // ── heartbeats and failure detection ────────────────────────────────────────────────────────

  private sendHeartbeats(): void {
    const hb = message('heartbeat', { membersVersion: this.membersVersion, masterUuid: this.members[0]?.uuid ?? '', suspects: [...this.suspects] });
    for (const x of this.members) if (x.uuid !== this.opts.self.uuid) this.transport.send(addressOf(x), hb);
  }

  private onHeartbeat(from: Peer, m: MessageOf<'heartbeat'>): void {
    if (!this.joinedFlag) return;
    if (!this.isMember(from.uuid)) {
      if (this.isMaster && !this.joiners.has(from.uuid)) this.transport.send(from.address, message('notMember', { membersVersion: this.membersVersion }));
      return;
    }
    this.markHeard(from.uuid, from.address);
    this.heardSinceAdmitted.add(from.uuid);
    this.monitor.forget(from.uuid);
    if (this.isMaster && m.body.membersVersion < this.membersVersion) {
      // It missed a view: send it again.
      this.transport.send(from.address, message('membersView', this.currentView()));
    }
  }

  /** Whether a listed member asking to join has asked for at least a heartbeat interval (since the
   * first request that came after the master was suspected, with no heartbeat from it since). */
  private keepsAskingToJoin(uuid: string): boolean {
    const now = this.clock.monotonicMs();
    const since = this.askingToJoinSince.get(uuid);
    if (since === undefined) {
      this.askingToJoinSince.set(uuid, now);
      return false;
    }
    return now - since >= this.opts.heartbeatIntervalMs;
  }

  /** A message that proves a member of the view alive and in this cluster, as a heartbeat does: a
   * master that just took a member's migration confirmation must not remove it the same moment
   * because its heartbeats were cut off until a fault healed a few hundred ms ago (seed 1088732). */
  heardFrom(uuid: string): void {
    if (!this.joinedFlag || uuid === this.opts.self.uuid || !this.isMember(uuid)) return;
    this.markHeard(uuid, uuid);
  }

  /** A member of the view was heard now: its silence starts again and a suspicion ends. */
  private markHeard(uuid: string, name: string): void {
    this.lastHeard.set(uuid, this.clock.monotonicMs());
    this.askingToJoinSince.delete(uuid);
    if (this.suspects.delete(uuid)) this.log.info(`member ${name} is heard again`);
  }

  private detectFailures(now: number): void {
    for (const x of this.members) {
      if (x.uuid === this.opts.self.uuid || this.suspects.has(x.uuid)) continue;
      const heard = this.lastHeard.get(x.uuid) ?? now;
      if (now - heard > this.opts.maxNoHeartbeatMs) {
        this.suspects.add(x.uuid);
        this.log.warning(`member ${addressOf(x)} (${x.uuid}) suspected: no heartbeat for ${now - heard} ms`);
      }
    }
    if (this.isMaster) {
      const gone = [...this.suspects].filter((s) => this.isMember(s));
      if (gone.length > 0) this.removeMembers(gone, 'no heartbeat');
      return;
    }
    // Also when nothing new is suspected: a claim may be due for a master suspected earlier.
    this.maybeClaim();
  }

  /** Master: drops members (suspected, departed, restarted) and publishes. */
  removeMembers(uuids: readonly string[], reason: string): void {
    const drop = new Set(uuids.filter((u) => u !== this.opts.self.uuid && this.isMember(u)));
    if (drop.size === 0) return;
    const previous = this.members;
    this.members = this.members.filter((x) => !drop.has(x.uuid));
    this.membersVersion += drop.size;
    this.counters.membersRemoved += drop.size;
    for (const u of drop) {
      const x = previous.find((p) => p.uuid === u);
      if (x !== undefined) this.transport.disconnect(addressOf(x), x.uuid);
      this.suspects.delete(u);
      this.lastHeard.delete(u);
      this.heardSinceAdmitted.delete(u);
      this.monitor.forget(u);
    }
    this.log.info(`removed ${[...drop].join(', ')} (${reason})`);
    this.host.onMembersRemoved([...drop]);
    // Publish before planning: members take tables only from their master, so the view naming this
    // master's list must reach them before any migration request that relies on the new table.
    this.publish();
    this.host.onView(this.currentView(), previous);
  }

  /** Master: a member finished its graceful shutdown. */
  memberDeparted(uuid: string): void {
    this.removeMembers([uuid], 'graceful shutdown');
  }

  /** Master leaving: hand mastership to the next oldest by publishing a list without itself. */
  handOverAndLeave(): void {
    if (!this.isMaster) return;
    const previous = this.members;
    this.members = this.members.filter((x) => x.uuid !== this.opts.self.uuid);
    this.membersVersion += 1;
    const view = this.currentView();
    for (const x of this.members) this.transport.send(addressOf(x), message('membersView', view));
    this.members = previous;
    this.stop();
  }

  publish(): void {
    if (!this.isMaster) return;
    this.lastPublishMs = this.clock.monotonicMs();
    this.counters.viewsPublished++;
    const view = message('membersView', this.currentView());
    for (const x of this.members) if (x.uuid !== this.opts.self.uuid) this.transport.send(addressOf(x), view);
  }

  /** Sends the table alone to every member (after a migration or promotion). */
  publishTable(): void {
    if (!this.isMaster) return;
    const t = message('partitionTable', { table: this.host.tableWire(), migrationQueue: this.host.migrationQueue(), membersVersion: this.membersVersion });
    for (const x of this.members) if (x.uuid !== this.opts.self.uuid) this.transport.send(addressOf(x), t);
  }

  // ── mastership claim ─────────────────────────────────────────────────────────────────────────

  private maybeClaim(): void {
    if (this.claim !== null || this.isMaster) return;
    const myIndex = this.members.findIndex((x) => x.uuid === this.opts.self.uuid);
    if (myIndex <= 0) return;
    const older = this.members.slice(0, myIndex);
    if (!older.every((x) => this.suspects.has(x.uuid))) return;
    this.counters.claims++;
    const asked = new Set(this.members.filter((x) => x.uuid !== this.opts.self.uuid && !this.suspects.has(x.uuid)).map((x) => x.uuid));
    this.log.warning(`master ${this.members[0]?.uuid ?? '?'} suspected; claiming mastership, asking ${asked.size} member(s)`);
    this.claim = { answers: new Map(), asked, startMs: this.clock.monotonicMs() };
    const request = message('claimRequest', { candidateUuid: this.opts.self.uuid });
    for (const u of asked) {
      const a = this.addressOfUuid(u);
      if (a !== null) this.transport.send(a, request);
    }
    if (asked.size === 0) this.finishClaim();
  }

  private onClaimRequest(from: Peer, m: MessageOf<'claimRequest'>): void {
    if (!this.joinedFlag) return;
    const candidateIndex = this.members.findIndex((x) => x.uuid === m.body.candidateUuid);
    // Accept when every member older than the candidate is silent to us too (or gone).
    const now = this.clock.monotonicMs();
    const accepted =
      candidateIndex > 0 &&
      this.members.slice(0, candidateIndex).every((x) => this.suspects.has(x.uuid) || now - (this.lastHeard.get(x.uuid) ?? 0) > this.opts.maxNoHeartbeatMs / 2);
    if (accepted) {
      this.acceptedClaimant = m.body.candidateUuid;
      this.acceptedTableVersion = this.host.tableWire().version;
    }
    this.transport.send(from.address, message('claimAnswer', { accepted, view: this.currentView() }, m.callId));
  }

  private onClaimAnswer(from: Peer, m: MessageOf<'claimAnswer'>): void {
    const c = this.claim;
    if (c === null || !c.asked.has(from.uuid)) return;
    if (!m.body.accepted) {
      this.log.warning(`mastership claim rejected by ${from.address}`);
      this.claim = null;
      return;
    }
    c.answers.set(from.uuid, m.body.view);
    if (c.answers.size === c.asked.size) this.finishClaim();
  }

  private finishClaim(): void {
    const c = this.claim;
    if (c === null) return;
    this.claim = null;
    const keep = new Set([this.opts.self.uuid, ...c.answers.keys()]);
    const views = [...c.answers.values()];
    const newest = Math.max(this.membersVersion, ...views.map((v) => v.membersVersion));
    const previous = this.members;
    const removed = previous.filter((x) => !keep.has(x.uuid)).map((x) => x.uuid);
    this.members = previous.filter((x) => keep.has(x.uuid));
    this.membersVersion = newest + 1;
    for (const u of removed) {
      this.suspects.delete(u);
      this.lastHeard.delete(u);
    }
    this.log.info(`took over as master with ${this.members.length} member(s); removed ${removed.join(', ') || 'none'}`);
    this.host.onClaimed([this.currentView(), ...views]);
    this.host.onMembersRemoved(removed);
    this.publish(); // before planning, as in removeMembers
    this.host.onView(this.currentView(), previous);
  }

  // ── split brain ──────────────────────────────────────────────────────────────────────────────

  /** Master: asks every known address outside the cluster whether a master of another cluster is there. */
  private probe(now: number): void {
    this.lastProbeMs = now;
    this.probeId++;
    const inList = new Set(this.members.map((x) => addressOf(x)));
    const request = message('mergeProbe', { member: this.opts.self, cluster: this.clusterInfo, probeId: this.probeId });
    for (const a of new Set([...this.joinAddresses, ...this.seenAddresses])) {
      if (inList.has(a) || a === addressOf(this.opts.self)) continue;
      this.probesSent.set(a, { id: this.probeId, atMs: now });
      this.transport.send(a, request);
    }
  }

  /**
   * Master: probes one address now (a master learned from an answer, or a prober): answers to an
   * earlier probe of that address no longer count.
   */
  private sendProbe(address: string, now: number): void {
    if (address === addressOf(this.opts.self) || this.members.some((x) => addressOf(x) === address)) return;
    this.probeId++;
    this.probesSent.set(address, { id: this.probeId, atMs: now });
    this.transport.send(address, message('mergeProbe', { member: this.opts.self, cluster: this.clusterInfo, probeId: this.probeId }));
  }

  /**
   * Whether a joined member of cluster `info` is on another side of a split brain: another cluster,
   * or the same one (split apart after a mastership claim) that no longer lists it.
   */
  private isOtherSide(info: ClusterInfo, uuid: string): boolean {
    if (!this.joinedFlag || info.clusterId === '') return false;
    return info.clusterId !== this.clusterId || !this.isMember(uuid);
  }

  /** Master: met the master of another side at `address`; merge into it when this side is smaller. */
  private considerMerge(other: ClusterInfo, address: string, otherMaster: string): void {
    const mine = this.clusterInfo;
    if (!mergesInto(mine, this.opts.self.uuid, other, otherMaster)) return;
    const why =
      mine.dataMembers !== other.dataMembers
        ? `it has ${other.dataMembers} data member(s), this cluster ${mine.dataMembers}`
        : mine.foundedAtMs !== other.foundedAtMs
          ? `both have ${mine.dataMembers} data member(s) and this cluster is younger (founded ${new Date(mine.foundedAtMs).toISOString()}, the other ${new Date(other.foundedAtMs).toISOString()})`
          : mine.clusterId !== other.clusterId
            ? `both have ${mine.dataMembers} data member(s), were founded at the same time, and this cluster's id is greater`
            : `both are halves of cluster ${mine.clusterId} with ${mine.dataMembers} data member(s), and this master's uuid is greater`;
    this.counters.merges++;
    this.log.warning(`split brain: cluster ${mine.clusterId} merges into cluster ${other.clusterId} (master ${address}) because ${why}`);
    const order = message('mergeTo', { masterAddress: address, reason: why });
    for (const x of this.members) if (x.uuid !== this.opts.self.uuid) this.transport.send(addressOf(x), order);
    this.leave(`merging into the cluster of ${address}: ${why}`, true);
    this.masterAddressHint = address;
  }

  /** Text of the member list for the log, like `Members {size:3, ver:5} [...]`. */
  /** `Members {size:2, ver:2} [ Member [h]:p - uuid this, Member … ]`, one line (config.md, "Logging"). */
  membersLine(): string {
    return formatMembersLine(this.membersVersion, this.members.map((x) => ({ host: x.host, port: x.port, uuid: x.uuid, self: x.uuid === this.opts.self.uuid, lite: x.lite })));
  }

}

export function formatMembersLine(version: number, members: readonly { host: string; port: number; uuid: string; self: boolean; lite: boolean }[]): string {
  const items = members.map((x) => `Member [${x.host}]:${x.port} - ${x.uuid}${x.self ? ' this' : ''}${x.lite ? ' lite' : ''}`);
  return `Members {size:${members.length}, ver:${version}} [ ${items.join(', ')} ]`;
}

/** Order for mastership claims among unjoined members: address, then uuid. */
function rank(address: string, uuid: string): string {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  return `${host}:${String(port).padStart(5, '0')}/${uuid}`;
}
