// One member of one Raft group, with no I/O: messages and ticks go in (step, tick), proposals and
// reads are asked for (propose, proposeMembers, readIndex), and a ready batch comes out saying what
// to persist, send, install and apply. The shell does those in that order and calls advance().
//
// The rules it keeps (Raft, Ongaro's dissertation; the shape of etcd-io/raft):
// - Pre-vote: a member asks whether it could win before it raises its term, so a member cut off
//   and coming back does not depose a working leader.
// - Leader stickiness: a member that heard its leader within the election timeout ignores votes
//   (unless the leader itself hands over, `transfer`). A leader always does, while check-quorum holds.
// - Check-quorum: a leader that heard from no majority for heartbeatPeriod × missedHeartbeatsMax
//   steps down. A follower suspects a silent leader after the same time, or at once (within the
//   election jitter) when the shell says the leader's member is gone from the cluster.
// - Commit is the majority's match index, counted only for an entry of the current term; a new
//   leader appends a noop of its term at once so that happens quickly.
// - Reads: read index. The leader notes its commit index, proves it is still leader with a round
//   of heartbeats a majority answers, and the read is answered once that index is applied.
// - Single-server membership changes through the log, in effect when appended, one at a time,
//   only after the leader committed an entry of its term. A leader that removed itself steps
//   down once the change commits; a member not in its own member list never campaigns.
// - Back-pressure: proposals are refused while lastIndex − commit reaches uncommittedEntriesMax,
//   during a membership change or a leadership transfer.
import { assert } from '../../util/assert.js';
import type { Random } from '../../util/clock.js';
import { RaftLog } from './log.js';
import { ReadIndexQueue } from './read-index.js';
import { quorumOf } from './types.js';
import type { Entry, HardState, ProposeResult, RaftMessage, RaftOptions, Ready, Refusal, RefusalCode, Role, Snapshot } from './types.js';

type MessageOf<T extends RaftMessage['type']> = Extract<RaftMessage, { type: T }>;
type Outgoing = RaftMessage extends infer M ? (M extends RaftMessage ? Omit<M, 'from' | 'term'> : never) : never;

/** What the leader knows of one follower. */
interface Progress {
  match: number;
  next: number;
  /** probe: one append at a time until one matches; replicate: pipelined; snapshot: sending one. */
  state: 'probe' | 'replicate' | 'snapshot';
  /** Probe: an append awaits its answer. */
  probeSent: boolean;
  /** Replicate: the last index of each append in flight. */
  inFlight: number[];
  sinceSentTicks: number;
  /** Ticks since an append with entries, a probe or a snapshot chunk went without an answer (heartbeats do not count). */
  waitTicks: number;
  backoffTicks: number;
  /** Answered since the last quorum check. */
  active: boolean;
  /** The highest read round it answered. */
  round: number;
  /** The highest commit index sent to it. */
  commitSent: number;
  snap: { readonly s: Snapshot; offset: number } | null;
}

export interface RaftCounters {
  electionsStarted: number;
  leaderships: number;
  appendBatches: number;
  appendEntries: number;
  refusedProposals: number;
  snapshotsSent: number;
  snapshotsInstalled: number;
}

/** What a member restarted on its disk had: nothing for a new group (give the initial member list as the snapshot's). */
export interface RaftRestored {
  readonly hardState: HardState;
  readonly snapshot: Snapshot;
  readonly entries: readonly Entry[];
}

const NOTHING = new Uint8Array(0);

export class RaftCore {
  readonly self: string;
  readonly counters: RaftCounters = { electionsStarted: 0, leaderships: 0, appendBatches: 0, appendEntries: 0, refusedProposals: 0, snapshotsSent: 0, snapshotsInstalled: 0 };
  private readonly opts: RaftOptions;
  private readonly random: Random;
  private readonly log: RaftLog;
  private term: number;
  private vote: string | null;
  private role: Role = 'follower';
  private leader: string | null = null;
  private readonly progress = new Map<string, Progress>();
  private readonly votes = new Map<string, boolean>();
  // Timers, in ticks.
  private readonly electionMinTicks: number;
  private readonly electionJitterTicks: number;
  private readonly heartbeatTicks: number;
  private readonly silenceTicks: number;
  private readonly backoffMinTicks: number;
  private readonly backoffMaxTicks: number;
  private electionTimeoutTicks = 0;
  private electionElapsed = 0;
  private heardElapsed = 0;
  private quorumElapsed = 0;
  /** The shell said the leader's member left the cluster. */
  private leaderGone = false;
  private transfer: { to: string; elapsed: number; sent: boolean } | null = null;
  private readonly reads = new ReadIndexQueue();
  // Snapshot being received, and one received to hand to the shell.
  private incoming: { index: number; term: number; members: readonly string[]; total: number; chunks: Uint8Array[]; received: number } | null = null;
  private installed: Snapshot | null = null;
  // Ready bookkeeping.
  private msgs: RaftMessage[] = [];
  private bcastPending = false;
  private persistedIndex: number;
  private lastHard: HardState;
  private lastStatus: { role: Role; term: number; leader: string | null } = { role: 'follower', term: -1, leader: null };
  private inReady: Ready | null = null;

  constructor(self: string, opts: RaftOptions, random: Random, restored: RaftRestored) {
    this.self = self;
    this.opts = opts;
    this.random = random;
    this.log = new RaftLog(restored.snapshot, restored.entries, restored.hardState.commit);
    this.term = restored.hardState.term;
    this.vote = restored.hardState.vote;
    this.lastHard = this.hardState();
    this.persistedIndex = this.log.lastIndex();
    const ticks = (ms: number): number => Math.max(1, Math.ceil(ms / opts.tickMs));
    this.electionMinTicks = ticks(opts.electionTimeoutMs);
    this.electionJitterTicks = opts.electionJitterMs === 0 ? 0 : ticks(opts.electionJitterMs);
    this.heartbeatTicks = ticks(opts.heartbeatPeriodMs);
    this.silenceTicks = this.heartbeatTicks * opts.missedHeartbeatsMax;
    this.backoffMinTicks = ticks(opts.appendBackoffMs);
    this.backoffMaxTicks = this.backoffMinTicks * 8;
    this.resetElectionTimeout();
  }

  // ---- Inputs -------------------------------------------------------------------------------

  tick(): void {
    this.notInReady();
    if (this.role === 'leader') this.tickLeader();
    else this.tickElection();
  }

  step(m: RaftMessage): void {
    this.notInReady();
    if (m.to !== this.self || m.from === this.self) return;
    if (m.term > this.term) {
      const request = m.type === 'preVote' || m.type === 'vote';
      if (request && !(m.type === 'vote' && m.transfer) && this.inLease()) return; // stickiness
      if (m.type === 'preVote' || (m.type === 'preVoteAnswer' && m.granted)) {
        // A pre-vote names the term its sender would campaign in; it changes no one's term.
      } else {
        const fromLeader = m.type === 'append' || m.type === 'snapshot' || m.type === 'timeoutNow';
        this.becomeFollower(m.term, fromLeader ? m.from : null);
      }
    } else if (m.term < this.term) {
      // A stale leader learns the term from the refusal and steps down; the rest is ignored.
      if (m.type === 'append') this.send({ type: 'appendAnswer', to: m.from, success: false, index: m.prevIndex, hintIndex: 0, hintTerm: 0, round: m.round });
      else if (m.type === 'snapshot') this.send({ type: 'snapshotAnswer', to: m.from, index: m.index, nextOffset: 0, matchIndex: 0 });
      else if (m.type === 'preVote') this.send({ type: 'preVoteAnswer', to: m.from, granted: false });
      return;
    }
    switch (m.type) {
      case 'preVote':
      case 'vote':
        return this.onVoteRequest(m);
      case 'preVoteAnswer':
      case 'voteAnswer':
        return this.onVoteAnswer(m);
      case 'append':
        this.heardFromLeader(m.from);
        return this.onAppend(m);
      case 'snapshot':
        this.heardFromLeader(m.from);
        return this.onSnapshot(m);
      case 'timeoutNow':
        if (this.role === 'follower' && this.promotable()) this.campaign('transfer');
        return;
      case 'appendAnswer':
        if (this.role === 'leader') this.onAppendAnswer(m);
        return;
      case 'snapshotAnswer':
        if (this.role === 'leader') this.onSnapshotAnswer(m);
        return;
    }
  }

  /** Appends a command (leader only). Refused, with nothing appended, when the group cannot take it now. */
  propose(data: Uint8Array): ProposeResult {
    this.notInReady();
    const refusal = this.writeRefusal(false);
    if (refusal !== null) return refusal;
    return this.appendOwn('data', data, null);
  }

  /** Adds or removes one member of the group through the log (leader only). */
  proposeMembers(change: { readonly add: string } | { readonly remove: string }): ProposeResult {
    this.notInReady();
    const refusal = this.writeRefusal(true);
    if (refusal !== null) return refusal;
    const current = this.log.members();
    const next = 'add' in change ? (current.includes(change.add) ? null : [...current, change.add]) : current.includes(change.remove) ? current.filter((u) => u !== change.remove) : null;
    if (next === null) return { ok: true, index: this.log.configIndex(), term: this.log.term(this.log.configIndex()) as number };
    assert(next.length > 0, 'a group cannot remove its last member');
    const r = this.appendOwn('config', NOTHING, next);
    this.syncProgress();
    return r;
  }

  /** Asks for a linearizable read; its ReadState (with `ctx`) comes in a ready batch. Null = accepted. */
  readIndex(ctx: number): Refusal | null {
    this.notInReady();
    if (this.role !== 'leader') return this.refuse('not-leader');
    if (this.reads.size() >= this.opts.uncommittedEntriesMax) return this.refuse('back-pressure');
    if (this.log.term(this.log.commit) !== this.term) this.reads.wait(ctx);
    else this.registerRead(ctx);
    return null;
  }

  /** Hands leadership to `to` (leader only): writes are refused until it took over or the election timeout passed. */
  transferLeadership(to: string): Refusal | null {
    this.notInReady();
    if (this.role !== 'leader') return this.refuse('not-leader');
    if (to === this.self) return null;
    const pr = this.progress.get(to);
    if (pr === undefined) return this.refuse('membership-change');
    this.transfer = { to, elapsed: 0, sent: false };
    if (pr.match === this.log.lastIndex()) this.sendTimeoutNow();
    else this.sendAppend(to);
    return null;
  }

  /** The shell's word that a member left the cluster: a follower whose leader it was campaigns within the election jitter. */
  memberGone(uuid: string): void {
    this.notInReady();
    if (this.role === 'leader' || uuid !== this.leader) return;
    this.leaderGone = true;
    const wait = this.electionJitterTicks === 0 ? 0 : this.random.nextInt(this.electionJitterTicks);
    this.electionElapsed = Math.max(this.electionElapsed, this.electionTimeoutTicks - 1 - wait);
  }

  /** The shell took a snapshot of the state machine at `index` (applied): the log before it (but a tail) goes. */
  compact(index: number, data: Uint8Array): void {
    this.notInReady();
    this.log.compact(index, data, this.opts.entriesKeptAfterSnapshot);
  }

  // ---- Output -------------------------------------------------------------------------------

  hasReady(): boolean {
    if (this.inReady !== null) return false;
    return (
      this.msgs.length > 0 ||
      this.bcastPending ||
      this.reads.roundPending ||
      this.log.hasUnstable() ||
      this.installed !== null ||
      this.log.commit > this.log.applied ||
      this.reads.hasReady() ||
      !sameHard(this.lastHard, this.hardState()) ||
      this.statusChanged()
    );
  }

  ready(): Ready {
    this.notInReady();
    if (this.role === 'leader') {
      if (this.bcastPending) this.broadcastAppends();
      if (this.reads.roundPending) this.startRound();
    }
    this.bcastPending = false;
    const hard = this.hardState();
    const committed = this.log.commit > this.log.applied ? this.entriesBetween(this.log.applied + 1, this.log.commit) : [];
    const ready: Ready = {
      hardState: sameHard(this.lastHard, hard) ? null : hard,
      snapshot: this.installed,
      entries: this.log.takeUnstable(),
      messages: this.msgs,
      committed,
      reads: this.reads.takeReady(),
      status: this.statusChanged() ? { role: this.role, term: this.term, leader: this.leader } : null,
    };
    this.msgs = [];
    this.installed = null;
    this.inReady = ready;
    return ready;
  }

  /** The shell did everything `ready` asked. */
  advance(): void {
    const ready = this.inReady;
    assert(ready !== null, 'advance() without a ready batch');
    this.inReady = null;
    if (ready.hardState !== null) this.lastHard = ready.hardState;
    if (ready.status !== null) this.lastStatus = ready.status;
    this.persistedIndex = this.log.lastIndex();
    const last = ready.committed.at(-1);
    if (last !== undefined) this.log.applied = last.index;
    if (this.role === 'leader') this.maybeCommit();
  }

  status(): { role: Role; term: number; leader: string | null; vote: string | null; commit: number; applied: number; lastIndex: number; snapshotIndex: number; members: readonly string[]; firstIndex: number } {
    return { role: this.role, term: this.term, leader: this.leader, vote: this.vote, commit: this.log.commit, applied: this.log.applied, lastIndex: this.log.lastIndex(), snapshotIndex: this.log.snapshot.index, members: this.log.members(), firstIndex: this.log.firstIndex() };
  }

  /** The latest snapshot's index, term and member list (its data too). */
  snapshot(): Snapshot {
    return this.log.snapshot;
  }

  /** For checkers: the term of the entry at `index` here, if held. */
  termAt(index: number): number | undefined {
    return this.log.term(index);
  }

  entryAt(index: number): Entry | undefined {
    return this.log.entry(index);
  }

  // ---- Elections ----------------------------------------------------------------------------

  private tickElection(): void {
    this.electionElapsed++;
    this.heardElapsed++;
    if (this.electionElapsed < this.electionTimeoutTicks) return;
    this.electionElapsed = 0;
    this.resetElectionTimeout();
    if (!this.promotable()) return;
    if (this.role !== 'follower' || this.leader === null || this.leaderGone || this.heardElapsed >= this.silenceTicks) this.campaign('pre');
  }

  private campaign(kind: 'pre' | 'vote' | 'transfer'): void {
    this.electionElapsed = 0;
    this.resetElectionTimeout();
    this.votes.clear();
    this.votes.set(this.self, true);
    this.leader = null;
    if (kind === 'pre') {
      this.role = 'preCandidate';
      for (const u of this.others()) this.send({ type: 'preVote', to: u, lastIndex: this.log.lastIndex(), lastTerm: this.log.lastTerm() }, this.term + 1);
      if (this.granted() >= this.quorum()) this.campaign('vote');
      return;
    }
    this.counters.electionsStarted++;
    this.role = 'candidate';
    this.term++;
    this.vote = this.self;
    for (const u of this.others()) this.send({ type: 'vote', to: u, lastIndex: this.log.lastIndex(), lastTerm: this.log.lastTerm(), transfer: kind === 'transfer' });
    if (this.granted() >= this.quorum()) this.becomeLeader();
  }

  private onVoteRequest(m: MessageOf<'preVote'> | MessageOf<'vote'>): void {
    const upToDate = this.log.isUpToDate(m.lastIndex, m.lastTerm);
    if (m.type === 'preVote') {
      const granted = m.term > this.term && upToDate;
      this.send({ type: 'preVoteAnswer', to: m.from, granted }, granted ? m.term : this.term);
      return;
    }
    const granted = m.term === this.term && (this.vote === null || this.vote === m.from) && upToDate && this.role === 'follower';
    if (granted) {
      this.vote = m.from;
      this.electionElapsed = 0;
    }
    this.send({ type: 'voteAnswer', to: m.from, granted });
  }

  private onVoteAnswer(m: MessageOf<'preVoteAnswer'> | MessageOf<'voteAnswer'>): void {
    const pre = m.type === 'preVoteAnswer';
    if (pre ? this.role !== 'preCandidate' : this.role !== 'candidate') return;
    if (pre && m.granted && m.term !== this.term + 1) return;
    if (!this.log.members().includes(m.from)) return;
    this.votes.set(m.from, m.granted);
    if (this.granted() >= this.quorum()) {
      if (pre) this.campaign('vote');
      else this.becomeLeader();
    } else if (this.votes.size - this.granted() > this.log.members().length - this.quorum()) {
      this.becomeFollower(this.term, null);
    }
  }

  private becomeFollower(term: number, leader: string | null): void {
    if (term > this.term) {
      this.term = term;
      this.vote = null;
    }
    this.role = 'follower';
    this.leader = leader;
    this.leaderGone = false;
    this.transfer = null;
    this.progress.clear();
    this.reads.clear();
    this.electionElapsed = 0;
    this.heardElapsed = 0;
    this.resetElectionTimeout();
  }

  private becomeLeader(): void {
    this.role = 'leader';
    this.leader = this.self;
    this.transfer = null;
    this.quorumElapsed = 0;
    this.counters.leaderships++;
    this.progress.clear();
    this.syncProgress();
    this.appendOwn('noop', NOTHING, null);
  }

  private heardFromLeader(from: string): void {
    if (this.role !== 'follower') this.becomeFollower(this.term, from);
    assert(this.leader === null || this.leader === from, `two leaders in term ${this.term}: ${this.leader} and ${from}`);
    this.leader = from;
    this.leaderGone = false;
    this.heardElapsed = 0;
    this.electionElapsed = 0;
  }

  /**
   * Whether this member holds its leader alive, and so ignores votes for another: the leader itself
   * (check-quorum demotes it when that is wrong), or a follower that heard its leader within the
   * time after which it would campaign itself and was not told its member left. Votes then win
   * only where the leader is gone for the majority too, so a member that restarts or was cut off
   * does not depose a working leader, even in an idle group whose heartbeats are 5 s apart.
   */
  private inLease(): boolean {
    if (this.role === 'leader') return true;
    return this.leader !== null && !this.leaderGone && this.heardElapsed < this.silenceTicks;
  }

  private promotable(): boolean {
    return this.log.members().includes(this.self);
  }

  private granted(): number {
    let n = 0;
    for (const [u, g] of this.votes) if (g && this.log.members().includes(u)) n++;
    return n;
  }

  private resetElectionTimeout(): void {
    this.electionTimeoutTicks = this.electionMinTicks + (this.electionJitterTicks === 0 ? 0 : this.random.nextInt(this.electionJitterTicks));
  }

  // ---- Follower side of replication ---------------------------------------------------------

  private onAppend(m: MessageOf<'append'>): void {
    let prevIndex = m.prevIndex;
    let prevTerm = m.prevTerm;
    let entries = m.entries;
    const commit = this.log.commit;
    if (prevIndex < commit) {
      // Entries up to our commit match the leader's (it holds every committed entry): check from there.
      if (prevIndex + entries.length <= commit) {
        this.send({ type: 'appendAnswer', to: m.from, success: true, index: commit, hintIndex: 0, hintTerm: 0, round: m.round });
        return;
      }
      entries = entries.filter((e) => e.index > commit);
      prevIndex = commit;
      prevTerm = this.log.term(commit) as number;
    }
    if (this.log.term(prevIndex) === prevTerm) {
      const lastNew = this.log.appendFrom(prevIndex, entries);
      const c = Math.min(m.commit, lastNew);
      if (c > this.log.commit) this.log.commit = c;
      this.send({ type: 'appendAnswer', to: m.from, success: true, index: lastNew, hintIndex: 0, hintTerm: 0, round: m.round });
      return;
    }
    // Refused: point the leader at the last index whose term is not above the one it tried.
    let hint = Math.min(m.prevIndex, this.log.lastIndex());
    while (hint > this.log.commit && (this.log.term(hint) as number) > m.prevTerm) hint--;
    this.send({ type: 'appendAnswer', to: m.from, success: false, index: m.prevIndex, hintIndex: hint, hintTerm: this.log.term(hint) ?? 0, round: m.round });
  }

  private onSnapshot(m: MessageOf<'snapshot'>): void {
    if (m.index <= this.log.commit) {
      this.incoming = null;
      this.send({ type: 'snapshotAnswer', to: m.from, index: m.index, nextOffset: m.totalBytes, matchIndex: this.log.commit });
      return;
    }
    if (m.offset === 0) this.incoming = { index: m.index, term: m.snapshotTerm, members: m.members, total: m.totalBytes, chunks: [], received: 0 };
    const inc = this.incoming;
    if (inc === null || inc.index !== m.index || inc.term !== m.snapshotTerm || inc.received !== m.offset) {
      const expected = inc !== null && inc.index === m.index && inc.term === m.snapshotTerm ? inc.received : 0;
      this.send({ type: 'snapshotAnswer', to: m.from, index: m.index, nextOffset: expected, matchIndex: 0 });
      return;
    }
    inc.chunks.push(Uint8Array.from(m.chunk));
    inc.received += m.chunk.length;
    if (inc.received < inc.total) {
      this.send({ type: 'snapshotAnswer', to: m.from, index: m.index, nextOffset: inc.received, matchIndex: 0 });
      return;
    }
    const data = new Uint8Array(inc.received);
    let at = 0;
    for (const c of inc.chunks) {
      data.set(c, at);
      at += c.length;
    }
    const s: Snapshot = { index: inc.index, term: inc.term, members: inc.members, data };
    this.incoming = null;
    this.log.restore(s);
    this.installed = s;
    this.counters.snapshotsInstalled++;
    this.send({ type: 'snapshotAnswer', to: m.from, index: m.index, nextOffset: inc.total, matchIndex: s.index });
  }

  // ---- Leader side of replication -----------------------------------------------------------

  private tickLeader(): void {
    this.quorumElapsed++;
    if (this.quorumElapsed >= this.silenceTicks) {
      this.quorumElapsed = 0;
      if (!this.quorumActive()) {
        this.becomeFollower(this.term, null);
        return;
      }
      for (const pr of this.progress.values()) pr.active = false;
    }
    if (this.transfer !== null && ++this.transfer.elapsed >= this.electionMinTicks) this.transfer = null;
    for (const [u, pr] of this.progress) {
      pr.sinceSentTicks++;
      pr.waitTicks++;
      const stalled = pr.waitTicks >= pr.backoffTicks;
      if (pr.state === 'probe' && pr.probeSent && stalled) {
        pr.probeSent = false;
        pr.backoffTicks = Math.min(pr.backoffTicks * 2, this.backoffMaxTicks);
        this.sendAppend(u);
      } else if (pr.state === 'replicate' && pr.inFlight.length > 0 && pr.waitTicks >= this.backoffMaxTicks) {
        // Answers stopped coming (an append or its answer was lost): find the follower's end again.
        this.toProbe(pr, pr.match + 1);
        this.sendAppend(u);
      } else if (pr.state === 'snapshot' && stalled) {
        pr.backoffTicks = Math.min(pr.backoffTicks * 2, this.backoffMaxTicks);
        this.sendChunk(u, pr);
      } else if (pr.sinceSentTicks >= this.heartbeatTicks) {
        this.sendHeartbeat(u, pr);
      }
    }
  }

  private quorumActive(): boolean {
    let n = 0;
    for (const u of this.log.members()) if (u === this.self || this.progress.get(u)?.active === true) n++;
    return n >= this.quorum();
  }

  private writeRefusal(membership: boolean): Refusal | null {
    let code: RefusalCode | null = null;
    if (this.role !== 'leader') code = 'not-leader';
    else if (this.transfer !== null) code = 'transferring';
    else if (this.log.configIndex() > this.log.commit) code = 'membership-change';
    else if (this.log.lastIndex() - this.log.commit >= this.opts.uncommittedEntriesMax) code = 'back-pressure';
    else if (membership && this.log.term(this.log.commit) !== this.term) code = 'not-ready';
    if (code === null) return null;
    this.counters.refusedProposals++;
    return this.refuse(code);
  }

  private refuse(code: RefusalCode): Refusal {
    return { ok: false, code, leader: this.leader };
  }

  private appendOwn(kind: Entry['kind'], data: Uint8Array, members: readonly string[] | null): ProposeResult {
    const e: Entry = { index: this.log.lastIndex() + 1, term: this.term, kind, data, members };
    this.log.append(e);
    this.bcastPending = this.progress.size > 0;
    return { ok: true, index: e.index, term: e.term };
  }

  /** Progress entries follow the member list in effect. */
  private syncProgress(): void {
    const members = this.log.members();
    for (const u of members) if (u !== this.self && !this.progress.has(u)) this.progress.set(u, this.newProgress());
    for (const u of [...this.progress.keys()]) if (!members.includes(u)) this.progress.delete(u);
  }

  private newProgress(): Progress {
    return { match: 0, next: this.log.lastIndex() + 1, state: 'probe', probeSent: false, inFlight: [], sinceSentTicks: 0, waitTicks: 0, backoffTicks: this.backoffMinTicks, active: true, round: 0, commitSent: 0, snap: null };
  }

  private toProbe(pr: Progress, next: number): void {
    pr.state = 'probe';
    pr.next = Math.max(next, pr.match + 1);
    pr.probeSent = false;
    pr.inFlight = [];
    pr.snap = null;
  }

  private broadcastAppends(): void {
    for (const u of this.progress.keys()) this.sendAppend(u);
  }

  private sendAppend(to: string): void {
    const pr = this.progress.get(to);
    if (pr === undefined) return;
    if (pr.state === 'snapshot') return;
    if (pr.state === 'probe' && pr.probeSent) return;
    if (pr.state === 'replicate' && pr.inFlight.length >= this.opts.appendsInFlightMax) return;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm === undefined) {
      // Compacted away: only the snapshot brings it there.
      this.startSnapshot(to, pr);
      return;
    }
    const entries = pr.next <= this.log.lastIndex() ? this.log.slice(pr.next, this.opts.appendEntriesMax, this.opts.appendBytesMax) : [];
    if (pr.state === 'replicate' && entries.length === 0) {
      // Nothing new: tell it the commit index if it moved, in a message that cannot miss.
      if (this.log.commit > pr.commitSent) this.sendHeartbeat(to, pr);
      return;
    }
    this.send({ type: 'append', to, prevIndex, prevTerm, entries, commit: this.log.commit, round: this.reads.lastRound });
    pr.commitSent = this.log.commit;
    pr.sinceSentTicks = 0;
    if (pr.state === 'probe' || pr.inFlight.length === 0) pr.waitTicks = 0;
    if (entries.length > 0) {
      this.counters.appendBatches++;
      this.counters.appendEntries += entries.length;
    }
    if (pr.state === 'probe') pr.probeSent = true;
    else if (entries.length > 0) {
      const last = (entries.at(-1) as Entry).index;
      pr.next = last + 1;
      pr.inFlight.push(last);
    }
  }

  /** An empty append at what the follower is known to hold: keeps its leader heard and carries a read round. */
  private sendHeartbeat(to: string, pr: Progress): void {
    const at = this.log.term(pr.match) === undefined ? this.log.firstIndex() - 1 : pr.match;
    const commit = Math.min(this.log.commit, pr.match);
    this.send({ type: 'append', to, prevIndex: at, prevTerm: this.log.term(at) as number, entries: [], commit, round: this.reads.lastRound });
    pr.sinceSentTicks = 0;
    // What it can be told now: the rest comes with the entries it lacks.
    pr.commitSent = this.log.commit;
  }

  private onAppendAnswer(m: MessageOf<'appendAnswer'>): void {
    const pr = this.progress.get(m.from);
    if (pr === undefined) return;
    pr.active = true;
    pr.backoffTicks = this.backoffMinTicks;
    if (m.round > pr.round) {
      pr.round = m.round;
      this.releaseReads();
    }
    if (m.success) {
      if (m.index > pr.match) {
        pr.match = m.index;
        pr.waitTicks = 0;
      }
      if (pr.next <= pr.match) pr.next = pr.match + 1;
      pr.inFlight = pr.inFlight.filter((i) => i > m.index);
      if (pr.state === 'probe' && pr.match >= pr.next - 1) {
        // The probe matched (a heartbeat's answer only confirms what was known).
        pr.state = 'replicate';
        pr.probeSent = false;
        pr.next = pr.match + 1;
      }
      this.maybeCommit();
      if (this.transfer !== null && this.transfer.to === m.from && pr.match === this.log.lastIndex()) this.sendTimeoutNow();
      this.sendAppend(m.from);
      return;
    }
    if (m.index <= pr.match || pr.state === 'snapshot') return; // stale, or a snapshot is on its way
    if (pr.state === 'probe' && m.index !== pr.next - 1) return; // an answer to an earlier probe
    let i = Math.min(m.hintIndex, this.log.lastIndex());
    while (i > this.log.firstIndex() - 1 && (this.log.term(i) as number) > m.hintTerm) i--;
    this.toProbe(pr, Math.min(i + 1, m.index));
    this.sendAppend(m.from);
  }

  private startSnapshot(to: string, pr: Progress): void {
    pr.state = 'snapshot';
    pr.snap = { s: this.log.snapshot, offset: 0 };
    pr.inFlight = [];
    pr.probeSent = false;
    this.counters.snapshotsSent++;
    this.sendChunk(to, pr);
  }

  private sendChunk(to: string, pr: Progress): void {
    const snap = pr.snap;
    assert(snap !== null, 'sending a snapshot chunk without a snapshot');
    const s = snap.s;
    const chunk = s.data.subarray(snap.offset, Math.min(s.data.length, snap.offset + this.opts.snapshotChunkBytes));
    this.send({ type: 'snapshot', to, index: s.index, snapshotTerm: s.term, members: s.members, offset: snap.offset, totalBytes: s.data.length, chunk });
    pr.sinceSentTicks = 0;
    pr.waitTicks = 0;
  }

  private onSnapshotAnswer(m: MessageOf<'snapshotAnswer'>): void {
    const pr = this.progress.get(m.from);
    if (pr === undefined) return;
    pr.active = true;
    if (m.matchIndex > 0) {
      // Installed, or its commit already covered the snapshot.
      if (m.matchIndex > pr.match) pr.match = m.matchIndex;
      if (pr.state === 'snapshot') {
        this.toProbe(pr, pr.match + 1);
        pr.backoffTicks = this.backoffMinTicks;
        this.sendAppend(m.from);
      }
      this.maybeCommit();
      return;
    }
    if (pr.state !== 'snapshot' || pr.snap === null || pr.snap.s.index !== m.index) return;
    pr.backoffTicks = this.backoffMinTicks;
    pr.snap.offset = Math.min(m.nextOffset, pr.snap.s.data.length);
    this.sendChunk(m.from, pr);
  }

  private sendTimeoutNow(): void {
    const t = this.transfer;
    if (t === null || t.sent) return;
    t.sent = true;
    this.send({ type: 'timeoutNow', to: t.to });
  }

  /** Commit = the highest index a majority holds, if its entry is of this term. */
  private maybeCommit(): void {
    const members = this.log.members();
    const matches = members.map((u) => (u === this.self ? this.persistedIndex : (this.progress.get(u)?.match ?? 0))).sort((a, b) => b - a);
    const q = matches[this.quorum() - 1] as number;
    if (q <= this.log.commit || this.log.term(q) !== this.term) return;
    const firstInTerm = this.log.term(this.log.commit) !== this.term;
    this.log.commit = q;
    this.bcastPending = true;
    if (firstInTerm) {
      for (const ctx of this.reads.takeWaiting()) this.registerRead(ctx);
    }
    if (!members.includes(this.self) && q >= this.log.configIndex()) {
      // This leader removed itself and the change is committed: hand over by stepping down.
      this.becomeFollower(this.term, null);
    }
  }

  // ---- Reads --------------------------------------------------------------------------------

  private registerRead(ctx: number): void {
    this.reads.register(ctx, this.log.commit, this.progress.size === 0);
  }

  private startRound(): void {
    this.reads.startRound();
    for (const [u, pr] of this.progress) this.sendHeartbeat(u, pr);
  }

  private releaseReads(): void {
    if (!this.reads.hasPending()) return;
    const rounds = this.log.members().map((u) => (u === this.self ? this.reads.lastRound : (this.progress.get(u)?.round ?? 0))).sort((a, b) => b - a);
    this.reads.confirm(rounds[this.quorum() - 1] as number);
  }

  // ---- Helpers ------------------------------------------------------------------------------

  private send(m: Outgoing, term = this.term): void {
    this.msgs.push({ ...m, from: this.self, term } as RaftMessage);
  }

  private others(): string[] {
    return this.log.members().filter((u) => u !== this.self);
  }

  private quorum(): number {
    return quorumOf(this.log.members().length);
  }

  private hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.commit };
  }

  private statusChanged(): boolean {
    return this.lastStatus.role !== this.role || this.lastStatus.term !== this.term || this.lastStatus.leader !== this.leader;
  }

  private entriesBetween(from: number, to: number): Entry[] {
    const out: Entry[] = [];
    for (let i = from; i <= to; i++) out.push(this.log.entry(i) as Entry);
    return out;
  }

  private notInReady(): void {
    assert(this.inReady === null, 'the Raft core was called between ready() and advance()');
  }
}

function sameHard(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}
