// A linearizability checker in the style of Porcupine: the Wing–Gong search with Lowe's memo of
// (operations linearized, state) pairs already tried, over a history split by object first
// (P-compositionality: a history is linearizable when each object's is). Each operation has a
// call time and a return time; one without an answer (the call's outcome is unknown) returns at
// +∞, so it may take effect at any point after its call, or after everything (when it never did).
// A search that passes its deadline answers 'unknown', which a caller treats as a failure to look
// into, never as a pass.
//
// Models are deterministic: step(state, input, output) says whether the operation, applied to the
// state, could have answered `output` (undefined = unknown: any answer), and the state after it.

export interface Model<S, I, O> {
  readonly init: () => S;
  readonly step: (state: S, input: I, output: O | undefined) => { ok: boolean; state: S };
  /** A string that is equal for equal states (the memo key). */
  readonly key: (state: S) => string;
  readonly describe?: (input: I, output: O | undefined) => string;
}

export interface Operation<I, O> {
  readonly object: string;
  readonly client: number;
  readonly input: I;
  /** undefined: no answer (indeterminate). */
  readonly output: O | undefined;
  readonly callMs: number;
  /** Infinity when there was no answer. */
  readonly returnMs: number;
}

export type Verdict = { readonly result: 'ok' } | { readonly result: 'illegal'; readonly object: string; readonly detail: string } | { readonly result: 'unknown'; readonly object: string };

interface Node {
  op: number;
  isCall: boolean;
  match: Node | null;
  prev: Node | null;
  next: Node | null;
}

/** Checks every object's history; the first object that is not linearizable (or undecided) decides. */
export function checkHistory<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[], deadlineMs = 10_000): Verdict {
  const byObject = new Map<string, Operation<I, O>[]>();
  for (const op of history) {
    const list = byObject.get(op.object) ?? [];
    list.push(op);
    byObject.set(op.object, list);
  }
  const stopAt = Date.now() + deadlineMs;
  let unknown: string | null = null;
  for (const [object, ops] of byObject) {
    const r = checkObject(model, ops, stopAt);
    if (r === 'illegal') return { result: 'illegal', object, detail: describeLongest(model, ops) };
    if (r === 'unknown' && unknown === null) unknown = object;
  }
  return unknown === null ? { result: 'ok' } : { result: 'unknown', object: unknown };
}

function checkObject<S, I, O>(model: Model<S, I, O>, ops: readonly Operation<I, O>[], stopAt: number): 'ok' | 'illegal' | 'unknown' {
  const head = buildList(ops);
  const n = ops.length;
  const linearized = new Uint32Array(Math.ceil(n / 32) + 1);
  const memo = new Set<string>();
  const stack: { node: Node; state: S }[] = [];
  let state = model.init();
  let entry = head.next;
  let steps = 0;
  while (head.next !== null) {
    if ((++steps & 1023) === 0 && Date.now() > stopAt) return 'unknown';
    if (entry === null) return 'illegal'; // cannot happen: a return always comes after its call
    if (entry.isCall) {
      const op = ops[entry.op] as Operation<I, O>;
      const r = model.step(state, op.input, op.output);
      if (r.ok) {
        setBit(linearized, entry.op, true);
        const key = `${bitsKey(linearized)}|${model.key(r.state)}`;
        if (!memo.has(key)) {
          memo.add(key);
          stack.push({ node: entry, state });
          state = r.state;
          lift(entry);
          entry = head.next;
          continue;
        }
        setBit(linearized, entry.op, false);
      }
      entry = entry.next;
    } else {
      // The earliest pending return: its call could not be linearized before it. Backtrack.
      const top = stack.pop();
      if (top === undefined) return 'illegal';
      state = top.state;
      unlift(top.node);
      setBit(linearized, top.node.op, false);
      entry = top.node.next;
    }
  }
  return 'ok';
}

function buildList<I, O>(ops: readonly Operation<I, O>[]): Node {
  const events: { t: number; call: boolean; op: number }[] = [];
  ops.forEach((op, i) => {
    events.push({ t: op.callMs, call: true, op: i });
    events.push({ t: op.returnMs, call: false, op: i });
  });
  // Calls before returns at the same time: operations that touch in time count as concurrent.
  events.sort((a, b) => a.t - b.t || (a.call === b.call ? a.op - b.op : a.call ? -1 : 1));
  const head: Node = { op: -1, isCall: false, match: null, prev: null, next: null };
  let last = head;
  const calls = new Map<number, Node>();
  for (const e of events) {
    const node: Node = { op: e.op, isCall: e.call, match: null, prev: last, next: null };
    if (e.call) calls.set(e.op, node);
    else {
      const c = calls.get(e.op) as Node;
      c.match = node;
      node.match = c;
    }
    last.next = node;
    last = node;
  }
  return head;
}

function lift(call: Node): void {
  const ret = call.match as Node;
  (call.prev as Node).next = call.next;
  if (call.next !== null) call.next.prev = call.prev;
  (ret.prev as Node).next = ret.next;
  if (ret.next !== null) ret.next.prev = ret.prev;
}

function unlift(call: Node): void {
  const ret = call.match as Node;
  (ret.prev as Node).next = ret;
  if (ret.next !== null) ret.next.prev = ret;
  (call.prev as Node).next = call;
  if (call.next !== null) call.next.prev = call;
}

function setBit(bits: Uint32Array, i: number, on: boolean): void {
  const w = i >>> 5;
  const m = 1 << (i & 31);
  bits[w] = on ? (bits[w] as number) | m : (bits[w] as number) & ~m;
}

function bitsKey(bits: Uint32Array): string {
  let s = '';
  for (let i = 0; i < bits.length; i++) s += `${(bits[i] as number).toString(36)},`;
  return s;
}

/** For a failure report: the operations of the object in call order, so a reader can see the conflict. */
function describeLongest<S, I, O>(model: Model<S, I, O>, ops: readonly Operation<I, O>[]): string {
  const sorted = [...ops].sort((a, b) => a.callMs - b.callMs).slice(0, 40);
  const d = model.describe ?? ((i: I, o: O | undefined) => `${JSON.stringify(i)} → ${o === undefined ? '?' : JSON.stringify(o)}`);
  return sorted.map((o) => `c${o.client} [${o.callMs}, ${o.returnMs === Infinity ? '∞' : o.returnMs}] ${d(o.input, o.output)}`).join('; ');
}

// ---- Models -------------------------------------------------------------------------------------

/** AtomicLong: 64-bit two's complement (BigInt), every operation of spec/cp.md. */
export type LongInput =
  | { readonly op: 'get' }
  | { readonly op: 'set'; readonly value: bigint }
  | { readonly op: 'getAndSet'; readonly value: bigint }
  | { readonly op: 'addAndGet'; readonly delta: bigint }
  | { readonly op: 'getAndAdd'; readonly delta: bigint }
  | { readonly op: 'compareAndSet'; readonly expected: bigint; readonly updated: bigint };
export type LongOutput = { readonly value: bigint } | { readonly result: boolean };

const wrap = (v: bigint): bigint => BigInt.asIntN(64, v);

export const atomicLongModel: Model<bigint, LongInput, LongOutput> = {
  init: () => 0n,
  key: (s) => s.toString(),
  step: (s, i, o) => {
    const value = (v: bigint, next: bigint): { ok: boolean; state: bigint } => ({ ok: o === undefined || ('value' in o && o.value === v), state: next });
    switch (i.op) {
      case 'get':
        return value(s, s);
      case 'set':
        return { ok: true, state: wrap(i.value) };
      case 'getAndSet':
        return value(s, wrap(i.value));
      case 'addAndGet':
        return value(wrap(s + i.delta), wrap(s + i.delta));
      case 'getAndAdd':
        return value(s, wrap(s + i.delta));
      case 'compareAndSet': {
        const hit = s === i.expected;
        return { ok: o === undefined || ('result' in o && o.result === hit), state: hit ? wrap(i.updated) : s };
      }
    }
  },
  describe: (i, o) => `${i.op}(${'value' in i ? i.value : 'delta' in i ? i.delta : 'expected' in i ? `${i.expected},${i.updated}` : ''}) → ${o === undefined ? '?' : 'value' in o ? o.value : o.result}`,
};

/** AtomicReference: a value (string) or null. */
export type RefInput =
  | { readonly op: 'get' }
  | { readonly op: 'set'; readonly value: string | null }
  | { readonly op: 'getAndSet'; readonly value: string | null }
  | { readonly op: 'compareAndSet'; readonly expected: string | null; readonly updated: string | null }
  | { readonly op: 'isNull' }
  | { readonly op: 'contains'; readonly value: string | null };
export type RefOutput = { readonly value: string | null } | { readonly result: boolean };

export const atomicRefModel: Model<string | null, RefInput, RefOutput> = {
  init: () => null,
  key: (s) => (s === null ? '\u0000null' : `=${s}`),
  step: (s, i, o) => {
    const value = (v: string | null, next: string | null): { ok: boolean; state: string | null } => ({ ok: o === undefined || ('value' in o && o.value === v), state: next });
    const result = (r: boolean, next: string | null): { ok: boolean; state: string | null } => ({ ok: o === undefined || ('result' in o && o.result === r), state: next });
    switch (i.op) {
      case 'get':
        return value(s, s);
      case 'set':
        return { ok: true, state: i.value };
      case 'getAndSet':
        return value(s, i.value);
      case 'compareAndSet':
        return result(s === i.expected, s === i.expected ? i.updated : s);
      case 'isNull':
        return result(s === null, s);
      case 'contains':
        return result(s === i.value, s);
    }
  },
};

/** CountDownLatch: count and round (spec/cp.md; reference §1.8: trySetCount only when the count is 0). */
export type LatchInput = { readonly op: 'trySetCount'; readonly count: number } | { readonly op: 'countDown' } | { readonly op: 'getCount' };
export type LatchOutput = { readonly result: boolean } | { readonly count: number };

export const latchModel: Model<number, LatchInput, LatchOutput> = {
  init: () => 0,
  key: (s) => String(s),
  step: (s, i, o) => {
    switch (i.op) {
      case 'trySetCount': {
        const ok = s === 0 && i.count > 0;
        return { ok: o === undefined || ('result' in o && o.result === ok), state: ok ? i.count : s };
      }
      case 'countDown': {
        const next = Math.max(0, s - 1);
        return { ok: o === undefined || ('count' in o && o.count === next), state: next };
      }
      case 'getCount':
        return { ok: o === undefined || ('count' in o && o.count === s), state: s };
    }
  },
};

/**
 * FencedLock as a fence-checking mutex: a lock that answered a fence took a free lock, and its
 * fence is above every fence handed out before; an unlock is by the owner; a tryLock that answered
 * 0 (not acquired) found the lock held. A lock call whose outcome is unknown may have taken the
 * lock (its fence unknown) or not.
 */
export type LockInput = { readonly op: 'lock'; readonly client: number; readonly wait: boolean } | { readonly op: 'unlock'; readonly client: number };
export type LockOutput = { readonly fence: number } | { readonly ok: boolean };
interface LockState {
  readonly owner: number | null;
  readonly lastFence: number;
}

export const lockModel: Model<LockState, LockInput, LockOutput> = {
  init: () => ({ owner: null, lastFence: 0 }),
  key: (s) => `${s.owner ?? '-'}/${s.lastFence}`,
  step: (s, i, o) => {
    if (i.op === 'unlock') {
      const owns = s.owner === i.client;
      const next = owns ? { owner: null, lastFence: s.lastFence } : s;
      // Unknown outcome: it released the lock if this client held it, and did nothing otherwise.
      if (o === undefined) return { ok: true, state: next };
      if ('ok' in o && !o.ok) return { ok: !owns, state: s };
      return { ok: owns, state: next };
    }
    if (o === undefined) return s.owner === null ? { ok: true, state: { owner: i.client, lastFence: s.lastFence } } : { ok: true, state: s };
    if (!('fence' in o)) return { ok: false, state: s };
    // 0: not acquired. Checked for a tryLock that does not wait (it found the lock held); a timed
    // tryLock's give-up has no single point in time, so histories record none.
    if (o.fence === 0) return { ok: s.owner !== null, state: s };
    return { ok: s.owner === null && o.fence > s.lastFence, state: { owner: i.client, lastFence: o.fence } };
  },
  describe: (i, o) => `c${i.client} ${i.op}${i.op === 'lock' && !i.wait ? '(try)' : ''} → ${o === undefined ? '?' : JSON.stringify(o)}`,
};

/**
 * A counting semaphore of `permits` (session-aware: a client releases only what it holds);
 * `available` reads the free permits.
 * acquire: `acquired` true takes one permit (legal only when one is free), false (a tryAcquire
 * that did not wait) is legal only when none is free; release: `ok` true gives one back (legal
 * only when the client holds one), false (refused: 409) only when it holds none. No answer: the
 * call took effect as asked (when it could) or, the checker decides, never.
 */
export type SemaphoreInput = { readonly op: 'acquire'; readonly client: number } | { readonly op: 'release'; readonly client: number } | { readonly op: 'available'; readonly client: number };
export type SemaphoreOutput = { readonly acquired: boolean } | { readonly ok: boolean } | { readonly permits: number };
interface SemaphoreState {
  readonly available: number;
  /** client → permits held, sorted by client (the memo key reads it). */
  readonly held: readonly (readonly [number, number])[];
}

function holding(s: SemaphoreState, client: number): number {
  return s.held.find(([c]) => c === client)?.[1] ?? 0;
}

function withHeld(s: SemaphoreState, client: number, delta: number): SemaphoreState {
  const n = holding(s, client) + delta;
  const rest = s.held.filter(([c]) => c !== client);
  const held = n === 0 ? rest : [...rest, [client, n] as const].sort((a, b) => a[0] - b[0]);
  return { available: s.available - delta, held };
}

export function semaphoreModel(permits: number): Model<SemaphoreState, SemaphoreInput, SemaphoreOutput> {
  return {
    init: () => ({ available: permits, held: [] }),
    key: (s) => `${s.available}|${s.held.map(([c, n]) => `${c}:${n}`).join(',')}`,
    step: (s, i, o) => {
      if (i.op === 'available') return { ok: o === undefined || ('permits' in o && o.permits === s.available), state: s };
      if (i.op === 'acquire') {
        if (o === undefined) return s.available >= 1 ? { ok: true, state: withHeld(s, i.client, 1) } : { ok: true, state: s };
        if (!('acquired' in o)) return { ok: false, state: s };
        if (!o.acquired) return { ok: s.available < 1, state: s };
        return s.available >= 1 ? { ok: true, state: withHeld(s, i.client, 1) } : { ok: false, state: s };
      }
      const has = holding(s, i.client) >= 1;
      if (o === undefined) return { ok: true, state: has ? withHeld(s, i.client, -1) : s };
      if (!('ok' in o)) return { ok: false, state: s };
      if (!o.ok) return { ok: !has, state: s };
      return has ? { ok: true, state: withHeld(s, i.client, -1) } : { ok: false, state: s };
    },
    describe: (i, o) => `c${i.client} ${i.op} → ${o === undefined ? '?' : JSON.stringify(o)}`,
  };
}
