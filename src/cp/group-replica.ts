// One member's replica of one CP group: its Raft core, the structures' state machine, and the
// calls waiting on them. No I/O: the shell gives it messages and ticks, and drains it with
// process(io), which persists, sends, installs and applies in that order (src/cp/raft/types.ts).
//
// A call's outcome, for the member that routes it (src/cp/ routing; spec/cp.md "Raft"):
// - ok: applied (writes) or read at a confirmed commit index (reads);
// - refused (not-leader, back-pressure, transferring, membership-change, not-ready): nothing was
//   appended, so trying again elsewhere or later is safe;
// - lost: its entry was replaced by another leader's, so it never applied: safe to try again;
// - indeterminate: this member stopped leading after appending it; it may still commit. Every
//   write carries an invocation UUID, so the router retries it with the same UUID and the state
//   machine applies it at most once (a wait re-attaches to its waiter the same way).
import type { Random } from '../util/clock.js';
import { RaftCore } from './raft/core.js';
import type { RaftRestored } from './raft/core.js';
import type { Entry, RaftMessage, RaftOptions, Ready, RefusalCode, Snapshot } from './raft/types.js';
import { decodeEnvelope, encodeEnvelope } from './commands.js';
import { CpStructures } from './structures.js';
import type { CpResult, Envelope } from './structures.js';
import type { BlockingConfig } from './blocking.js';
import type { SessionTimes } from './sessions.js';

export type CallFailure = RefusalCode | 'lost' | 'indeterminate';
export type WriteOutcome = { readonly ok: true; readonly result: CpResult; readonly index: number } | { readonly ok: false; readonly failure: CallFailure; readonly leader: string | null };
export type ReadOutcome<T> = { readonly ok: true; readonly value: T; readonly index: number } | { readonly ok: false; readonly failure: CallFailure; readonly leader: string | null };

/** What the shell does with a ready batch: persist before send (the core's rule). */
export interface ReplicaIo {
  /** Makes the batch's hard state, snapshot and entries durable, then calls `done` (at once, or after an fsync). */
  persist(ready: Ready, done: (error: Error | null) => void): void;
  send(messages: readonly RaftMessage[]): void;
  /** A snapshot this member took of its own state machine, and the entries after it still held (persist it; the log before it may go). */
  persistSnapshot(snapshot: Snapshot, kept: readonly Entry[]): void;
  /** Persisting failed (a failed fsync): this replica must stop; nothing of the batch was sent. */
  failed(error: Error): void;
}

export interface ReplicaOptions {
  readonly raft: RaftOptions;
  readonly valueBytesMax: number;
  readonly dedupeMs: number;
  readonly snapshotEveryEntries: number;
  readonly sessionTimes?: SessionTimes;
  readonly blocking?: BlockingConfig;
  /** The CP subsystem's seed (the METADATA group names its groups with it). */
  readonly seed?: number;
}

interface PendingWrite {
  readonly term: number;
  readonly invocation: string;
  readonly done: (o: WriteOutcome) => void;
  /** The command as proposed (its entry, if this term's, holds exactly this): not decoded again. */
  readonly envelope: Envelope | null;
}

export class GroupReplica {
  readonly core: RaftCore;
  readonly structures: CpStructures;
  private readonly pending = new Map<number, PendingWrite>();
  /** Calls whose answer is a wait: invocation → callback. */
  private readonly waits = new Map<string, (o: WriteOutcome) => void>();
  private readonly readsAsked = new Map<number, { run: (s: CpStructures) => unknown; done: (o: ReadOutcome<unknown>) => void }>();
  private readsReady: { index: number; run: (s: CpStructures) => unknown; done: (o: ReadOutcome<unknown>) => void }[] = [];
  private nextCtx = 1;
  private applied = 0;
  private expiring = false;
  private wasLeader = false;
  /** A batch is being persisted: the core takes no input until it is done (its rule), so inputs wait here. */
  private persisting = false;
  private readonly queued: (() => void)[] = [];
  private stopped = false;

  constructor(
    self: string,
    private readonly opts: ReplicaOptions,
    random: Random,
    restored: RaftRestored,
    private readonly nowMs: () => number,
  ) {
    this.core = new RaftCore(self, opts.raft, random, restored);
    this.structures = new CpStructures(opts.dedupeMs, opts.sessionTimes, opts.blocking, opts.seed);
    this.structures.restore(restored.snapshot.data);
    this.applied = restored.snapshot.index;
  }

  /** A write (leader only); `done` is called once with its outcome. */
  write(invocation: string, command: Envelope['command'], done: (o: WriteOutcome) => void): void {
    if (this.persisting) return void this.queued.push(() => this.write(invocation, command, done));
    if (this.stopped) return done({ ok: false, failure: 'not-leader', leader: null });
    const envelope: Envelope = { invocation, nowMs: this.nowMs(), command: withSettings(command, this.opts.blocking) };
    const r = this.core.propose(encodeEnvelope(envelope, this.opts.valueBytesMax));
    if (!r.ok) return done({ ok: false, failure: r.code, leader: r.leader });
    this.pending.set(r.index, { term: r.term, invocation, done, envelope });
  }

  /**
   * A membership change of this group, one member at a time (leader only); ok once the change's
   * entry is committed (it is in effect from the moment it is appended).
   */
  changeMembers(change: { readonly add: string } | { readonly remove: string }, done: (o: WriteOutcome) => void): void {
    if (this.persisting) return void this.queued.push(() => this.changeMembers(change, done));
    if (this.stopped) return done({ ok: false, failure: 'not-leader', leader: null });
    const r = this.core.proposeMembers(change);
    if (!r.ok) return done({ ok: false, failure: r.code, leader: r.leader });
    this.pending.set(r.index, { term: r.term, invocation: '', done, envelope: null });
  }

  /** Hands this group's leadership to `to` (leader only); ok once asked, the transfer runs on. */
  transferLeadership(to: string): WriteOutcome {
    if (this.persisting || this.stopped) return { ok: false, failure: 'not-ready', leader: null };
    const r = this.core.transferLeadership(to);
    return r === null ? { ok: true, result: { type: 'none' }, index: 0 } : { ok: false, failure: r.code, leader: r.leader };
  }

  /** Stops this replica for good (its group was destroyed or left): pending calls learn not-leader. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queued.length = 0;
    this.failPending(() => true, 'indeterminate');
    for (const [inv, w] of [...this.waits]) {
      this.waits.delete(inv);
      w({ ok: false, failure: 'indeterminate', leader: null });
    }
    for (const [ctx, r] of [...this.readsAsked]) {
      this.readsAsked.delete(ctx);
      r.done({ ok: false, failure: 'not-leader', leader: null });
    }
    for (const r of this.readsReady.splice(0)) r.done({ ok: false, failure: 'not-leader', leader: null });
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** A linearizable read (leader only): `run` sees the state as of a confirmed commit index. */
  read<T>(run: (s: CpStructures) => T, done: (o: ReadOutcome<T>) => void): void {
    if (this.persisting) return void this.queued.push(() => this.read(run, done));
    if (this.stopped) return done({ ok: false, failure: 'not-leader', leader: null });
    const ctx = this.nextCtx++;
    const refusal = this.core.readIndex(ctx);
    if (refusal !== null) return done({ ok: false, failure: refusal.code, leader: refusal.leader });
    this.readsAsked.set(ctx, { run, done: done as (o: ReadOutcome<unknown>) => void });
  }

  step(m: RaftMessage): void {
    if (this.persisting) return void this.queued.push(() => this.step(m));
    if (!this.stopped) this.core.step(m);
  }

  /** The cluster removed a member (it may have led this group). */
  memberGone(uuid: string): void {
    if (this.persisting) return void this.queued.push(() => this.memberGone(uuid));
    if (!this.stopped) this.core.memberGone(uuid);
  }

  tick(): void {
    if (this.persisting) return void this.queued.push(() => this.tick());
    if (this.stopped) return;
    this.core.tick();
    if (this.core.status().role !== 'leader' || this.expiring) return;
    const expired = this.structures.expiredWaits(this.nowMs());
    if (expired.length === 0) return;
    this.expiring = true;
    this.write('', { kind: 'expireWaits', invocations: expired }, () => {
      this.expiring = false;
    });
  }

  /**
   * Drains every ready batch: persist, then (when durable) send, install, apply, advance. With an
   * asynchronous fsync this returns early and goes on when it completes; inputs that arrive
   * meanwhile wait in order.
   */
  process(io: ReplicaIo): void {
    while (!this.persisting && !this.stopped && this.core.hasReady()) {
      const ready = this.core.ready();
      this.persisting = true;
      let returned = false;
      let finished = false;
      io.persist(ready, (error) => {
        finished = true;
        this.afterPersist(io, ready, error);
        if (returned) this.resume(io);
      });
      returned = true;
      if (!finished) return;
      this.runQueued();
    }
  }

  private resume(io: ReplicaIo): void {
    this.runQueued();
    this.process(io);
  }

  private runQueued(): void {
    while (!this.persisting && this.queued.length > 0) (this.queued.shift() as () => void)();
  }

  private afterPersist(io: ReplicaIo, ready: Ready, error: Error | null): void {
    if (error !== null) {
      // Nothing of this batch may leave: the replica stops, and its callers learn nothing more.
      this.persisting = false;
      this.stopped = true;
      io.failed(error);
      return;
    }
    io.send(ready.messages);
    const installed = ready.snapshot;
    if (installed !== null) {
      this.structures.restore(installed.data);
      this.applied = installed.index;
      this.failPending((index) => index <= installed.index, 'indeterminate');
    }
    for (const e of ready.committed) {
      // A leader's first entry (its noop): sessions' expiries move one heartbeat interval later.
      if (e.kind === 'noop') this.structures.onNewTerm(0);
      this.applyEntry(e.index, e.term, e.kind === 'data' ? e.data : null);
    }
    for (const r of ready.reads) {
      const asked = this.readsAsked.get(r.ctx);
      if (asked === undefined) continue;
      this.readsAsked.delete(r.ctx);
      this.readsReady.push({ index: r.index, ...asked });
    }
    this.serveReads();
    if (ready.status !== null) this.onStatus(ready.status.role === 'leader', ready.status.leader);
    this.core.advance();
    this.persisting = false;
    this.maybeSnapshot(io);
  }

  private applyEntry(index: number, term: number, data: Uint8Array | null): void {
    this.applied = index;
    const mine = this.pending.get(index);
    if (mine !== undefined) this.pending.delete(index);
    if (mine !== undefined && mine.term !== term) mine.done({ ok: false, failure: 'lost', leader: this.core.status().leader });
    if (data === null) {
      // A noop or a membership change: a pending change is done once its entry commits.
      if (mine !== undefined && mine.term === term) mine.done({ ok: true, result: { type: 'none' }, index });
      return;
    }
    const own = mine !== undefined && mine.term === term ? mine.envelope : null;
    const { result, completions } = this.structures.apply(index, own ?? decodeEnvelope(data, this.opts.valueBytesMax));
    for (const c of completions) {
      const w = this.waits.get(c.invocation);
      if (w === undefined) continue;
      this.waits.delete(c.invocation);
      w({ ok: true, result: c.result, index });
    }
    if (mine === undefined || mine.term !== term) return;
    if (result.type === 'waiting') this.waits.set(mine.invocation, mine.done);
    else mine.done({ ok: true, result, index });
  }

  private serveReads(): void {
    if (this.readsReady.length === 0) return;
    const keep: typeof this.readsReady = [];
    for (const r of this.readsReady) {
      if (r.index <= this.applied) r.done({ ok: true, value: r.run(this.structures), index: this.applied });
      else keep.push(r);
    }
    this.readsReady = keep;
  }

  private onStatus(leading: boolean, leader: string | null): void {
    if (this.wasLeader && !leading) {
      // Appended here, maybe committed by the next leader: the router retries with the same UUID.
      this.failPending(() => true, 'indeterminate');
      for (const [inv, w] of [...this.waits]) {
        this.waits.delete(inv);
        w({ ok: false, failure: 'indeterminate', leader });
      }
      for (const [ctx, r] of [...this.readsAsked]) {
        this.readsAsked.delete(ctx);
        r.done({ ok: false, failure: 'not-leader', leader });
      }
      for (const r of this.readsReady.splice(0)) r.done({ ok: false, failure: 'not-leader', leader });
      this.expiring = false;
    }
    this.wasLeader = leading;
  }

  private failPending(which: (index: number) => boolean, failure: CallFailure): void {
    for (const [index, p] of [...this.pending]) {
      if (!which(index)) continue;
      this.pending.delete(index);
      p.done({ ok: false, failure, leader: this.core.status().leader });
    }
  }

  private maybeSnapshot(io: ReplicaIo): void {
    const st = this.core.status();
    if (this.applied - st.snapshotIndex < this.opts.snapshotEveryEntries || this.applied > st.applied) return;
    this.core.compact(this.applied, this.structures.snapshot());
    const snapshot = this.core.snapshot();
    const kept: Entry[] = [];
    for (let i = this.applied + 1; i <= this.core.status().lastIndex; i++) kept.push(this.core.entryAt(i) as Entry);
    io.persistSnapshot(snapshot, kept);
  }
}

/** The command with this member's lock or semaphore configuration in it (BlockingConfig: the log carries it, so every replica applies the same). */
export function withSettings(c: Envelope['command'], config: BlockingConfig | undefined): Envelope['command'] {
  if (config === undefined) return c;
  if (c.kind === 'lock' && c.op === 'lock' && c.limit === undefined) return { ...c, limit: config.lockAcquireLimit(c.name) };
  if (c.kind === 'semaphore' && c.config === undefined) {
    const { jdkCompatible, initialPermits } = config.semaphore(c.name);
    return { ...c, config: { jdkCompatible, initialPermits } };
  }
  return c;
}
