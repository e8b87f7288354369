// FencedLock and Semaphore state of one CP group (spec/cp.md "Data structures"; the reference's
// §1.9, §1.10, §2.3–2.7). Part of the group's state machine: deterministic, applied in log order,
// `index` is the log index of the command being applied.
//
// FencedLock: the owner is (session, thread). The fence is the log index of the entry that made
// the owner (a waiter's own acquiring entry when it is handed the lock), so fences rise strictly
// across owners. Re-entry by the owner keeps the fence and counts up to `lock-acquire-limit`
// (0 = unlimited), past which lock answers fence 0. Waiters queue in order; a release hands the
// lock to the first one in the same entry.
//
// Semaphore: session-aware by default (permits belong to the session that acquired them, released
// when it closes, a session cannot release more than it holds); `jdk-compatible` ones are
// sessionless (session -1: anyone releases, nothing comes back by itself). Waiters queue in order
// and are granted while permits last. A new semaphore has its configured `initial-permits` (it
// then counts as initialized).
//
// Waits are answered through completions (invocation → result) when granted, when their deadline
// passes (the leader appends an expiry) or when their session closes.

export type BlockingResult =
  /** fence 0: not acquired (timed out, or `limitReached`: the owner holds it lock-acquire-limit times). */
  | { readonly type: 'fence'; readonly fence: number; readonly limitReached?: true }
  | { readonly type: 'unlocked'; readonly stillLocked: boolean }
  | { readonly type: 'ownership'; readonly fence: number; readonly lockCount: number; readonly sessionId: number; readonly threadId: number }
  | { readonly type: 'acquired'; readonly acquired: boolean }
  | { readonly type: 'permits'; readonly permits: number }
  | { readonly type: 'bool'; readonly result: boolean }
  | { readonly type: 'waiting' }
  | { readonly type: 'error'; readonly code: 'not-owner' | 'session-expired' | 'not-enough-permits' | 'illegal-argument'; readonly message: string };

export interface BlockingCompletion {
  readonly invocation: string;
  readonly result: BlockingResult;
}

/** Where completions go (the group state machine's list of them). */
export interface CompletionSink {
  push(c: BlockingCompletion): unknown;
}

interface LockWaiter {
  readonly session: number;
  readonly thread: number;
  readonly invocation: string;
  readonly index: number;
  readonly deadlineMs: number;
}

interface LockState {
  owner: { session: number; thread: number } | null;
  fence: number;
  count: number;
  waiters: LockWaiter[];
  /** The log index of the entry that last changed its owner or count (REST ETag). */
  index: number;
}

interface SemaphoreWaiter {
  readonly session: number;
  readonly invocation: string;
  readonly permits: number;
  readonly deadlineMs: number;
}

interface SemaphoreState {
  /** The log index of the entry that last changed its permits (REST ETag). */
  index: number;
  initialized: boolean;
  /** Session-aware (not jdk-compatible), fixed when the semaphore is made, from the entry that made it. */
  readonly aware: boolean;
  available: number;
  /** Session → permits it holds (session-aware semaphores only). */
  held: Map<number, number>;
  waiters: SemaphoreWaiter[];
}

export const NOT_LOCKED: BlockingResult = { type: 'ownership', fence: 0, lockCount: 0, sessionId: -1, threadId: -1 };

/** A semaphore's configuration (`<semaphore>`). */
export interface SemaphoreSettings {
  readonly jdkCompatible: boolean;
  readonly initialPermits: number;
}

/**
 * The member's `<cp-subsystem>` configuration of locks and semaphores. The leader stamps it into
 * each lock and semaphore entry (GroupReplica.write), and applying uses the entry's values, so
 * replicas whose members were configured differently (a rolling configuration change) still apply
 * the same log to the same state. The configuration is read at apply time only for entries written
 * before they carried it.
 */
export interface BlockingConfig {
  lockAcquireLimit(name: string): number;
  semaphore(name: string): SemaphoreSettings;
}

export class LockRegistry {
  private readonly locks = new Map<string, LockState>();
  /** The index of the entry being applied (set by the state machine before each one). */
  at = 0;

  constructor(private readonly config: BlockingConfig) {}

  private state(name: string): LockState {
    let s = this.locks.get(name);
    if (s === undefined) {
      s = { owner: null, fence: 0, count: 0, waiters: [], index: 0 };
      this.locks.set(name, s);
    }
    return s;
  }

  /** lock / tryLock: timeoutMs -1 waits for ever, 0 does not wait. */
  lock(index: number, nowMs: number, name: string, session: number, thread: number, invocation: string, timeoutMs: number, limitInEntry?: number): BlockingResult {
    const s = this.state(name);
    if (s.owner === null) {
      s.owner = { session, thread };
      s.fence = index;
      s.count = 1;
      s.index = index;
      return { type: 'fence', fence: index };
    }
    if (s.owner.session === session && s.owner.thread === thread) {
      const limit = limitInEntry ?? this.config.lockAcquireLimit(name);
      if (limit > 0 && s.count >= limit) return { type: 'fence', fence: 0, limitReached: true };
      s.count++;
      s.index = index;
      return { type: 'fence', fence: s.fence };
    }
    if (timeoutMs === 0) return { type: 'fence', fence: 0 };
    s.waiters.push({ session, thread, invocation, index, deadlineMs: timeoutMs < 0 ? Infinity : nowMs + timeoutMs });
    return { type: 'waiting' };
  }

  /** unlock: `fence` (REST) must be the current one when given (> 0). */
  unlock(name: string, session: number, thread: number, fence: number, out: CompletionSink): BlockingResult {
    const s = this.locks.get(name);
    if (s === undefined || s.owner === null || s.owner.session !== session || s.owner.thread !== thread || (fence > 0 && fence !== s.fence)) {
      return { type: 'error', code: 'not-owner', message: `Current thread is not the owner of the lock ${name}` };
    }
    s.count--;
    s.index = this.at;
    if (s.count > 0) return { type: 'unlocked', stillLocked: true };
    this.handOver(s, out);
    return { type: 'unlocked', stillLocked: false };
  }

  private handOver(s: LockState, out: CompletionSink): void {
    s.owner = null;
    s.count = 0;
    s.index = this.at;
    const next = s.waiters.shift();
    // Free and nobody waits: it stays (its ETag names this entry) until destroyed, as the reference keeps it.
    if (next === undefined) return;
    s.owner = { session: next.session, thread: next.thread };
    s.fence = next.index;
    s.count = 1;
    out.push({ invocation: next.invocation, result: { type: 'fence', fence: next.index } });
  }

  /** The index of the entry that last changed this lock (0: never used, or destroyed). */
  indexOf(name: string): number {
    return this.locks.get(name)?.index ?? 0;
  }

  ownership(name: string): BlockingResult {
    const s = this.locks.get(name);
    if (s === undefined || s.owner === null) return NOT_LOCKED;
    return { type: 'ownership', fence: s.fence, lockCount: s.count, sessionId: s.owner.session, threadId: s.owner.thread };
  }

  /** A session closed: its locks go to their next waiters, its waits fail. */
  sessionClosed(session: number, out: CompletionSink): void {
    for (const s of this.locks.values()) {
      for (const w of s.waiters.filter((x) => x.session === session)) out.push({ invocation: w.invocation, result: expired(session) });
      s.waiters = s.waiters.filter((x) => x.session !== session);
      if (s.owner !== null && s.owner.session === session) this.handOver(s, out);
    }
  }

  /** Waits whose deadline passed by `nowMs` (the leader expires them through the log). */
  expiredWaits(nowMs: number): string[] {
    const out: string[] = [];
    for (const s of this.locks.values()) for (const w of s.waiters) if (w.deadlineMs <= nowMs) out.push(w.invocation);
    return out;
  }

  /** Expires waits: a tryLock that timed out answers fence 0. */
  expire(invocations: ReadonlySet<string>, out: CompletionSink): void {
    for (const s of this.locks.values()) {
      for (const w of s.waiters) if (invocations.has(w.invocation)) out.push({ invocation: w.invocation, result: { type: 'fence', fence: 0 } });
      s.waiters = s.waiters.filter((w) => !invocations.has(w.invocation));
    }
  }

  isWaiting(invocation: string): boolean {
    for (const s of this.locks.values()) if (s.waiters.some((w) => w.invocation === invocation)) return true;
    return false;
  }

  /** Whether the session holds or waits for any lock (inactive sessions are those that do not). */
  holds(session: number): boolean {
    for (const s of this.locks.values()) if (s.owner?.session === session || s.waiters.some((w) => w.session === session)) return true;
    return false;
  }

  destroy(name: string, out: CompletionSink): void {
    const s = this.locks.get(name);
    if (s === undefined) return;
    for (const w of s.waiters) out.push({ invocation: w.invocation, result: { type: 'error', code: 'illegal-argument', message: `FencedLock[${name}] was destroyed` } });
    this.locks.delete(name);
  }

  snapshot(): unknown {
    return [...this.locks].map(([n, s]) => [n, s.owner, s.fence, s.count, s.waiters.map((w) => ({ ...w, deadlineMs: w.deadlineMs === Infinity ? -1 : w.deadlineMs })), s.index]);
  }

  restore(state: unknown): void {
    this.locks.clear();
    for (const [n, owner, fence, count, waiters, index] of (state ?? []) as [string, { session: number; thread: number } | null, number, number, LockWaiter[], number?][]) {
      this.locks.set(n, { owner, fence, count, waiters: waiters.map((w) => ({ ...w, deadlineMs: w.deadlineMs < 0 ? Infinity : w.deadlineMs })), index: index ?? 0 });
    }
  }
}

export class SemaphoreRegistry {
  private readonly sems = new Map<string, SemaphoreState>();
  /** The index of the entry being applied (set by the state machine before each one). */
  at = 0;

  constructor(private readonly config: BlockingConfig) {}

  private state(name: string, settings: SemaphoreSettings | undefined): SemaphoreState {
    let s = this.sems.get(name);
    if (s === undefined) {
      const { initialPermits, jdkCompatible } = settings ?? this.config.semaphore(name);
      s = { index: 0, initialized: initialPermits > 0, aware: !jdkCompatible, available: initialPermits, held: new Map(), waiters: [] };
      this.sems.set(name, s);
    }
    return s;
  }

  init(name: string, permits: number, settings?: SemaphoreSettings): BlockingResult {
    if (!Number.isSafeInteger(permits) || permits < 0) return { type: 'error', code: 'illegal-argument', message: `permits must be >= 0, not ${permits}` };
    const s = this.state(name, settings);
    if (s.initialized) return { type: 'bool', result: false };
    s.initialized = true;
    s.available = permits;
    s.index = this.at;
    return { type: 'bool', result: true };
  }

  /** acquire / tryAcquire: timeoutMs -1 waits for ever, 0 does not wait. */
  acquire(nowMs: number, name: string, session: number, invocation: string, permits: number, timeoutMs: number, settings?: SemaphoreSettings): BlockingResult {
    if (!Number.isSafeInteger(permits) || permits <= 0) return { type: 'error', code: 'illegal-argument', message: `permits must be positive, not ${permits}` };
    const s = this.state(name, settings);
    if (s.waiters.length === 0 && s.available >= permits) {
      this.take(s, session, permits);
      return { type: 'acquired', acquired: true };
    }
    if (timeoutMs === 0) return { type: 'acquired', acquired: false };
    s.waiters.push({ session, invocation, permits, deadlineMs: timeoutMs < 0 ? Infinity : nowMs + timeoutMs });
    return { type: 'waiting' };
  }

  private take(s: SemaphoreState, session: number, permits: number): void {
    s.available -= permits;
    s.index = this.at;
    if (s.aware) s.held.set(session, (s.held.get(session) ?? 0) + permits);
  }

  release(name: string, session: number, permits: number, out: CompletionSink, settings?: SemaphoreSettings): BlockingResult {
    if (!Number.isSafeInteger(permits) || permits <= 0) return { type: 'error', code: 'illegal-argument', message: `permits must be positive, not ${permits}` };
    const s = this.state(name, settings);
    if (s.aware) {
      const held = s.held.get(session) ?? 0;
      if (held < permits) return { type: 'error', code: 'not-enough-permits', message: `Could not release ${permits} permits of Semaphore[${name}]: the caller has acquired ${held}` };
      if (held === permits) s.held.delete(session);
      else s.held.set(session, held - permits);
    }
    s.available += permits;
    s.index = this.at;
    this.grant(s, out);
    return { type: 'permits', permits };
  }

  drain(name: string, session: number, settings?: SemaphoreSettings): BlockingResult {
    const s = this.state(name, settings);
    const n = Math.max(0, s.available);
    if (n > 0) this.take(s, session, n);
    return { type: 'permits', permits: n };
  }

  /** increasePermits / reducePermits (the count may go below zero, as the reference allows). */
  change(name: string, delta: number, out: CompletionSink, settings?: SemaphoreSettings): BlockingResult {
    if (!Number.isSafeInteger(delta)) return { type: 'error', code: 'illegal-argument', message: `delta must be an integer, not ${delta}` };
    const s = this.state(name, settings);
    s.available += delta;
    s.initialized = true;
    s.index = this.at;
    if (delta > 0) this.grant(s, out);
    return { type: 'bool', result: true };
  }

  private grant(s: SemaphoreState, out: CompletionSink): void {
    while (s.waiters.length > 0 && s.available >= (s.waiters[0] as SemaphoreWaiter).permits) {
      const w = s.waiters.shift() as SemaphoreWaiter;
      this.take(s, w.session, w.permits);
      out.push({ invocation: w.invocation, result: { type: 'acquired', acquired: true } });
    }
  }

  /** The index of the entry that last changed this semaphore's permits (0: never, or destroyed). */
  indexOf(name: string): number {
    return this.sems.get(name)?.index ?? 0;
  }

  available(name: string): number {
    return this.sems.get(name)?.available ?? this.config.semaphore(name).initialPermits;
  }

  sessionClosed(session: number, out: CompletionSink): void {
    for (const s of this.sems.values()) {
      for (const w of s.waiters.filter((x) => x.session === session)) out.push({ invocation: w.invocation, result: expired(session) });
      s.waiters = s.waiters.filter((x) => x.session !== session);
      const held = s.held.get(session);
      if (held !== undefined) {
        s.held.delete(session);
        s.available += held;
        s.index = this.at;
        this.grant(s, out);
      }
    }
  }

  expiredWaits(nowMs: number): string[] {
    const out: string[] = [];
    for (const s of this.sems.values()) for (const w of s.waiters) if (w.deadlineMs <= nowMs) out.push(w.invocation);
    return out;
  }

  expire(invocations: ReadonlySet<string>, out: CompletionSink): void {
    for (const s of this.sems.values()) {
      const before = s.waiters.length;
      for (const w of s.waiters) if (invocations.has(w.invocation)) out.push({ invocation: w.invocation, result: { type: 'acquired', acquired: false } });
      s.waiters = s.waiters.filter((w) => !invocations.has(w.invocation));
      // A waiter that left the head may let the next ones through.
      if (s.waiters.length !== before) this.grant(s, out);
    }
  }

  isWaiting(invocation: string): boolean {
    for (const s of this.sems.values()) if (s.waiters.some((w) => w.invocation === invocation)) return true;
    return false;
  }

  holds(session: number): boolean {
    for (const s of this.sems.values()) if (s.held.has(session) || s.waiters.some((w) => w.session === session)) return true;
    return false;
  }

  destroy(name: string, out: CompletionSink): void {
    const s = this.sems.get(name);
    if (s === undefined) return;
    for (const w of s.waiters) out.push({ invocation: w.invocation, result: { type: 'error', code: 'illegal-argument', message: `Semaphore[${name}] was destroyed` } });
    this.sems.delete(name);
  }

  snapshot(): unknown {
    return [...this.sems].map(([n, s]) => [n, s.initialized, s.available, [...s.held], s.waiters.map((w) => ({ ...w, deadlineMs: w.deadlineMs === Infinity ? -1 : w.deadlineMs })), s.index, s.aware]);
  }

  restore(state: unknown): void {
    this.sems.clear();
    for (const [n, initialized, available, held, waiters, index, aware] of (state ?? []) as [string, boolean, number, [number, number][], SemaphoreWaiter[], number?, boolean?][]) {
      this.sems.set(n, { index: index ?? 0, initialized, aware: aware ?? !this.config.semaphore(n).jdkCompatible, available, held: new Map(held), waiters: waiters.map((w) => ({ ...w, deadlineMs: w.deadlineMs < 0 ? Infinity : w.deadlineMs })) });
    }
  }
}

function expired(session: number): BlockingResult {
  return { type: 'error', code: 'session-expired', message: `CP session ${session} is closed or expired` };
}
