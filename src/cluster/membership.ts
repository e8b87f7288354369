// Membership: join, the member list, heartbeats, failure detection and mastership. A pure core: time
// comes from the Clock, timers from Timers, the network is the Transport; the host (the member's
// cluster node) owns the partition table and reacts to view changes. The rules in full are
// docs/cluster.md "How it works"; in short:
// - The master is the oldest member (members[0]). Only it changes the list; every change bumps the
//   members version and is published as a whole view (members + partition table + state). A member
//   applies a view only from the member it considers master (joining: only from the master that
//   answered its join request since it left), and only a newer one.
// - Joiners are admitted in batches (joinBatchQuietMs after the last, at most joinBatchMaxMs after
//   the first). A member that found no master, and no lower (address, uuid) among those it reaches,
//   founds a cluster of one; a cluster that answered at all exists, and is never founded again.
// - A new uuid at a listed address is a new incarnation: the old one is removed (or, as master,
//   suspected) at once.
// - Silence for maxNoHeartbeatMs, or refused reconnects (refusal-watch.ts), make a member suspected.
//   A non-master only tells the master; the master removes on its own evidence. When the master is
//   suspected, the oldest member that still hears the others claims mastership
//   (mastership-claim.ts). This member's own stall is not the others' silence (noteStall).
// - Split brain: the master probes for other sides and the smaller side merges into the larger
//   (merge-probes.ts); the host hands back what the merging members held.
import type { MemberWire, Message, MessageKind, MessageOf, ViewWire } from './messages.js';
import { message } from './messages.js';
import type { MemberService } from './service.js';
import { RefusalWatch } from './refusal-watch.js';
import { MastershipClaim } from './mastership-claim.js';
import { MergeProbes, type ClusterInfo } from './merge-probes.js';
import { addressOf, formatMembersLine, rank, recordRemoved, type Joiner, type MembershipHost, type MembershipOptions } from './membership-types.js';

export { addressOf, formatMembersLine, type MembershipHost, type MembershipOptions } from './membership-types.js';

export { mergesInto, type ClusterInfo } from './merge-probes.js';
import type { Peer, Transport } from './transport.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

export class Membership implements MemberService {
  readonly name = 'membership';
  private members: MemberWire[] = [];
  private membersVersion = 0;
  private clusterId = '';
  private foundedAtMs = 0;
  /** Addresses of every member this one has seen: probed for split brains when not in the list. */
  private readonly seenAddresses = new Set<string>();
  private readonly probes: MergeProbes;
  private joinedFlag = false;
  /** Left a cluster (and dropped its data) since it last joined one: said in join requests. */
  private resetSinceJoin = false;
  readonly lastHeard = new Map<string, number>(); // monotonic ms; read (never written) by the console views
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
  readonly claims: MastershipClaim;
  private readonly unreachable = new Map<string, number>();
  /** Refused reconnects per member (the second failure detector). */
  private readonly refusals: RefusalWatch;
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
    this.claims = new MastershipClaim(
      {
        self: opts.self,
        members: () => this.members,
        isMaster: () => this.isMaster,
        isSuspect: (u) => this.suspects.has(u),
        addressOfUuid: (u) => this.addressOfUuid(u),
        silentSinceMs: (u) => this.lastHeard.get(u) ?? 0,
        tableVersion: () => this.host.tableWire().version,
        takeOver: (keep, views) => this.takeOver(keep, views),
        counters: this.counters,
      },
      opts.claimTimeoutMs,
      opts.maxNoHeartbeatMs,
      transport,
      clock,
      log,
    );
    this.refusals = new RefusalWatch(
      {
        intervalMs: opts.connectionMonitorIntervalMs,
        maxFaults: opts.connectionMonitorMaxFaults,
        ...(opts.connectionMonitorFaultSpacingShare === undefined ? {} : { faultSpacingShare: opts.connectionMonitorFaultSpacingShare }),
        // After the heartbeat timeout the other detector has decided anyway.
        watchMs: opts.maxNoHeartbeatMs,
      },
      {
        selfUuid: opts.self.uuid,
        joined: () => this.joinedFlag,
        stopped: () => this.stopped,
        members: () => this.members,
        member: (u) => this.member(u),
        isMember: (u) => this.isMember(u),
        isSuspect: (u) => this.suspects.has(u),
        redial: (address) => this.redial(address),
        suspect: (x, why) => this.suspectRefused(x, why),
      },
      clock,
      timers,
      log,
    );
    this.probes = new MergeProbes(
      {
        self: opts.self,
        get selfAddress() {
          return addressOf(opts.self);
        },
        joined: () => this.joinedFlag,
        isMaster: () => this.isMaster,
        isMember: (u) => this.isMember(u),
        clusterId: () => this.clusterId,
        clusterInfo: () => this.clusterInfo,
        masterAddress: () => addressOf(this.members[0] as MemberWire),
        listAddresses: () => new Set(this.members.map((x) => addressOf(x))),
        knownAddresses: () => [...this.joinAddresses, ...this.seenAddresses],
        mergeInto: (address, why) => {
          const order = message('mergeTo', { masterAddress: address, reason: why });
          for (const x of this.members) if (x.uuid !== this.opts.self.uuid) this.transport.send(addressOf(x), order);
          this.leave(`merging into the cluster of ${address}: ${why}`, true);
          this.masterAddressHint = address;
        },
        counters: this.counters,
      },
      opts.mergeProbeIntervalMs,
      transport,
      clock,
      log,
    );
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
    this.refusals.stop();
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
        if (this.probes.due(now)) this.probes.probe(now);
      }
    }
    if (!stalled) this.claims.tick(now);
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
    this.refusals.refused(address, now);
  }

  /** The open connection to a peer closed: if it is a member, dial it again at once and keep watching. */
  onDisconnected(peer: Peer): void {
    if (!this.joinedFlag || peer.uuid === this.opts.self.uuid || this.suspects.has(peer.uuid)) return;
    const x = this.member(peer.uuid);
    if (x === undefined) return;
    this.refusals.watch(x);
  }

  /** A dial is what tells a dead process from a live one: any message to the address makes one. */
  private redial(address: string): void {
    this.transport.send(address, message('heartbeat', { membersVersion: this.membersVersion, masterUuid: this.members[0]?.uuid ?? '', suspects: [...this.suspects] }));
  }

  /**
   * Reconnects to `x` were refused maxFaults times. The master removes it; a non-master suspects it
   * (a claim may follow if it is the master) and tells the master, which checks for itself.
   */
  private suspectRefused(x: MemberWire, why: string): void {
    this.counters.refusalSuspicions++;
    this.suspects.add(x.uuid);
    this.log.warning(`member ${addressOf(x)} (${x.uuid}) suspected: ${why}`);
    this.host.events?.record('member-suspected', `${addressOf(x)} suspected by ${addressOf(this.opts.self)}: ${why}`, { member: x.uuid });
    if (this.isMaster) {
      this.removeMembers([x.uuid], 'reconnects refused');
      return;
    }
    const master = this.members[0];
    if (master !== undefined && master.uuid !== x.uuid) this.transport.send(addressOf(master), message('memberSuspected', { uuid: x.uuid, reason: why }));
    this.claims.maybeStart();
  }

  /** Master: a member reports refused reconnects to `uuid`. Its word removes nobody: dial it ourselves. */
  private onMemberSuspected(from: Peer, m: MessageOf<'memberSuspected'>): void {
    if (!this.isMaster || !this.isMember(from.uuid)) return;
    const x = this.member(m.body.uuid);
    if (x === undefined || x.uuid === this.opts.self.uuid || this.suspects.has(x.uuid)) return;
    this.log.info(`member ${from.address} suspects ${addressOf(x)} (${x.uuid}): ${m.body.reason}; checking its connection`);
    this.refusals.watch(x);
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

  /** The message kinds membership owns (cluster/service.ts). */
  readonly kinds: readonly MessageKind[] = ['joinRequest', 'joinAnswer', 'mergeProbe', 'mergeProbeAnswer', 'membersView', 'heartbeat', 'claimRequest', 'claimAnswer', 'mergeTo', 'memberSuspected', 'notMember'];

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
        this.probes.onProbe(m);
        return true;
      case 'mergeProbeAnswer':
        this.probes.onAnswer(m);
        return true;
      case 'membersView':
        this.onMembersView(from, m.body);
        return true;
      case 'heartbeat':
        this.onHeartbeat(from, m);
        return true;
      case 'claimRequest':
        if (this.joinedFlag) this.claims.answer(from, m, this.currentView());
        return true;
      case 'claimAnswer':
        this.claims.onAnswer(from, m);
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
          this.claims.maybeStart();
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
        this.claims.giveUpOn(joiner.uuid);
        this.claims.maybeStart();
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
    for (const a of admitted) this.host.events?.record('member-joined', `${addressOf(a)} joined (admitted by the master ${addressOf(this.opts.self)}; ${this.members.length} members)`, { member: a.uuid });
    // Publish first: the migrations onView plans name the new members, and every member must know
    // their addresses before a move request reaches it (same connection, so the view arrives first).
    this.publish();
    this.host.onView(this.currentView(), previous);
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
      const fromClaimant = this.claims.isAcceptedClaimant(from.uuid);
      if (this.isMember(myMaster.uuid) && !this.suspects.has(myMaster.uuid) && !fromClaimant) return;
      const why = fromClaimant ? this.claims.reasonToLeaveFor(from.address, view, this.host.tableWire().version) : null;
      if (why !== null) {
        // It moves the way a member of a merging side does: it leaves, hands back what it holds,
        // and joins the claimer.
        this.leave(why, true);
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
    this.claims.forgetAccepted();
    const previous = this.members;
    const wasJoined = this.joinedFlag;
    this.members = [...view.members];
    this.membersVersion = view.membersVersion;
    this.clusterId = view.clusterId;
    this.foundedAtMs = view.foundedAtMs;
    for (const x of this.members) this.seenAddresses.add(addressOf(x));
    this.joinedFlag = true;
    this.claims.cancel();
    const now = this.clock.monotonicMs();
    for (const x of this.members) if (!this.lastHeard.has(x.uuid) || !wasJoined) this.lastHeard.set(x.uuid, now);
    for (const s of [...this.suspects]) if (!this.isMember(s)) this.suspects.delete(s);
    this.askingToJoinSince.clear();
    this.refusals.retain((u) => this.isMember(u));
    this.host.onView(view, previous);
  }

  private leave(reason: string, merging = false): void {
    this.counters.leftCluster++;
    this.probes.reset();
    this.admittingMaster = null;
    this.resetSinceJoin = true;
    this.log.warning(`left the cluster: ${reason}; joining again`);
    this.host.events?.record(merging ? 'split-brain-merge' : 'member-left', `${addressOf(this.opts.self)} left its cluster: ${reason}`);
    this.joinedFlag = false;
    this.members = [];
    this.membersVersion = 0;
    this.suspects.clear();
    this.askingToJoinSince.clear();
    this.refusals.clear();
    this.joiners.clear();
    this.claims.cancel();
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
    this.refusals.forget(from.uuid);
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
        this.host.events?.record('member-suspected', `${addressOf(x)} suspected by ${addressOf(this.opts.self)}: no heartbeat for ${now - heard} ms`, { member: x.uuid });
      }
    }
    if (this.isMaster) {
      const gone = [...this.suspects].filter((s) => this.isMember(s));
      if (gone.length > 0) this.removeMembers(gone, 'no heartbeat');
      return;
    }
    // Also when nothing new is suspected: a claim may be due for a master suspected earlier.
    this.claims.maybeStart();
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
      this.refusals.forget(u);
    }
    this.log.info(`removed ${[...drop].join(', ')} (${reason})`);
    recordRemoved(this.host.events, previous, drop, `removed by the master ${addressOf(this.opts.self)}: ${reason}`);
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

  /** A claim finished: this member takes over with the members that accepted it. */
  private takeOver(keep: ReadonlySet<string>, views: readonly ViewWire[]): void {
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
    this.host.events?.record('master-changed', `${addressOf(this.opts.self)} took over as master with ${this.members.length} member(s)`);
    recordRemoved(this.host.events, previous, removed, `removed by ${addressOf(this.opts.self)} taking over as master: it did not accept the claim`);
    this.host.onClaimed([this.currentView(), ...views]);
    this.host.onMembersRemoved(removed);
    this.publish(); // before planning, as in removeMembers
    this.host.onView(this.currentView(), previous);
  }

  /** `Members {size:2, ver:2} [ Member [h]:p - uuid this, Member … ]`, one line (config.md, "Logging"). */
  membersLine(): string {
    return formatMembersLine(this.membersVersion, this.members.map((x) => ({ host: x.host, port: x.port, uuid: x.uuid, self: x.uuid === this.opts.self.uuid, lite: x.lite })));
  }
}
