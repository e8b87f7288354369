// The state machine of one CP group's data structures: AtomicLong, AtomicReference and
// CountDownLatch by name, plus what makes retries safe and waits survive a leader change.
// Deterministic: every replica applies the same commands in log order with the leader's clock
// reading carried in each command, and reaches the same state and the same answers.
//
// - Invocation UUIDs: a command that carries one is applied at most once; its answer is kept
//   `dedupeMs` (by the commands' clock) and a retry gets the kept answer. So a retried AtomicLong
//   add applies once, where the reference's default applies it twice. Two kinds, so that memory
//   stays bounded at any call rate:
//   - a caller's own (REST `Grid-Invocation`, a client's UUID): kept `dedupeMs`, at most
//     CALLER_ANSWERS_MAX of them (the oldest go first);
//   - a member's (`~<member>/<seq>/<floor>`, made by the member that routes a call it retries
//     itself): kept per member until the member says it no longer waits for them (every later
//     call of that member carries `floor`, the lowest sequence it still has in flight), or
//     `dedupeMs` passed (a member that went away).
// - Waits (latch await) are state: the waiter is kept under its invocation UUID until the count
//   reaches zero or its deadline passes; the leader appends `expireWaits` for deadlines, so a
//   timeout is decided in the log like everything else. A retry of a wait re-attaches to it.
// - Values are 64-bit two's complement (BigInt, wrapped); references are bytes plus a content type,
//   compared as stored bytes; every object remembers the log index of its last write (REST ETag).
// - destroy removes an object; the name can be used again (the reference keeps tombstones forever).
import { assert } from '../util/assert.js';
import { LockRegistry, SemaphoreRegistry } from './blocking.js';
import type { BlockingConfig, BlockingResult, SemaphoreSettings } from './blocking.js';
import { CpSessions } from './sessions.js';
import { CpMetadata } from './metadata.js';
import { packJson, unpackJson } from './tagged-json.js';
import type { MetadataCommand, MetadataResult } from './metadata.js';
import type { SessionTimes } from './sessions.js';

export type LongOp = 'set' | 'getAndSet' | 'addAndGet' | 'getAndAdd' | 'compareAndSet';
export type RefOp = 'set' | 'getAndSet' | 'compareAndSet';
export type Structure = 'long' | 'ref' | 'latch' | 'lock' | 'semaphore';

export interface RefValue {
  readonly value: Uint8Array;
  readonly contentType: string | null;
}

export type CpCommand =
  | { readonly kind: 'long'; readonly op: LongOp; readonly name: string; readonly a: bigint; readonly b: bigint }
  | {
      readonly kind: 'ref';
      readonly op: RefOp;
      readonly name: string;
      readonly value: RefValue | null;
      /** compareAndSet: the value expected. */
      readonly expected: RefValue | null;
      /** REST If-Match: the index of the write the caller saw (-1: none). */
      readonly ifIndex: number;
    }
  | { readonly kind: 'latch'; readonly op: 'trySetCount'; readonly name: string; readonly count: number }
  | { readonly kind: 'latch'; readonly op: 'countDown'; readonly name: string; /** -1: the current round. */ readonly round: number }
  | { readonly kind: 'latch'; readonly op: 'await'; readonly name: string; readonly timeoutMs: number }
  | { readonly kind: 'destroy'; readonly structure: Structure; readonly name: string }
  | { readonly kind: 'session'; readonly op: 'create'; readonly endpoint: string; readonly endpointType: 'SERVER' | 'CLIENT'; readonly endpointName: string }
  | { readonly kind: 'session'; readonly op: 'heartbeat' | 'close'; readonly id: number }
  | { readonly kind: 'session'; readonly op: 'generateThreadId' | 'closeInactive' }
  /** Leader: these sessions' expiry passed at these versions. */
  | { readonly kind: 'session'; readonly op: 'expire'; readonly sessions: readonly { readonly id: number; readonly version: number }[] }
  /** timeoutMs: -1 waits for ever, 0 does not wait. */
  | { readonly kind: 'lock'; readonly op: 'lock'; readonly name: string; readonly session: number; readonly thread: number; readonly timeoutMs: number; readonly limit?: number }
  /** fence 0: any (the clients); REST names the fence it holds. */
  | { readonly kind: 'lock'; readonly op: 'unlock'; readonly name: string; readonly session: number; readonly thread: number; readonly fence: number }
  | { readonly kind: 'semaphore'; readonly op: 'init'; readonly name: string; readonly permits: number; readonly config?: SemaphoreSettings }
  | { readonly kind: 'semaphore'; readonly op: 'acquire'; readonly name: string; readonly session: number; readonly permits: number; readonly timeoutMs: number; readonly config?: SemaphoreSettings }
  | { readonly kind: 'semaphore'; readonly op: 'release'; readonly name: string; readonly session: number; readonly permits: number; readonly config?: SemaphoreSettings }
  | { readonly kind: 'semaphore'; readonly op: 'drain'; readonly name: string; readonly session: number; readonly config?: SemaphoreSettings }
  | { readonly kind: 'semaphore'; readonly op: 'change'; readonly name: string; readonly session: number; readonly delta: number; readonly config?: SemaphoreSettings }
  /** Leader: these waits passed their deadlines. */
  | { readonly kind: 'expireWaits'; readonly invocations: readonly string[] }
  /** The METADATA group's own commands (metadata.ts). */
  | { readonly kind: 'meta'; readonly command: MetadataCommand };

/** A command as it goes into the log. */
export interface Envelope {
  /** '' when the call carries none (then a retry may apply it again). */
  readonly invocation: string;
  /** The leader's wall clock when it appended the command. */
  readonly nowMs: number;
  readonly command: CpCommand;
}

export type CpResult =
  | BlockingResult
  | { readonly type: 'session'; readonly id: number; readonly ttlMs: number; readonly heartbeatMs: number }
  | { readonly type: 'threadId'; readonly id: number }
  | { readonly type: 'long'; readonly value: bigint }
  | { readonly type: 'cas'; readonly result: boolean; readonly value: bigint }
  | { readonly type: 'ref'; readonly ok: boolean; readonly old: RefValue | null; readonly index: number }
  | { readonly type: 'bool'; readonly result: boolean }
  | { readonly type: 'count'; readonly count: number; readonly round: number }
  | { readonly type: 'waiting' }
  | { readonly type: 'none' }
  | { readonly type: 'meta'; readonly result: MetadataResult }
  | { readonly type: 'error'; readonly code: 'illegal-state' | 'illegal-argument'; readonly message: string };

/** A wait that ended (its caller, if still waiting somewhere, gets `result`). */
export interface Completion {
  readonly invocation: string;
  readonly result: CpResult;
}

interface Latch {
  count: number;
  round: number;
  /** Invocations counted in this round (a retried countDown counts once). */
  counted: Set<string>;
  index: number;
}

interface Waiter {
  readonly name: string;
  readonly deadlineMs: number;
}

/** Caller-named invocations remembered per group at most (the oldest are forgotten first). */
export const CALLER_ANSWERS_MAX = 100_000;
const MEMBER_INVOCATION = /^~([0-9A-Za-z-]{1,64})\/(\d{1,15})\/(\d{1,15})$/;

/** A member-made invocation: whose, its sequence, and the lowest sequence the member still waits for. */
export function parseMemberInvocation(inv: string): { caller: string; seq: number; floor: number } | null {
  if (inv.charCodeAt(0) !== 0x7e) return null;
  const m = MEMBER_INVOCATION.exec(inv);
  return m === null ? null : { caller: m[1] as string, seq: Number(m[2]), floor: Number(m[3]) };
}

interface Kept {
  readonly result: CpResult;
  readonly atMs: number;
}

interface Caller {
  floor: number;
  /** The commands' clock when the member last made a call. */
  lastMs: number;
  readonly answers: Map<number, Kept>;
}

const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;

export class CpStructures {
  private readonly longs = new Map<string, { value: bigint; index: number }>();
  private readonly refs = new Map<string, { value: RefValue | null; index: number }>();
  private readonly latches = new Map<string, Latch>();
  /** Invocation → answer and the time it was given, oldest first. */
  private readonly answers = new Map<string, Kept>();
  /** Member-made invocations: member → the answers it may still retry for, and its floor. */
  private readonly callers = new Map<string, Caller>();
  private readonly waiters = new Map<string, Waiter>();
  private clockMs = 0;

  readonly sessions: CpSessions;
  readonly locks: LockRegistry;
  readonly semaphores: SemaphoreRegistry;
  /** The CP members and groups: used by the METADATA group only (empty in the others). */
  readonly metadata: CpMetadata;

  constructor(
    private readonly dedupeMs: number,
    private readonly times: SessionTimes = { ttlMs: 300_000, heartbeatMs: 5000 },
    private readonly blocking: BlockingConfig = { lockAcquireLimit: () => 0, semaphore: () => ({ jdkCompatible: false, initialPermits: 0 }) },
    seed = 0,
  ) {
    this.metadata = new CpMetadata(seed);
    this.sessions = new CpSessions(times);
    this.locks = new LockRegistry(blocking);
    this.semaphores = new SemaphoreRegistry(blocking);
  }

  /** Applies one committed command at log `index`. */
  apply(index: number, e: Envelope): { result: CpResult; completions: Completion[] } {
    if (e.nowMs > this.clockMs) this.clockMs = e.nowMs;
    this.locks.at = index;
    this.semaphores.at = index;
    this.forgetOldAnswers();
    const completions: Completion[] = [];
    const mi = e.invocation === '' ? null : parseMemberInvocation(e.invocation);
    if (e.invocation !== '') {
      if (mi !== null) {
        const c = this.caller(mi.caller);
        c.lastMs = this.clockMs;
        if (mi.floor > c.floor) {
          c.floor = mi.floor;
          for (const seq of [...c.answers.keys()]) if (seq < c.floor) c.answers.delete(seq);
        }
        // Below the floor: the member had its answer and waits no more; nothing to apply again.
        if (mi.seq < c.floor) return { result: { type: 'none' }, completions };
      }
      const kept = mi === null ? this.answers.get(e.invocation)?.result : this.callers.get(mi.caller)?.answers.get(mi.seq)?.result;
      if (kept !== undefined) return { result: kept, completions };
      if (this.isWaiting(e.invocation)) return { result: { type: 'waiting' }, completions };
    }
    const result = this.run(index, e, completions);
    if (e.invocation !== '' && result.type !== 'waiting') this.remember(e.invocation, result, mi);
    for (const c of completions) this.remember(c.invocation, c.result);
    return { result, completions };
  }

  private caller(key: string): Caller {
    let c = this.callers.get(key);
    if (c === undefined) {
      c = { floor: 0, lastMs: this.clockMs, answers: new Map() };
      this.callers.set(key, c);
    }
    return c;
  }

  private keptAnswer(invocation: string): CpResult | undefined {
    const mi = parseMemberInvocation(invocation);
    if (mi === null) return this.answers.get(invocation)?.result;
    return this.callers.get(mi.caller)?.answers.get(mi.seq)?.result;
  }

  private remember(invocation: string, result: CpResult, parsed?: ReturnType<typeof parseMemberInvocation>): void {
    const kept: Kept = { result, atMs: this.clockMs };
    const mi = parsed !== undefined ? parsed : parseMemberInvocation(invocation);
    if (mi !== null) {
      const c = this.caller(mi.caller);
      if (mi.seq >= c.floor) c.answers.set(mi.seq, kept);
      return;
    }
    this.answers.set(invocation, kept);
    if (this.answers.size > CALLER_ANSWERS_MAX) this.answers.delete(this.answers.keys().next().value as string);
  }

  private run(index: number, e: Envelope, completions: Completion[]): CpResult {
    const c = e.command;
    switch (c.kind) {
      case 'long':
        return this.applyLong(index, c);
      case 'ref':
        return this.applyRef(index, c);
      case 'latch':
        return this.applyLatch(index, e.invocation, c, completions);
      case 'destroy':
        return this.destroy(c.structure, c.name, completions);
      case 'expireWaits': {
        // A call withdrawn before its own entry came (its caller went away; cp-api.ts): it is
        // answered now, so that entry, when it comes, is a retry and waits for nothing.
        for (const inv of c.invocations) if (!this.isWaiting(inv) && this.keptAnswer(inv) === undefined) this.remember(inv, { type: 'none' });
        for (const inv of c.invocations) {
          if (!this.waiters.has(inv)) continue;
          this.waiters.delete(inv);
          completions.push({ invocation: inv, result: { type: 'bool', result: false } });
        }
        const set = new Set(c.invocations);
        this.locks.expire(set, completions);
        this.semaphores.expire(set, completions);
        return { type: 'none' };
      }
      case 'session':
        return this.applySession(c, completions);
      case 'lock':
        return this.applyLock(index, e.invocation, c, completions);
      case 'semaphore':
        return this.applySemaphore(index, c, e.invocation, completions);
      case 'meta':
        return { type: 'meta', result: this.metadata.apply(c.command) };
    }
  }

  private applyLong(index: number, c: Extract<CpCommand, { kind: 'long' }>): CpResult {
    const cur = this.longs.get(c.name)?.value ?? 0n;
    let next = cur;
    let answer: bigint = cur;
    switch (c.op) {
      case 'set':
      case 'getAndSet':
        next = c.a;
        answer = cur;
        break;
      case 'addAndGet':
        next = BigInt.asIntN(64, cur + c.a);
        answer = next;
        break;
      case 'getAndAdd':
        next = BigInt.asIntN(64, cur + c.a);
        answer = cur;
        break;
      case 'compareAndSet': {
        const hit = cur === c.a;
        if (hit) this.longs.set(c.name, { value: c.b, index });
        return { type: 'cas', result: hit, value: hit ? c.b : cur };
      }
    }
    assert(next >= MIN_LONG && next <= MAX_LONG, 'an AtomicLong value out of 64 bits');
    this.longs.set(c.name, { value: next, index });
    return { type: 'long', value: c.op === 'set' ? next : answer };
  }

  private applyRef(index: number, c: Extract<CpCommand, { kind: 'ref' }>): CpResult {
    const cur = this.refs.get(c.name);
    const value = cur?.value ?? null;
    const at = cur?.index ?? 0;
    if (c.ifIndex >= 0 && c.ifIndex !== at) return { type: 'ref', ok: false, old: value, index: at };
    if (c.op === 'compareAndSet' && !sameRef(value, c.expected)) return { type: 'ref', ok: false, old: value, index: at };
    this.refs.set(c.name, { value: c.value, index });
    return { type: 'ref', ok: true, old: value, index };
  }

  private applyLatch(index: number, invocation: string, c: Extract<CpCommand, { kind: 'latch' }>, completions: Completion[]): CpResult {
    let l = this.latches.get(c.name);
    if (l === undefined) {
      l = { count: 0, round: 0, counted: new Set(), index: 0 };
      this.latches.set(c.name, l);
    }
    switch (c.op) {
      case 'trySetCount': {
        if (!Number.isSafeInteger(c.count) || c.count <= 0) return { type: 'error', code: 'illegal-argument', message: `count must be positive, not ${c.count}` };
        if (l.count > 0) return { type: 'bool', result: false };
        l.count = c.count;
        l.round++;
        l.counted.clear();
        l.index = index;
        return { type: 'bool', result: true };
      }
      case 'countDown': {
        const round = c.round < 0 ? l.round : c.round;
        if (round > l.round) return { type: 'error', code: 'illegal-state', message: `round ${round} is ahead of the latch's round ${l.round}` };
        if (round === l.round && l.count > 0) {
          const key = invocation === '' ? `#${index}` : invocation;
          if (!l.counted.has(key)) {
            l.counted.add(key);
            l.count--;
            l.index = index;
            if (l.count === 0) this.wake(c.name, completions, true);
          }
        }
        return { type: 'count', count: l.count, round: l.round };
      }
      case 'await': {
        if (l.count === 0) return { type: 'bool', result: true };
        if (c.timeoutMs <= 0 || invocation === '') return { type: 'bool', result: false };
        this.waiters.set(invocation, { name: c.name, deadlineMs: this.clockMs + c.timeoutMs });
        return { type: 'waiting' };
      }
    }
  }

  private wake(name: string, completions: Completion[], result: boolean): void {
    for (const [inv, w] of [...this.waiters]) {
      if (w.name !== name) continue;
      this.waiters.delete(inv);
      completions.push({ invocation: inv, result: { type: 'bool', result } });
    }
  }

  private applySession(c: Extract<CpCommand, { kind: 'session' }>, completions: Completion[]): CpResult {
    switch (c.op) {
      case 'create': {
        const s = this.sessions.create(this.clockMs, c.endpoint, c.endpointType, c.endpointName);
        return { type: 'session', id: s.id, ttlMs: this.times.ttlMs, heartbeatMs: this.times.heartbeatMs };
      }
      case 'heartbeat':
        return this.sessions.heartbeat(c.id, this.clockMs) ? { type: 'none' } : sessionGone(c.id);
      case 'close':
        if (!this.sessions.close(c.id)) return sessionGone(c.id);
        this.releaseSession(c.id, completions);
        return { type: 'none' };
      case 'expire':
        for (const id of this.sessions.expire(c.sessions)) this.releaseSession(id, completions);
        return { type: 'none' };
      case 'closeInactive':
        for (const id of this.sessions.inactive(this.clockMs, (id) => this.locks.holds(id) || this.semaphores.holds(id))) {
          this.sessions.close(id);
          this.releaseSession(id, completions);
        }
        return { type: 'none' };
      case 'generateThreadId':
        return { type: 'threadId', id: this.sessions.generateThreadId() };
    }
  }

  private releaseSession(id: number, completions: Completion[]): void {
    this.locks.sessionClosed(id, completions);
    this.semaphores.sessionClosed(id, completions);
  }

  /** A session-bound call counts as a heartbeat; a closed session's call fails. Session -1: none. */
  private touch(session: number): boolean {
    return session === -1 || this.sessions.heartbeat(session, this.clockMs);
  }

  private applyLock(index: number, invocation: string, c: Extract<CpCommand, { kind: 'lock' }>, completions: Completion[]): CpResult {
    if (!this.touch(c.session) || c.session === -1) return sessionGone(c.session);
    if (c.op === 'lock') return this.locks.lock(index, this.clockMs, c.name, c.session, c.thread, invocation === '' ? `#${index}` : invocation, c.timeoutMs, c.limit);
    return this.locks.unlock(c.name, c.session, c.thread, c.fence, completions);
  }

  private applySemaphore(index: number, c: Extract<CpCommand, { kind: 'semaphore' }>, invocation: string, completions: Completion[]): CpResult {
    if (c.op === 'init') return this.semaphores.init(c.name, c.permits, c.config);
    if (!this.touch(c.session)) return sessionGone(c.session);
    const out = completions;
    switch (c.op) {
      case 'acquire':
        return this.semaphores.acquire(this.clockMs, c.name, c.session, invocation === '' ? `#${index}` : invocation, c.permits, c.timeoutMs, c.config);
      case 'release':
        return this.semaphores.release(c.name, c.session, c.permits, out, c.config);
      case 'drain':
        return this.semaphores.drain(c.name, c.session, c.config);
      case 'change':
        return this.semaphores.change(c.name, c.delta, out, c.config);
    }
  }

  /** A new leader's first entry: every session's expiry moves one heartbeat interval later. */
  onNewTerm(nowMs: number): void {
    if (nowMs > this.clockMs) this.clockMs = nowMs;
    this.sessions.shiftExpirations();
  }

  private destroy(s: Structure, name: string, completions: Completion[]): CpResult {
    if (s === 'lock') this.locks.destroy(name, completions);
    else if (s === 'semaphore') this.semaphores.destroy(name, completions);
    else if (s === 'long') this.longs.delete(name);
    else if (s === 'ref') this.refs.delete(name);
    else {
      this.latches.delete(name);
      for (const [inv, w] of [...this.waiters]) {
        if (w.name !== name) continue;
        this.waiters.delete(inv);
        completions.push({ invocation: inv, result: { type: 'error', code: 'illegal-state', message: `CountDownLatch[${name}] was destroyed` } });
      }
    }
    return { type: 'none' };
  }

  private forgetOldAnswers(): void {
    const before = this.clockMs - this.dedupeMs;
    for (const [inv, a] of this.answers) {
      if (a.atMs >= before) break;
      this.answers.delete(inv);
    }
    // A member's answers go when it says so; these are the ones of a member that went away.
    for (const [key, c] of this.callers) {
      for (const [seq, a] of c.answers) {
        if (a.atMs >= before) break;
        c.answers.delete(seq);
      }
      // Its floor guards against a late copy of a call it finished; no copy outlives dedupeMs.
      if (c.answers.size === 0 && c.lastMs < before) this.callers.delete(key);
    }
  }

  // ---- Reads (after a read index: the state as of the leader's commit) -----------------------

  getLong(name: string): { value: bigint; index: number } {
    return this.longs.get(name) ?? { value: 0n, index: 0 };
  }

  getRef(name: string): { value: RefValue | null; index: number } {
    return this.refs.get(name) ?? { value: null, index: 0 };
  }

  getLatch(name: string): { count: number; round: number; index: number } {
    const l = this.latches.get(name);
    return l === undefined ? { count: 0, round: 0, index: 0 } : { count: l.count, round: l.round, index: l.index };
  }

  /** Leader: waits whose deadline passed by `nowMs` (to expire through the log). */
  expiredWaits(nowMs: number): string[] {
    const out: string[] = [];
    for (const [inv, w] of this.waiters) if (w.deadlineMs <= nowMs) out.push(inv);
    return [...out, ...this.locks.expiredWaits(nowMs), ...this.semaphores.expiredWaits(nowMs)];
  }

  /** Whether a wait is still pending (a retried await re-attaches to it). */
  isWaiting(invocation: string): boolean {
    return this.waiters.has(invocation) || this.locks.isWaiting(invocation) || this.semaphores.isWaiting(invocation);
  }

  /** The answer kept for an invocation, if any (a retry after a leader change gets it). */
  answerOf(invocation: string): CpResult | undefined {
    return this.keptAnswer(invocation);
  }

  counts(): { longs: number; refs: number; latches: number; waiters: number; answers: number } {
    let memberAnswers = 0;
    for (const c of this.callers.values()) memberAnswers += c.answers.size;
    return { longs: this.longs.size, refs: this.refs.size, latches: this.latches.size, waiters: this.waiters.size, answers: this.answers.size + memberAnswers };
  }

  // ---- Snapshots ----------------------------------------------------------------------------

  snapshot(): Uint8Array {
    const b64 = (v: Uint8Array): string => Buffer.from(v).toString('base64');
    const ref = (v: RefValue | null): unknown => (v === null ? null : { v: b64(v.value), t: v.contentType });
    const state = {
      clockMs: this.clockMs,
      longs: [...this.longs].map(([n, l]) => [n, l.value.toString(), l.index]),
      refs: [...this.refs].map(([n, r]) => [n, ref(r.value), r.index]),
      latches: [...this.latches].map(([n, l]) => [n, l.count, l.round, [...l.counted], l.index]),
      answers: [...this.answers].map(([inv, a]) => [inv, encodeResult(a.result), a.atMs]),
      callers: [...this.callers].map(([key, c]) => [key, c.floor, c.lastMs, [...c.answers].map(([seq, a]) => [seq, encodeResult(a.result), a.atMs])]),
      waiters: [...this.waiters].map(([inv, w]) => [inv, w.name, w.deadlineMs]),
      sessions: this.sessions.snapshot(),
      locks: this.locks.snapshot(),
      semaphores: this.semaphores.snapshot(),
      metadata: Buffer.from(this.metadata.snapshot()).toString('base64'),
    };
    return Buffer.from(JSON.stringify(state));
  }

  restore(data: Uint8Array): void {
    this.longs.clear();
    this.refs.clear();
    this.latches.clear();
    this.answers.clear();
    this.callers.clear();
    this.waiters.clear();
    this.clockMs = 0;
    this.sessions.restore(null);
    this.locks.restore(null);
    this.semaphores.restore(null);
    this.metadata.restore(new Uint8Array(0));
    if (data.length === 0) return;
    const s = JSON.parse(Buffer.from(data).toString('utf8')) as {
      clockMs: number;
      longs: [string, string, number][];
      refs: [string, { v: string; t: string | null } | null, number][];
      latches: [string, number, number, string[], number][];
      answers: [string, unknown, number][];
      callers?: [string, number, number, [number, unknown, number][]][];
      waiters: [string, string, number][];
      sessions?: unknown;
      locks?: unknown;
      semaphores?: unknown;
      metadata?: string;
    };
    if (s.metadata !== undefined) this.metadata.restore(Buffer.from(s.metadata, 'base64'));
    this.sessions.restore(s.sessions);
    this.locks.restore(s.locks);
    this.semaphores.restore(s.semaphores);
    this.clockMs = s.clockMs;
    for (const [n, v, i] of s.longs) this.longs.set(n, { value: BigInt(v), index: i });
    for (const [n, r, i] of s.refs) this.refs.set(n, { value: r === null ? null : { value: Buffer.from(r.v, 'base64'), contentType: r.t }, index: i });
    for (const [n, count, round, counted, i] of s.latches) this.latches.set(n, { count, round, counted: new Set(counted), index: i });
    for (const [inv, r, at] of s.answers) this.answers.set(inv, { result: decodeResult(r), atMs: at });
    for (const [key, floor, lastMs, list] of s.callers ?? []) this.callers.set(key, { floor, lastMs, answers: new Map(list.map(([seq, r, at]) => [seq, { result: decodeResult(r), atMs: at }])) });
    for (const [inv, name, deadlineMs] of s.waiters) this.waiters.set(inv, { name, deadlineMs });
  }
}

function sessionGone(id: number): CpResult {
  return { type: 'error', code: 'session-expired', message: `CP session ${id} is closed or expired` };
}

function sameRef(a: RefValue | null, b: RefValue | null): boolean {
  if (a === null || b === null) return a === b;
  return a.contentType === b.contentType && Buffer.from(a.value).equals(Buffer.from(b.value));
}

/** An answer as plain JSON for a snapshot (bigints and bytes tagged: tagged-json.ts). */
function encodeResult(r: CpResult): unknown {
  return JSON.parse(packJson(r).toString('utf8'));
}

function decodeResult(r: unknown): CpResult {
  return unpackJson(Buffer.from(JSON.stringify(r))) as CpResult;
}
