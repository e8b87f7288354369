// The CP subsystem on one member: the member service (cluster/service.ts) that owns the cp*
// messages, holds this member's replicas of its CP groups, runs discovery, and routes every CP call
// to its group's leader (spec/cp.md "CP members, groups and discovery", "Raft").
//
// - Discovery: the master names the CP members, the first `cp-member-count` data members of its
//   list (CP member UUID = member UUID), in a cpDiscover for the current seed; once set for a seed
//   it never changes (a new master repeats it). The first `group-size` start METADATA; its leader
//   commits `init` (the CP member list; `default` is created with it) and from then on tells every
//   member the CP members and groups (cpView), after every change and every 2 s.
// - Groups: a CP member holds a replica of every group METADATA lists it in (created when it
//   learns so, stopped when a group is destroyed or leaves it). Raft messages travel as cpRaft,
//   addressed by CP member UUID, resolved to the member's address through the CP member list.
// - Calls: the receiving member (CP or not) routes a call through CpRouter to the leader it knows
//   (its own replica when it leads), follows NOT_LEADER hints, and retries lost and indeterminate
//   outcomes with the same invocation UUID (the state machine applies each at most once) until
//   `grid.cp.call.timeout.millis`. Calls on the leader's member run on its replica directly.
// - Leaders' duties, every second: METADATA's leader commits init, one membership change at a time
//   for groups whose members left the CP member list or are below size, and removes CP members
//   missing longer than `missing-cp-member-auto-removal-seconds`; every group leader expires
//   sessions whose time passed, and every 30 s closes idle ones.
// - A member the cluster removed leads nothing any more: each replica is told at once
//   (RaftCore.memberGone), so a crashed leader is replaced within an election timeout.
// - Reset: the master raises the seed and tells every member (cpReset): every replica stops, every
//   structure is gone, discovery runs again with the new seed.
//
// Without CP persistence (part 2 of the CP subsystem) replicas keep their logs in memory: a
// member that restarts is a new member and not a CP member.
import type { EventSink } from '../util/timeline.js';
import { message } from '../cluster/messages.js';
import type { Message, MessageKind, MessageOf } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import type { CpSubsystemConfig } from '../config/types.js';
import type { Clock, Random, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';
import { GroupReplica } from './group-replica.js';
import type { CallFailure, ReplicaIo, ReplicaOptions } from './group-replica.js';
import { CpMetadata, METADATA } from './metadata.js';
import type { CpGroupInfo, CpMember, MetadataCommand } from './metadata.js';
import type { RaftMessage } from './raft/types.js';
import { decodeRaftMessage, encodeRaftMessage } from './raft/wire.js';
import { CpRouter } from './router.js';
import type { CpPersistence } from './cp-persistence.js';
import type { RaftStore } from './raft-store.js';
import type { RaftRestored } from './raft/core.js';
import type { AttemptAnswer, RouteOutcome } from './router.js';
import { CallStats, structureOf } from './call-stats.js';
import { replicaFigures, replicaOptionsOf, runOnReplica, sessionDuty, waitOf } from './replica-calls.js';
import type { CpGroupFigures } from './replica-calls.js';
export type { CpGroupFigures } from './replica-calls.js';
import { MetadataDuties } from './metadata-duties.js';
import { decodeCallPayload, encodeCallPayload, packJson, unpackJson } from './call-wire.js';
import type { CallPayload } from './call-wire.js';

export interface CpHost extends MemberContext {
  selfAddress(): string;
  isLite(): boolean;
  /** The data members (not lite) of the member list, in list order. */
  dataMembers(): { readonly uuid: string; readonly address: string }[];
  sendToAddress(address: string, m: Message): void;
}

export interface CpServiceOptions {
  readonly config: CpSubsystemConfig;
  /** grid.cp.call.timeout.millis */
  readonly callTimeoutMs: number;
  /** grid.cp.invocation.dedupe.seconds, in ms */
  readonly dedupeMs: number;
  /** grid.cp.leadership.rebalance.seconds, in ms: the METADATA leader evens out leaderships this often. */
  readonly rebalanceMs: number;
  readonly valueBytesMax: number;
  readonly clock: Clock;
  readonly timers: Timers;
  /** A later turn, as soon as possible (batches one turn's inputs into one ready). */
  readonly defer: (fn: () => void) => void;
  readonly random: Random;
  readonly newUuid: () => string;
  readonly log: ComponentLogger;
  /** The cluster's timeline: leader changes of the groups this member comes to lead. */
  readonly events?: EventSink;
  /** CP persistence (`<cp-subsystem><persistence-enabled>`), or null. */
  readonly persistence?: CpPersistence | null;
}

interface Held {
  readonly name: string;
  readonly id: number;
  readonly seed: number;
  readonly replica: GroupReplica;
  /** Its directory, with CP persistence. */
  readonly store: RaftStore | null;
  /** Leader-side duties in flight. */
  expiring: boolean;
  lastInactiveCheckMs: number;
  /** For the metrics: leaders seen, and the last one. */
  leaderChanges: number;
  lastLeader: string | null;
}

interface PendingCall {
  /** The CP member the attempt went to. */
  readonly target: string;
  readonly answer: (a: AttemptAnswer<unknown>) => void;
  readonly expiresMs: number;
}

const TICK_MS = 100;
const DUTY_EVERY_TICKS = 10;
/**
 * With CP persistence the master waits this long after enough members joined before it starts a
 * new CP subsystem: a CP member restarted on its directory tells the discovery it took part in
 * (a whole cluster restarted), and the master takes that one instead.
 */
const FRESH_DISCOVERY_GRACE_MS = 3000;
const VIEW_EVERY_MS = 2000;
const DISCOVER_EVERY_MS = 5000;
const INACTIVE_CHECK_MS = 30_000;
const ATTEMPT_TIMEOUT_MS = 3000;
const CALL_FAILURES: ReadonlySet<string> = new Set<CallFailure>(['not-leader', 'back-pressure', 'transferring', 'membership-change', 'not-ready', 'lost', 'indeterminate']);
const RAFT_LIMITS = { dataBytesMax: 64 * 1024 * 1024, entriesMax: 100_000 };

/** What a routed call yields: the state machine's answer and the log index it was produced at. */
export interface CpCallResult {
  readonly value: unknown;
  readonly index: number;
}

export type CpCallFailure = 'timeout' | 'indeterminate' | 'no-group' | 'discovery' | 'disabled';

export class CpService implements MemberService {
  readonly name = 'cp';
  readonly kinds: readonly MessageKind[] = ['cpRaft', 'cpCall', 'cpAnswer', 'cpDiscover', 'cpView', 'cpReset'];
  /** The CP subsystem's seed: raised by every reset (group ids carry it). */
  seed = 0;
  private discovery: { readonly seed: number; readonly groupSize: number; readonly members: readonly CpMember[] } | null = null;
  /** This member's CP member UUID, or null when it is not a CP member. */
  private localCp: string | null = null;
  /** The group directories found at start (checked before anything else runs), until their replica is made. */
  private readonly restoredStores = new Map<number, { store: RaftStore; restored: RaftRestored }>();
  /** This member restarted on a CP directory: it offers its discovery until it has a view. */
  private restored = false;
  private freshDiscoveryAtMs: number | null = null;
  private conflictLogged = false;
  private conflicted = false;
  /** The CP members and groups as METADATA last told (or as this member's METADATA replica holds them). */
  private view = new CpMetadata(0);
  private viewIndex = 0;
  private readonly replicas = new Map<string, Held>();
  private readonly dirty = new Set<Held>();
  private flushScheduled = false;
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 1;
  private nextSeq = 1;
  private readonly inFlight = new Set<number>();
  private tickTimer: TimerHandle | null = null;
  private ticks = 0;
  private lastViewSentMs = -Infinity;
  private lastDiscoverSentMs = -Infinity;
  private stopped = false;
  private readonly router: CpRouter<{ readonly payload: CallPayload; readonly invocation: string }, unknown>;
  private readonly replicaOpts: ReplicaOptions;
  /** Counters for the metrics call. */
  readonly counters = { calls: 0, callFailures: 0, raftMessagesIn: 0, raftMessagesOut: 0 };
  /** METADATA's leader's duties (metadata-duties.ts). */
  private readonly duties: MetadataDuties;
  /** CP calls routed through this member, by structure and outcome (call-stats.ts). */
  readonly callStats = new CallStats();

  constructor(
    private readonly host: CpHost,
    private readonly o: CpServiceOptions,
  ) {
    const c = o.config;
    const ra = c.raftAlgorithm;
    this.replicaOpts = replicaOptionsOf(c, TICK_MS, o.valueBytesMax, o.dedupeMs);
    this.router = new CpRouter(
      { callTimeoutMs: o.callTimeoutMs, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, backoffMs: ra.appendRequestBackoffTimeoutInMillis, failOnIndeterminate: c.failOnIndeterminateOperationState },
      {
        groupMembers: (g) => this.groupInfo(g)?.members ?? null,
        localLeader: (g) => {
          const leader = this.heldByName(g)?.replica.core.status().leader ?? null;
          // A leader whose member the cluster removed leads nothing, though the replica has not elected another yet.
          return leader !== null && this.cpUuidPresent(leader) ? leader : null;
        },
        attempt: (target, g, call, answer) => this.attempt(target, g, call, answer),
        schedule: (fn, ms) => {
          const h = o.timers.setTimeout(fn, ms);
          return { cancel: () => o.timers.clearTimeout(h) };
        },
        monotonicMs: () => o.clock.monotonicMs(),
        random: () => o.random.next(),
      },
    );
    this.duties = new MetadataDuties({
      discovery: () => this.discovery,
      call: (group, payload, done, opts) => this.call(group, payload, '', true, done, opts),
      present: (m) => this.cpMemberPresent(m),
      cpMembers: () => this.view.cpMembers(),
      addressOfCp: (u) => this.addressOfCp(u),
      autoRemovalMs: c.missingCpMemberAutoRemovalSeconds * 1000,
      rebalanceMs: o.rebalanceMs,
      log: o.log,
    });
  }

  get enabled(): boolean {
    return this.o.config.cpMemberCount > 0;
  }

  /** The configuration of the semaphore of this name (group suffix stripped): jdk-compatible, initial permits. */
  semaphoreConfig(name: string): { readonly jdkCompatible: boolean; readonly initialPermits: number } {
    return this.replicaOpts.blocking?.semaphore(name) ?? { jdkCompatible: false, initialPermits: 0 };
  }

  get callTimeoutMs(): number {
    return this.o.callTimeoutMs;
  }

  start(): void {
    if (!this.enabled || this.tickTimer !== null) return;
    this.restore();
    const id = this.localCp;
    const d = this.discovery;
    if (this.restored && id !== null && d !== null) {
      const meta = d.members.slice(0, d.groupSize).map((m) => m.uuid);
      if (meta.includes(id)) this.markDirty(this.createReplica(METADATA, 0, meta));
    }
    const tick = (): void => {
      this.tickTimer = this.o.timers.setTimeout(tick, TICK_MS);
      this.onTick();
    };
    this.tickTimer = this.o.timers.setTimeout(tick, TICK_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.tickTimer !== null) this.o.timers.clearTimeout(this.tickTimer);
    this.tickTimer = null;
    for (const h of this.replicas.values()) h.replica.stop();
    this.replicas.clear();
    for (const p of this.pending.values()) p.answer({ ok: false, failure: 'not-leader', leader: null });
    this.pending.clear();
  }

  // ── what the API layer reads ──────────────────────────────────────────────────────────────────

  /**
   * With CP persistence: this member's CP identity and every group directory, read at start (the
   * member knows its address then) before it joins. A malformed one throws: the member stops,
   * naming the file and offset.
   */
  private restore(): void {
    const p = this.o.persistence;
    const found = p === null || p === undefined ? null : p.restore();
    if (p === null || p === undefined || found === null) return;
    const id = found.identity;
    for (const [gid, g] of found.groups) this.restoredStores.set(gid, g);
    this.seed = id.seed;
    this.view = new CpMetadata(id.seed);
    this.localCp = id.cpUuid;
    this.discovery = { seed: id.seed, groupSize: id.groupSize, members: id.members };
    this.restored = true;
    this.o.log.info(`CP persistence: this member is CP member ${id.cpUuid} again (seed ${id.seed}), with ${this.restoredStores.size} group director${this.restoredStores.size === 1 ? 'y' : 'ies'} under ${p.baseDir}`);
  }

  /** With CP persistence, records who this member is before it acts as that CP member. */
  private saveIdentity(): void {
    const p = this.o.persistence;
    const d = this.discovery;
    if (p === null || p === undefined || this.localCp === null || d === null) return;
    p.save({ cpUuid: this.localCp, address: this.host.selfAddress(), seed: this.seed, groupSize: d.groupSize, members: d.members });
  }

  /** Discovery is complete here: this member knows METADATA's committed CP member list. */
  get discovered(): boolean {
    return this.view.isInitialized();
  }

  get localCpUuid(): string | null {
    return this.localCp;
  }

  cpMembers(): readonly CpMember[] {
    return this.view.cpMembers();
  }

  groups(): CpGroupInfo[] {
    return this.view.groupList();
  }

  groupInfo(name: string): CpGroupInfo | undefined {
    if (name === METADATA && !this.view.isInitialized() && this.discovery !== null) {
      return { name: METADATA, id: 0, seed: this.seed, members: this.discovery.members.slice(0, this.discovery.groupSize).map((m) => m.uuid), status: 'ACTIVE' };
    }
    return this.view.group(name);
  }

  addressOfCp(cpUuid: string): string | null {
    return this.view.cpMembers().find((m) => m.uuid === cpUuid)?.address ?? this.discovery?.members.find((m) => m.uuid === cpUuid)?.address ?? null;
  }

  /** Whether a CP member's process is in the cluster (true when the CP member is not known here). */
  private cpUuidPresent(cpUuid: string): boolean {
    const m = this.view.cpMembers().find((x) => x.uuid === cpUuid) ?? this.discovery?.members.find((x) => x.uuid === cpUuid);
    return m === undefined || this.cpMemberPresent(m);
  }

  /**
   * Whether the member that holds a CP member is in the cluster now. With CP persistence a CP
   * member restarted on its directory comes back as a new cluster member at the same address.
   */
  cpMemberPresent(m: CpMember): boolean {
    if (this.host.isMember(m.memberUuid)) return true;
    return this.o.persistence !== null && this.o.persistence !== undefined && this.host.dataMembers().some((d) => d.address === m.address);
  }

  /** The replicas this member holds, for the metrics call. */
  figures(): CpGroupFigures[] {
    return [...this.replicas.values()].map((h) => replicaFigures(h.name, h.replica, h.leaderChanges));
  }

  /**
   * Routes a call to `group`'s leader. `idempotent`: a retry after an indeterminate outcome is safe
   * even with fail-on-indeterminate-operation-state (reads, and writes the state machine dedupes).
   */
  newUuid(): string {
    return this.o.newUuid();
  }

  call(group: string, payload: CallPayload, invocation: string, idempotent: boolean, done: (r: { ok: true; result: CpCallResult } | { ok: false; failure: CpCallFailure }) => void, o: { waitMs?: number; timeoutMs?: number } = {}): void {
    this.counters.calls++;
    const startMs = this.o.clock.monotonicMs();
    const structure = structureOf(payload);
    const inner = done;
    done = (r) => {
      this.callStats.record(structure, r.ok ? 'ok' : r.failure, (this.o.clock.monotonicMs() - startMs) / 1000);
      inner(r);
    };
    if (!this.enabled) return done({ ok: false, failure: 'disabled' });
    if (group !== METADATA && !this.view.isInitialized()) return done({ ok: false, failure: 'discovery' });
    if (group === METADATA && this.groupInfo(METADATA) === undefined) return done({ ok: false, failure: 'discovery' });
    // A write without the caller's UUID gets this member's, which it retries with (structures.ts).
    // A call that may wait at the leader gets a UUID of its own instead: a member's sequence floor
    // must not stand still behind a lock held for minutes (every answer after it would be kept).
    const waits = payload.kind === 'write' && waitOf(payload) > 0;
    const mine = payload.kind === 'write' && invocation === '' && !waits ? this.newInvocation() : null;
    const id = mine?.id ?? (invocation === '' && waits ? this.o.newUuid() : invocation);
    this.router.route(
      group,
      { payload, invocation: id },
      idempotent,
      (r: RouteOutcome<unknown>) => {
        mine?.release();
        if (r.ok) return done({ ok: true, result: { value: r.value, index: r.index ?? 0 } });
        this.counters.callFailures++;
        done({ ok: false, failure: r.failure ?? 'timeout' });
      },
      o,
    );
  }

  /**
   * `~<member>/<seq>/<floor>`: floor is the lowest sequence still in flight here, so the state
   * machine forgets this member's answers below it (a Set iterates in insertion order, and
   * sequences are inserted rising: its first element is the lowest).
   */
  private newInvocation(): { id: string; release(): void } {
    const seq = this.nextSeq++;
    this.inFlight.add(seq);
    const floor = this.inFlight.values().next().value as number;
    return { id: `~${this.host.selfUuid}/${seq}/${floor}`, release: () => void this.inFlight.delete(seq) };
  }

  /** Promotion: this member becomes a CP member with a new CP UUID once METADATA committed it. */
  adoptCpUuid(uuid: string): void {
    this.localCp = uuid;
    this.saveIdentity();
    this.reconcile();
  }

  newCpMember(): CpMember {
    return { uuid: this.o.newUuid(), address: this.host.selfAddress(), memberUuid: this.host.selfUuid };
  }

  /** The master starts a reset: a new seed for every member (spec/cp.md "REST: management", reset). */
  startReset(): number {
    const seed = Math.max(this.o.clock.nowMs(), this.seed + 1);
    for (const u of this.host.memberUuids()) if (u !== this.host.selfUuid) this.host.send(u, message('cpReset', { seed }));
    this.resetLocal(seed);
    this.discover();
    return seed;
  }

  /** Applies a METADATA answer at once (a created group), before the next view arrives. */
  noteMetadata(snapshot: Uint8Array, index: number): void {
    this.adoptView(snapshot, index);
  }

  // ── membership events ─────────────────────────────────────────────────────────────────────────

  membersChanged(): void {
    if (this.enabled) this.discover(true);
  }

  masterChanged(): void {
    if (this.enabled) this.discover(true);
  }

  memberRemoved(uuid: string): void {
    if (!this.enabled) return;
    const gone = [...this.view.cpMembers(), ...(this.discovery?.members ?? [])].filter((m) => m.memberUuid === uuid).map((m) => m.uuid);
    for (const cp of new Set(gone)) {
      this.router.memberGone(cp);
      // Attempts sent there get no answer: the router tries another member now, not after its attempt timeout.
      for (const [id, p] of [...this.pending]) {
        if (p.target !== cp) continue;
        this.pending.delete(id);
        p.answer({ ok: false, failure: 'not-leader', leader: null });
      }
      for (const h of this.replicas.values()) {
        h.replica.memberGone(cp);
        this.markDirty(h);
      }
    }
  }

  // ── messages ──────────────────────────────────────────────────────────────────────────────────

  handle(from: Peer, m: Message): void {
    if (!this.enabled || this.stopped) return;
    switch (m.kind) {
      case 'cpRaft':
        return this.onRaft(m);
      case 'cpCall':
        return this.onCall(from, m);
      case 'cpAnswer':
        return this.onAnswer(m);
      case 'cpDiscover':
        return this.onDiscover(m.body, from.uuid);
      case 'cpView':
        return this.onView(m.body);
      case 'cpReset':
        if (m.body.seed > this.seed) this.resetLocal(m.body.seed);
        return;
      default:
        return;
    }
  }

  private onRaft(m: MessageOf<'cpRaft'>): void {
    if (m.body.seed !== this.seed || this.localCp === null) return;
    let held = this.replicas.get(key(m.body.seed, m.body.groupId));
    if (held === undefined) {
      // A group METADATA lists this member in, heard of before its view: create it now.
      const g = this.view.groupList().find((x) => x.id === m.body.groupId);
      if (g === undefined || !g.members.includes(this.localCp)) return;
      held = this.createReplica(g.name, g.id, g.members);
    }
    let raft: RaftMessage;
    try {
      raft = decodeRaftMessage(m.body.raft, RAFT_LIMITS);
    } catch (e) {
      this.o.log.warning(`a malformed CP Raft message for group ${held.name} was dropped: ${(e as Error).message}`);
      return;
    }
    if (raft.to !== this.localCp) return;
    this.counters.raftMessagesIn++;
    held.replica.step(raft);
    this.markDirty(held);
  }

  private onCall(from: Peer, m: MessageOf<'cpCall'>): void {
    const reply = (a: AttemptAnswer<unknown>): void => {
      const body = a.ok ? { ok: true, failure: '', leader: '', index: a.index, result: packJson(a.value) } : { ok: false, failure: a.failure, leader: a.leader ?? '', index: 0, result: Buffer.alloc(0) };
      this.host.sendToAddress(from.address, message('cpAnswer', body, m.callId));
    };
    const held = m.body.seed === this.seed ? this.replicas.get(key(m.body.seed, m.body.groupId)) : undefined;
    if (held === undefined) return reply({ ok: false, failure: 'not-leader', leader: null });
    let payload: CallPayload;
    try {
      payload = decodeCallPayload(m.body.payload, this.o.valueBytesMax);
    } catch (e) {
      this.o.log.warning(`a malformed CP call for group ${held.name} was refused: ${(e as Error).message}`);
      return reply({ ok: false, failure: 'not-ready', leader: null });
    }
    this.runLocal(held, payload, m.body.invocation, reply);
  }

  private onAnswer(m: MessageOf<'cpAnswer'>): void {
    const p = this.pending.get(m.callId);
    if (p === undefined) return;
    this.pending.delete(m.callId);
    const b = m.body;
    if (!b.ok) return p.answer({ ok: false, failure: CALL_FAILURES.has(b.failure) ? (b.failure as CallFailure) : 'not-ready', leader: b.leader === '' ? null : b.leader });
    let value: unknown;
    try {
      value = unpackJson(b.result);
    } catch {
      return p.answer({ ok: false, failure: 'not-ready', leader: null });
    }
    p.answer({ ok: true, value, index: b.index });
  }

  private onDiscover(d: MessageOf<'cpDiscover'>['body'], from: string | null = null): void {
    if (d.seed < this.seed) {
      if (this.restored && !this.conflictLogged && (from === null || from === this.host.masterUuid())) {
        this.conflictLogged = true;
        this.o.log.severe(`CP persistence: this member restarted as CP member ${this.localCp ?? '?'} of seed ${this.seed}, but the cluster runs the CP subsystem of an older seed ${d.seed}; its directory is kept, not used. Reset the CP subsystem, or restart the cluster with this member among the first`);
      }
      return;
    }
    if (d.seed > this.seed) {
      // A higher seed is a reset, and a reset removes this member's CP directories: only the
      // master's word does that. A restarted member's offer of its old discovery is taken only by a
      // member that has none (a whole cluster restarted).
      const fromMaster = from === null || from === this.host.masterUuid();
      if (!fromMaster && (this.discovery !== null || this.restored)) return;
      this.resetLocal(d.seed);
    }
    if (this.discovery !== null) {
      const mine = this.discovery.members.map((m) => m.uuid).join(',');
      if (this.restored && d.members.map((m) => m.uuid).join(',') !== mine && !this.conflictLogged) {
        this.conflictLogged = true;
        // Views of the other CP subsystem are not taken either: they would drop this member's
        // replicas and remove their directories.
        this.conflicted = true;
        this.o.log.severe(
          `CP persistence: this member restarted as CP member ${this.localCp ?? '?'} of seed ${this.seed}, but the cluster started a new CP subsystem with other CP members (${d.members.map((m) => m.address).join(', ')}); its directory is kept, not used. Restart the CP members within ${FRESH_DISCOVERY_GRACE_MS / 1000} s of each other, or reset the CP subsystem`,
        );
      }
      return;
    }
    this.discovery = { seed: d.seed, groupSize: d.groupSize, members: d.members.map((x) => ({ uuid: x.uuid, address: x.address, memberUuid: x.memberUuid })) };
    const me = d.members.find((x) => x.memberUuid === this.host.selfUuid);
    if (me !== undefined) {
      this.localCp = me.uuid;
      this.saveIdentity();
    }
    const metaMembers = d.members.slice(0, d.groupSize).map((x) => x.uuid);
    if (this.localCp !== null && metaMembers.includes(this.localCp) && !this.replicas.has(key(this.seed, 0))) {
      this.o.log.info(`CP discovery (seed ${this.seed}): ${d.members.length} CP members; this member is one, and starts METADATA with ${metaMembers.length}`);
      this.createReplica(METADATA, 0, metaMembers);
    } else if (me === undefined) {
      this.o.log.fine(`CP discovery (seed ${this.seed}): this member is not a CP member; it serves CP calls by routing them`);
    }
  }

  private onView(v: MessageOf<'cpView'>['body']): void {
    if (v.seed !== this.seed || this.conflicted) return;
    if (v.index <= this.viewIndex) return;
    this.adoptView(v.metadata, v.index);
  }

  private adoptView(snapshot: Uint8Array, index: number): void {
    if (index <= this.viewIndex && this.view.isInitialized()) return;
    const next = new CpMetadata(this.seed);
    try {
      next.restore(snapshot);
    } catch (e) {
      this.o.log.warning(`a malformed CP view was dropped: ${(e as Error).message}`);
      return;
    }
    const wasInitialized = this.view.isInitialized();
    this.view = next;
    this.viewIndex = index;
    if (!wasInitialized && next.isInitialized()) this.o.log.info(`CP discovery complete (seed ${this.seed}): CP members ${next.cpMembers().map((m) => m.address).join(', ')}`);
    this.reconcile();
  }

  // ── discovery and reset ───────────────────────────────────────────────────────────────────────

  /** The master names the CP members once per seed and repeats it (to joiners, and while METADATA is young). */
  private discover(now = false): void {
    if (!this.host.joined()) return;
    if (!this.host.isMaster()) {
      // Restarted on a CP directory: offer the discovery it took part in, until a view arrives.
      if (this.restored && !this.view.isInitialized()) this.sendDiscovery(now);
      return;
    }
    if (this.discovery === null) {
      const data = this.host.dataMembers();
      if (data.length < this.o.config.cpMemberCount) return;
      if (this.o.persistence !== null && this.o.persistence !== undefined) {
        const t = this.o.clock.monotonicMs();
        this.freshDiscoveryAtMs ??= t + FRESH_DISCOVERY_GRACE_MS;
        if (t < this.freshDiscoveryAtMs) return;
      }
      const members = data.slice(0, this.o.config.cpMemberCount).map((m) => ({ uuid: m.uuid, address: m.address, memberUuid: m.uuid }));
      this.onDiscover({ seed: this.seed, groupSize: this.o.config.groupSize, members });
    }
    this.sendDiscovery(now);
  }

  private sendDiscovery(now: boolean): void {
    const d = this.discovery;
    if (d === null) return;
    const t = this.o.clock.monotonicMs();
    if (!now && t - this.lastDiscoverSentMs < DISCOVER_EVERY_MS) return;
    this.lastDiscoverSentMs = t;
    const m = message('cpDiscover', { seed: d.seed, groupSize: d.groupSize, members: d.members });
    for (const u of this.host.memberUuids()) if (u !== this.host.selfUuid) this.host.send(u, m);
  }

  private resetLocal(seed: number): void {
    this.o.log.info(`CP subsystem reset: seed ${this.seed} → ${seed}; every CP group, session and structure of the old seed is gone`);
    for (const h of this.replicas.values()) h.replica.stop();
    this.replicas.clear();
    this.dirty.clear();
    if (this.localCp !== null) this.o.persistence?.removeMember(this.localCp);
    this.restoredStores.clear();
    this.restored = false;
    this.freshDiscoveryAtMs = null;
    this.seed = seed;
    this.discovery = null;
    this.localCp = null;
    this.view = new CpMetadata(seed);
    this.viewIndex = 0;
    this.duties.reset();
  }

  // ── replicas ──────────────────────────────────────────────────────────────────────────────────

  private createReplica(name: string, id: number, members: readonly string[]): Held {
    let restored: RaftRestored = { hardState: { term: 0, vote: null, commit: 0 }, snapshot: { index: 0, term: 0, members: [...members], data: new Uint8Array(0) }, entries: [] };
    let store: RaftStore | null = null;
    const p = this.o.persistence;
    if (p !== null && p !== undefined && this.localCp !== null) {
      const found = this.restoredStores.get(id);
      this.restoredStores.delete(id);
      store = found?.store ?? p.store(this.localCp, id);
      restored = found?.restored ?? store.load() ?? store.init(members);
    }
    const replica = new GroupReplica(this.localCp as string, { ...this.replicaOpts, seed: this.seed }, this.o.random, restored, () => this.o.clock.nowMs());
    const held: Held = { name, id, seed: this.seed, replica, store, expiring: false, lastInactiveCheckMs: this.o.clock.monotonicMs(), leaderChanges: 0, lastLeader: null };
    this.replicas.set(key(this.seed, id), held);
    this.o.log.fine(`CP group ${name} (id ${id}, seed ${this.seed}): this member holds a replica; members ${members.join(', ')}`);
    return held;
  }

  /** Holds a replica of every group METADATA lists this member in, and of no other. */
  private reconcile(): void {
    if (this.localCp === null || !this.view.isInitialized()) return;
    const me = this.localCp;
    for (const g of this.view.groupList()) {
      if (g.name === METADATA || !g.members.includes(me) || this.replicas.has(key(this.seed, g.id))) continue;
      this.markDirty(this.createReplica(g.name, g.id, g.members));
    }
    // A directory the view does not list yet stays: the view may be older than the directory (a
    // member restarted learns views from its own METADATA replica first). One of a group destroyed
    // while this member was down is left on disk (the log says nothing of it; docs/cp.md).
    for (const [k, h] of [...this.replicas]) {
      const g = this.view.group(h.name);
      if (g !== undefined && g.id === h.id && g.members.includes(me)) continue;
      if (h.id === 0 && g === undefined) continue;
      this.o.log.info(`CP group ${h.name} (id ${h.id}): this member no longer holds a replica (${g === undefined || g.id !== h.id ? 'the group was destroyed' : 'it left the group'})`);
      h.replica.stop();
      this.replicas.delete(k);
      if (this.localCp !== null) this.o.persistence?.removeGroup(this.localCp, h.id);
    }
  }

  private heldByName(name: string): Held | undefined {
    const g = this.groupInfo(name);
    return g === undefined ? undefined : this.replicas.get(key(this.seed, g.id));
  }

  private markDirty(h: Held): void {
    this.dirty.add(h);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Inputs of one turn go out as one ready batch (one append, one send per follower).
    this.o.defer(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const list = [...this.dirty];
    this.dirty.clear();
    for (const h of list) this.process(h);
  }

  private process(h: Held): void {
    if (h.replica.isStopped || this.replicas.get(key(h.seed, h.id)) !== h) return;
    h.replica.process(this.io(h));
    const leader = h.replica.core.status().leader;
    if (leader !== null && leader !== h.lastLeader) {
      h.leaderChanges++;
      h.lastLeader = leader;
      this.o.log.fine(`CP group ${h.name}: leader ${this.addressOfCp(leader) ?? leader} in term ${h.replica.core.status().term}`);
      if (leader === this.localCp) this.o.events?.record('cp-leader-changed', `CP group ${h.name}: ${this.addressOfCp(leader) ?? leader} leads in term ${h.replica.core.status().term}`);
    }
    if (h.id === 0) this.afterMetadata(h);
  }

  private io(h: Held): ReplicaIo {
    return {
      persist: (ready, done) => (h.store === null ? done(null) : h.store.persist(ready, done)),
      send: (messages) => {
        for (const m of messages) this.sendRaft(h, m);
      },
      persistSnapshot: (snapshot, kept) => h.store?.compact(snapshot, kept),
      failed: (e) => this.o.log.severe(`CP group ${h.name}: persisting failed, the replica stops: ${e.message}`),
    };
  }

  private sendRaft(h: Held, m: RaftMessage): void {
    this.counters.raftMessagesOut++;
    if (m.to === this.localCp) {
      this.o.defer(() => {
        if (this.replicas.get(key(h.seed, h.id)) !== h) return;
        h.replica.step(m);
        this.markDirty(h);
      });
      return;
    }
    const address = this.addressOfCp(m.to);
    if (address === null) return;
    this.host.sendToAddress(address, message('cpRaft', { seed: h.seed, groupId: h.id, raft: encodeRaftMessage(m) }));
  }

  /** After METADATA's replica processed: adopt what it applied; its leader tells every member. */
  private afterMetadata(h: Held): void {
    const st = h.replica.core.status();
    if (st.applied > this.viewIndex) {
      this.adoptView(h.replica.structures.metadata.snapshot(), st.applied);
      if (st.role === 'leader') this.sendView(h);
    }
  }

  private sendView(h: Held): void {
    const st = h.replica.core.status();
    if (st.role !== 'leader' || !this.view.isInitialized()) return;
    this.lastViewSentMs = this.o.clock.monotonicMs();
    const m = message('cpView', { seed: this.seed, term: st.term, index: this.viewIndex, metadata: this.view.snapshot() });
    for (const u of this.host.memberUuids()) if (u !== this.host.selfUuid) this.host.send(u, m);
  }

  // ── calls ─────────────────────────────────────────────────────────────────────────────────────

  private attempt(target: string, group: string, call: { payload: CallPayload; invocation: string }, answer: (a: AttemptAnswer<unknown>) => void): void {
    const g = this.groupInfo(group);
    if (g === undefined) return answer({ ok: false, failure: 'not-ready', leader: null });
    if (target === this.localCp) {
      const held = this.replicas.get(key(this.seed, g.id));
      if (held !== undefined) return this.runLocal(held, call.payload, call.invocation, answer);
    }
    const address = this.addressOfCp(target);
    if (address === null || !this.cpUuidPresent(target)) return answer({ ok: false, failure: 'not-ready', leader: null });
    const callId = this.nextCallId++;
    this.pending.set(callId, { target, answer, expiresMs: this.o.clock.monotonicMs() + this.o.callTimeoutMs * 2 + 60_000 });
    const write = call.payload.kind !== 'read';
    const waitMs = call.payload.kind === 'write' ? waitOf(call.payload) : 0;
    this.host.sendToAddress(address, message('cpCall', { group, seed: this.seed, groupId: g.id, write, invocation: call.invocation, payload: encodeCallPayload(call.payload, this.o.valueBytesMax), waitMs }, callId));
  }

  private runLocal(held: Held, payload: CallPayload, invocation: string, answer: (a: AttemptAnswer<unknown>) => void): void {
    runOnReplica(held.replica, payload, invocation, answer);
    this.markDirty(held);
  }

  // ── timers and leaders' duties ────────────────────────────────────────────────────────────────

  private onTick(): void {
    for (const h of this.replicas.values()) {
      h.replica.tick();
      this.markDirty(h);
    }
    if (++this.ticks % DUTY_EVERY_TICKS !== 0) return;
    this.discover();
    const now = this.o.clock.monotonicMs();
    for (const [id, p] of [...this.pending]) {
      if (p.expiresMs > now) continue;
      this.pending.delete(id);
    }
    for (const h of this.replicas.values()) {
      if (h.replica.core.status().role !== 'leader') continue;
      this.sessionDuties(h, now);
      if (h.id === 0) this.metadataDuties(h, now);
    }
  }

  private sessionDuties(h: Held, now: number): void {
    if (sessionDuty(h, this.o.clock.nowMs(), now, INACTIVE_CHECK_MS)) this.markDirty(h);
  }

  private metadataDuties(h: Held, now: number): void {
    if (now - this.lastViewSentMs >= VIEW_EVERY_MS) this.sendView(h);
    this.duties.run(h.replica.structures.metadata, now, (command, done) => this.metaWrite(h, command, done));
  }

  private metaWrite(h: Held, command: MetadataCommand, done: () => void): void {
    h.replica.write('', { kind: 'meta', command }, () => done());
    this.markDirty(h);
  }
}

function key(seed: number, id: number): string {
  return `${seed}.${id}`;
}
