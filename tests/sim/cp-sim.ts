// A seeded simulation of a CP group serving AtomicLong and AtomicReference calls, checked for
// linearizability (tests/harness/linearizability.ts). Members run GroupReplica (src/cp/group-
// replica.ts) on a simulated disk; clients call through a random member, which routes to the
// leader it knows and attempts refusals, lost entries and indeterminate outcomes with the same
// invocation UUID (as spec/cp.md asks of the receiving member) until a 10 s call timeout; a call
// that times out is recorded with an unknown outcome. Faults: crashes with a restart on the disk,
// pauses, partitions, message loss and reordering, leader churn. At the end every object's
// history must be linearizable; an undecided search is a failure too.
import { GroupReplica } from '../../src/cp/group-replica.js';
import type { CallFailure, ReplicaIo } from '../../src/cp/group-replica.js';
import { CpRouter } from '../../src/cp/router.js';
import type { AttemptAnswer } from '../../src/cp/router.js';
import { RAFT_DEFAULTS } from '../../src/cp/raft/types.js';
import type { RaftMessage } from '../../src/cp/raft/types.js';
import { RaftStore } from '../../src/cp/raft-store.js';
import { SimDisk } from '../harness/sim-disk.js';
import type { CpCommand, CpResult } from '../../src/cp/structures.js';
import { SeededRandom } from '../../src/util/prng.js';
import { atomicLongModel, atomicRefModel, checkHistory, lockModel, semaphoreModel } from '../harness/linearizability.js';
import type { LockInput, LockOutput, LongInput, LongOutput, Operation, RefInput, RefOutput, SemaphoreInput, SemaphoreOutput } from '../harness/linearizability.js';
import { Heap } from './raft-sim.js';

export interface CpSimOptions {
  readonly seed: number;
  readonly verbose?: boolean;
}

export interface CpSimReport {
  readonly seed: number;
  readonly size: number;
  readonly operations: number;
  readonly acknowledged: number;
  readonly indeterminate: number;
  readonly attempts: number;
  /** Sessions the leader expired under their clients (asleep past the TTL, or cut off). */
  readonly sessionsExpired: number;
  readonly lockOps: number;
  readonly semaphoreOps: number;
}

const TICK_MS = 100;
const CALL_TIMEOUT_MS = 10_000;
const ATTEMPT_TIMEOUT_MS = 1500;
const REF_VALUES = ['x', 'y', 'z'];
const SESSION_TTL_MS = 4000;
const SEMAPHORE_PERMITS = 2;

interface Locker {
  session: number;
  /** Holds the lock (or may: a lock without an answer), as thread `thread`. */
  holding: boolean;
  thread: number;
  /** Semaphore permits held: 0, 1, or -1 (a call without an answer: it releases to find out). */
  permits: number;
  /** When the last answered call of this session began (its expiry cannot come before). */
  lastOkCallMs: number;
  /** Threads of this session's locks without an answer, and its acquires without one (see releasedBySessionEnd). */
  maybeThreads: Set<number>;
  maybeAcquires: number;
}

export function runCpSim(o: CpSimOptions): CpSimReport {
  const rnd = new SeededRandom(o.seed * 104_729 + 3);
  const size = rnd.next() < 0.7 ? 3 : 5;
  const ids = Array.from({ length: size }, (_, i) => `p${i + 1}`);
  let now = 0;
  const heap = new Heap();
  const fail = (s: string): never => {
    throw new Error(`seed=${o.seed}: ${s}`);
  };
  const log = (s: string): void => {
    if (o.verbose === true) console.log(`[${now}ms] ${s}`);
  };
  const raft = { ...RAFT_DEFAULTS, tickMs: TICK_MS, electionTimeoutMs: 1000, electionJitterMs: 1000, heartbeatPeriodMs: 1000, missedHeartbeatsMax: 3, uncommittedEntriesMax: 40, entriesKeptAfterSnapshot: 5, snapshotChunkBytes: 256 };
  // Sessions live 4 s without a call (a client asleep longer loses them), a semaphore starts with 2 permits.
  const replicaOpts = {
    raft,
    valueBytesMax: 1024,
    dedupeMs: 300_000,
    snapshotEveryEntries: 20 + rnd.nextInt(40),
    sessionTimes: { ttlMs: SESSION_TTL_MS, heartbeatMs: 1000 },
    blocking: { lockAcquireLimit: () => 0, semaphore: () => ({ jdkCompatible: false, initialPermits: SEMAPHORE_PERMITS }) },
  };
  // Each member persists through RaftStore on a simulated disk whose fsync completes 1–3 ms (or up to 40 ms) later;
  // a machine crash loses what was not synced (and may tear the last write), a kill -9 keeps it.
  const disks = new Map<string, SimDisk>();
  const stores = new Map<string, RaftStore>();
  const replicas = new Map<string, GroupReplica>();
  const down = new Set<string>();
  const paused = new Set<string>();
  const cut = new Set<string>();
  let faultsOn = true;
  const storeOpts = { batchBytesMax: 1 << 22, dataBytesMax: 1 << 16 };
  // Slow disks in some runs, so that crashes land between a write and its fsync.
  const fsyncMsMax = rnd.next() < 0.5 ? 3 : 40;

  const claims = new Map<string, { vote: { term: number; to: string } | null; ack: { index: number; term: number } | null }>();
  const boot = (id: string): void => {
    const disk = disks.get(id) as SimDisk;
    const store = new RaftStore(disk, `cp/${id}/g`, storeOpts);
    stores.set(id, store);
    const restored = store.load() ?? store.init(ids);
    const c = claims.get(id);
    if (c?.vote != null && (restored.hardState.term < c.vote.term || (restored.hardState.term === c.vote.term && restored.hardState.vote !== c.vote.to))) {
      fail(`${id} granted its vote in term ${c.vote.term} to ${c.vote.to} and restarted with term ${restored.hardState.term} vote ${restored.hardState.vote}: it was not on disk`);
    }
    if (c?.ack != null && c.ack.index > restored.snapshot.index && restored.entries.find((e) => e.index === c.ack?.index)?.term !== c.ack.term) {
      fail(`${id} acknowledged entry ${c.ack.index} (term ${c.ack.term}) and restarted without it: it was not on disk`);
    }
    replicas.set(id, new GroupReplica(id, replicaOpts, new SeededRandom(rnd.nextInt(2 ** 31)), restored, () => now));
  };
  for (const id of ids) {
    disks.set(id, new SimDisk({ seed: rnd.nextInt(2 ** 31), schedule: (fn) => heap.push(now + 1 + rnd.nextInt(fsyncMsMax), fn) }));
    boot(id);
  }
  const io = (id: string): ReplicaIo => {
    const replica = replicas.get(id) as GroupReplica;
    const store = stores.get(id) as RaftStore;
    // A process that crashed sends nothing more, even when an fsync it asked for completes.
    const alive = (): boolean => replicas.get(id) === replica && !down.has(id);
    return {
      persist: (r, done) => store.persist(r, done),
      send: (msgs) => {
        if (!alive()) return;
        for (const m of msgs) {
          // What it claims must be on its disk (checked when it restarts after a machine crash).
          if (m.type === 'voteAnswer' && m.granted) claims.set(id, { ...(claims.get(id) ?? { ack: null }), vote: { term: m.term, to: m.to } });
          if (m.type === 'appendAnswer' && m.success && m.index > 0) claims.set(id, { ...(claims.get(id) ?? { vote: null }), ack: { index: m.index, term: replica.core.termAt(m.index) ?? -1 } });
          if (faultsOn && rnd.next() < 0.01) continue;
          heap.push(now + 1 + rnd.nextInt(rnd.next() < 0.1 ? 120 : 6), () => receive(m));
        }
      },
      persistSnapshot: (snapshot, kept) => {
        if (alive()) store.compact(snapshot, kept);
      },
      failed: (e) => fail(`${id}: persisting failed: ${e.message}`),
    };
  };
  const run = (id: string): void => (replicas.get(id) as GroupReplica).process(io(id));
  const reachable = (from: string, to: string): boolean => !cut.has(`${from}>${to}`) && !down.has(to);
  const receive = (m: RaftMessage): void => {
    if (!reachable(m.from, m.to)) return;
    if (paused.has(m.to)) {
      heap.push(now + 200, () => receive(m));
      return;
    }
    (replicas.get(m.to) as GroupReplica).step(m);
    run(m.to);
  };
  for (const id of ids) {
    const t = (): void => {
      if (!down.has(id) && !paused.has(id)) {
        (replicas.get(id) as GroupReplica).tick();
        run(id);
      }
      heap.push(now + TICK_MS, t);
    };
    heap.push(rnd.nextInt(TICK_MS), t);
  }

  // ---- Calls: client → a member → the leader it knows, retried with the same invocation. ----
  type Call = { kind: 'write'; command: CpCommand } | { kind: 'readLong'; name: string } | { kind: 'readRef'; name: string } | { kind: 'readSemaphore'; name: string };
  const counts = { operations: 0, acknowledged: 0, indeterminate: 0, attempts: 0 };
  let invocationSeq = 0;
  // Each member routes the calls it receives with its own CpRouter (src/cp/router.ts).
  const connections = new Map<string, Set<() => void>>();
  const routers = new Map<string, CpRouter<Call & { invocation: string }, unknown>>();
  const makeRouter = (via: string): CpRouter<Call & { invocation: string }, unknown> => {
    // A crash ends this router's timers with its process: only the router in `routers` runs.
    const self = (): boolean => routers.get(via) === router && !down.has(via);
    const router: CpRouter<Call & { invocation: string }, unknown> = new CpRouter<Call & { invocation: string }, unknown>(
      { callTimeoutMs: CALL_TIMEOUT_MS, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS, backoffMs: 100, failOnIndeterminate: false },
      {
        groupMembers: () => ids,
        localLeader: () => (down.has(via) ? null : (replicas.get(via) as GroupReplica).core.status().leader),
        attempt: (target, _group, call, answer) => {
          counts.attempts++;
          heap.push(now + 1 + rnd.nextInt(5), () => {
            if (!reachable(via, target) || paused.has(target) || down.has(target)) return; // lost: the attempt times out
            const r = replicas.get(target) as GroupReplica;
            const back = (a: AttemptAnswer<unknown>): void => {
              heap.push(now + 1 + rnd.nextInt(5), () => {
                if (reachable(target, via) && self()) answer(a);
              });
            };
            const fromRead = (x: { ok: boolean; value?: unknown; index?: number; failure?: CallFailure; leader?: string | null }): void =>
              back(x.ok ? { ok: true, value: x.value, index: x.index as number } : { ok: false, failure: x.failure as CallFailure, leader: x.leader ?? null });
            if (call.kind === 'write') r.write(call.invocation, call.command, (o) => back(o.ok ? { ok: true, value: o.result, index: o.index } : o));
            else if (call.kind === 'readLong') r.read((st) => st.getLong(call.name).value, fromRead);
            else if (call.kind === 'readSemaphore') r.read((st) => st.semaphores.available(call.name), fromRead);
            else r.read((st) => st.getRef(call.name).value, fromRead);
            run(target);
          });
        },
        schedule: (fn, ms) => {
          let live = true;
          heap.push(now + ms, () => {
            if (live && self()) fn();
          });
          return { cancel: () => void (live = false) };
        },
        monotonicMs: () => now,
        random: () => rnd.next(),
      },
    );
    return router;
  };
  for (const id of ids) routers.set(id, makeRouter(id));
  const inFlight = new Map<string, Set<number>>();
  const memberSeq = new Map<string, number>();
  const routeCall = (call: Call, givenInvocation: string, answer: (o: { ok: true; value: unknown } | null) => void): void => {
    let invocation = givenInvocation;
    let settled = false;
    const settle = (o: { ok: true; value: unknown } | null): void => {
      if (settled) return;
      settled = true;
      answer(o);
    };
    // The client's own timeout; and when the member it called crashes, its connection closes and
    // the call's outcome is unknown at once.
    heap.push(now + CALL_TIMEOUT_MS + 2000, () => settle(null));
    const up = ids.filter((u) => !down.has(u) && !paused.has(u));
    const via = up[rnd.nextInt(up.length)];
    if (via === undefined) return void heap.push(now + 100, () => settle(null));
    const open = connections.get(via) ?? new Set();
    connections.set(via, open);
    const onClose = (): void => settle(null);
    open.add(onClose);
    // A write without the caller's UUID gets the routing member's own, as CpService does:
    // ~<member>/<seq>/<floor>, floor its lowest call still in flight (structures.ts forgets below it).
    let release = (): void => {};
    if (invocation === '' && call.kind === 'write') {
      const flying = inFlight.get(via) ?? new Set<number>();
      inFlight.set(via, flying);
      const seq = (memberSeq.get(via) ?? 0) + 1;
      memberSeq.set(via, seq);
      flying.add(seq);
      invocation = `~${via}/${seq}/${flying.values().next().value as number}`;
      release = () => void flying.delete(seq);
    }
    (routers.get(via) as CpRouter<Call & { invocation: string }, unknown>).route('g', { ...call, invocation }, call.kind !== 'write', (o) => {
      release();
      heap.push(now + 1, () => {
        open.delete(onClose);
        settle(o.ok ? { ok: true, value: o.value } : null);
      });
    });
  };
  const closeConnections = (id: string): void => {
    const open = connections.get(id);
    connections.delete(id);
    for (const close of open ?? []) heap.push(now + 1, close);
  };

  const longHistory: Operation<LongInput, LongOutput>[] = [];
  const refHistory: Operation<RefInput, RefOutput>[] = [];
  const lockHistory: Operation<LockInput, LockOutput>[] = [];
  const semHistory: Operation<SemaphoreInput, SemaphoreOutput>[] = [];
  const endMs = 30_000;
  let sessionsExpired = 0;
  // A session closed under its client (expired by the leader): what it held went back at some
  // point after the last call of that session that was answered (the expiry cannot be earlier than
  // that call's application). Recorded as a release without an answer from then on; the checker
  // places it anywhere after, or nowhere.
  // A lock or an acquire without an answer may have been granted later (its wait went on), even
  // after the client found it did not hold it: the session's end releases those too.
  // The expiry comes no sooner than one TTL after the last call the session was heard in (its
  // heartbeat was applied at or after that call began): that is where the release may start.
  const releasedBySessionEnd = (c: number, me: Locker): void => {
    const from = me.lastOkCallMs + SESSION_TTL_MS;
    for (const t of new Set([...(me.holding ? [me.thread] : []), ...me.maybeThreads])) lockHistory.push({ object: 'L', client: c, input: { op: 'unlock', client: t }, output: undefined, callMs: from, returnMs: Infinity });
    const permits = (me.permits !== 0 ? 1 : 0) + me.maybeAcquires;
    for (let i = 0; i < permits; i++) semHistory.push({ object: 'S', client: c, input: { op: 'release', client: me.session }, output: undefined, callMs: from, returnMs: Infinity });
  };
  const sessionLost = (c: number, me: Locker): void => {
    sessionsExpired++;
    releasedBySessionEnd(c, me);
    me.session = 0;
    me.holding = false;
    me.permits = 0;
    me.maybeThreads.clear();
    me.maybeAcquires = 0;
  };
  const expiredAnswer = (out: { ok: true; value: unknown } | null): boolean => {
    const r = out?.value as CpResult | undefined;
    return r !== undefined && r.type === 'error' && r.code === 'session-expired';
  };
  const client = (c: number): void => {
    if (now > endMs) return;
    const callMs = now;
    // Half the calls carry the caller's own UUID (REST Grid-Invocation), half the member's (below).
    const invocation = rnd.next() < 0.5 ? `inv-${c}-${++invocationSeq}` : '';
    counts.operations++;
    const next = (): void => heap.push(now + rnd.nextInt(40), () => client(c));
    const me = lockers.get(c) as Locker;
    if (me.session === 0) {
      // First a CP session (not part of any object's history).
      routeCall({ kind: 'write', command: { kind: 'session', op: 'create', endpoint: `client-${c}`, endpointType: 'CLIENT', endpointName: `c${c}` } }, invocation, (out) => {
        const r = out?.value as CpResult | undefined;
        if (r !== undefined && r.type === 'session') {
          me.session = r.id;
          me.lastOkCallMs = callMs;
          me.maybeThreads.clear();
          me.maybeAcquires = 0;
        }
        next();
      });
      return;
    }
    if (rnd.next() < 0.01) {
      // The client sleeps past its session's TTL (a paused process), maybe holding the lock or a permit.
      counts.operations--;
      heap.push(now + SESSION_TTL_MS + 500 + rnd.nextInt(3000), () => client(c));
      return;
    }
    if (!me.holding && me.permits === 0 && rnd.next() < 0.05) {
      // How many permits are free (a linearizable read): an extra or a missing permit shows here.
      routeCall({ kind: 'readSemaphore', name: 'S' }, '', (out) => {
        if (out === null) counts.indeterminate++;
        else {
          counts.acknowledged++;
          semHistory.push({ object: 'S', client: -2 - c, input: { op: 'available', client: -1 }, output: { permits: out.value as number }, callMs, returnMs: now });
        }
        next();
      });
      return;
    }
    if (me.permits !== 0 || (!me.holding && rnd.next() < 0.15)) {
      // Semaphore 'S' (2 permits, session-aware): acquire 1 (waiting up to 2 s, or not), release it on the next turn.
      const input: SemaphoreInput = me.permits === 0 ? { op: 'acquire', client: me.session } : { op: 'release', client: me.session };
      const wait = rnd.next() < 0.5;
      const command: CpCommand = input.op === 'acquire' ? { kind: 'semaphore', op: 'acquire', name: 'S', session: me.session, permits: 1, timeoutMs: wait ? 2000 : 0 } : { kind: 'semaphore', op: 'release', name: 'S', session: me.session, permits: 1 };
      routeCall({ kind: 'write', command }, invocation, (out) => {
        if (expiredAnswer(out)) {
          // It did nothing: the session was gone before it.
          counts.acknowledged++;
          sessionLost(c, me);
          return next();
        }
        const r = out?.value as CpResult | undefined;
        let output: SemaphoreOutput | undefined;
        if (r !== undefined && r.type === 'acquired') output = { acquired: r.acquired };
        else if (r !== undefined && r.type === 'permits') output = { ok: true };
        else if (r !== undefined && r.type === 'error' && r.code === 'not-enough-permits') output = { ok: false };
        if (out === null) counts.indeterminate++;
        else {
          counts.acknowledged++;
          me.lastOkCallMs = callMs;
        }
        // Without an answer it may hold a permit: it releases to find out (200 or not-enough-permits).
        if (input.op === 'acquire' && output === undefined) me.maybeAcquires++;
        me.permits = input.op === 'acquire' ? (output === undefined ? -1 : 'acquired' in output && output.acquired ? 1 : 0) : output === undefined ? -1 : 0;
        semHistory.push({ object: 'S', client: me.session, input, output, callMs, returnMs: out === null ? Infinity : now });
        next();
      });
      return;
    }
    if (me.holding || rnd.next() < 0.2) {
      // FencedLock 'L': a tryLock waiting up to 3 s, or one that does not wait, then unlock on the
      // next turn. (A lock that waits for ever would hold a client as long as a holder whose own
      // call timed out keeps it: the workload would stall, not the group.)
      // As the Node client: every lock call is a new thread id (the lock is not re-entered), and
      // the unlock names the thread of the lock it releases. The owner in the model is that thread:
      // a lock whose outcome was unknown may be granted after its client moved on.
      if (!me.holding) me.thread = ++threadSeq;
      const input: LockInput = me.holding ? { op: 'unlock', client: me.thread } : { op: 'lock', client: me.thread, wait: rnd.next() < 0.7 };
      const command: CpCommand = input.op === 'unlock' ? { kind: 'lock', op: 'unlock', name: 'L', session: me.session, thread: me.thread, fence: 0 } : { kind: 'lock', op: 'lock', name: 'L', session: me.session, thread: me.thread, timeoutMs: input.wait ? 3000 : 0 };
      routeCall({ kind: 'write', command }, invocation, (out) => {
        if (expiredAnswer(out)) {
          counts.acknowledged++;
          sessionLost(c, me);
          return next();
        }
        const r = out?.value as CpResult | undefined;
        let output: LockOutput | undefined;
        if (r !== undefined && r.type === 'fence') output = { fence: r.fence };
        else if (r !== undefined && r.type === 'unlocked') output = { ok: true };
        else if (r !== undefined && r.type === 'error' && r.code === 'not-owner') output = { ok: false };
        if (out === null) counts.indeterminate++;
        else {
          counts.acknowledged++;
          me.lastOkCallMs = callMs;
        }
        if (input.op === 'lock' && output === undefined) me.maybeThreads.add(me.thread);
        // After a lock whose outcome is unknown the client may hold it: it unlocks to find out.
        me.holding = input.op === 'lock' ? output === undefined || ('fence' in output && output.fence > 0) : output === undefined;
        lockHistory.push({ object: 'L', client: c, input, output, callMs, returnMs: out === null ? Infinity : now });
        next();
      });
      return;
    }
    const long = rnd.next() < 0.7;
    if (long) {
      const name = rnd.next() < 0.5 ? 'a' : 'b';
      const k = rnd.nextInt(6);
      const v = BigInt(rnd.nextInt(5));
      const input: LongInput = k === 0 ? { op: 'get' } : k === 1 ? { op: 'set', value: v } : k === 2 ? { op: 'addAndGet', delta: 1n } : k === 3 ? { op: 'getAndAdd', delta: v } : k === 4 ? { op: 'compareAndSet', expected: v, updated: BigInt(rnd.nextInt(5)) } : { op: 'getAndSet', value: v };
      const call: Call = input.op === 'get' ? { kind: 'readLong', name } : { kind: 'write', command: { kind: 'long', op: input.op, name, a: 'value' in input ? input.value : 'delta' in input ? input.delta : input.expected, b: input.op === 'compareAndSet' ? input.updated : 0n } };
      routeCall(call, invocation, (out) => {
        let output: LongOutput | undefined;
        const res = out?.value as CpResult | bigint | undefined;
        if (out !== null && call.kind !== 'write') output = { value: res as bigint };
        else if (out !== null && typeof res === 'object') output = res.type === 'cas' ? { result: res.result } : res.type === 'long' ? (input.op === 'set' ? undefined : { value: res.value }) : undefined;
        if (out === null) counts.indeterminate++;
        else counts.acknowledged++;
        longHistory.push({ object: name, client: c, input, output, callMs, returnMs: out === null ? Infinity : now });
        next();
      });
    } else {
      const k = rnd.nextInt(3);
      const val = (): string | null => (rnd.next() < 0.2 ? null : (REF_VALUES[rnd.nextInt(3)] as string));
      const input: RefInput = k === 0 ? { op: 'get' } : k === 1 ? { op: 'set', value: val() } : { op: 'compareAndSet', expected: val(), updated: val() };
      const asRef = (s: string | null): { value: Uint8Array; contentType: null } | null => (s === null ? null : { value: Buffer.from(s), contentType: null });
      const call: Call = input.op === 'get' ? { kind: 'readRef', name: 'r' } : { kind: 'write', command: { kind: 'ref', op: input.op === 'set' ? 'set' : 'compareAndSet', name: 'r', value: asRef(input.op === 'set' ? input.value : (input as { updated: string | null }).updated), expected: input.op === 'compareAndSet' ? asRef(input.expected) : null, ifIndex: -1 } };
      routeCall(call, invocation, (out) => {
        let output: RefOutput | undefined;
        if (out !== null && call.kind !== 'write') {
          const v = out.value as { value: Uint8Array } | null;
          output = { value: v === null ? null : Buffer.from(v.value).toString() };
        } else if (out !== null && input.op === 'compareAndSet') {
          const res = out.value as CpResult;
          if (res.type === 'ref') output = { result: res.ok };
        }
        if (out === null) counts.indeterminate++;
        else counts.acknowledged++;
        refHistory.push({ object: 'r', client: c, input, output, callMs, returnMs: out === null ? Infinity : now });
        next();
      });
    }
  };
  const clients = 3 + rnd.nextInt(4);
  const lockers = new Map<number, Locker>();
  for (let c = 0; c < clients; c++) lockers.set(c, { session: 0, holding: false, thread: 0, permits: 0, lastOkCallMs: 0, maybeThreads: new Set(), maybeAcquires: 0 });
  let threadSeq = 0;
  for (let c = 0; c < clients; c++) heap.push(1000 + rnd.nextInt(500), () => client(c));

  // ---- The leader's session duty (as CpService runs it): every second, expire what is due. ----
  const expiring = new Set<string>();
  const duty = (): void => {
    if (now > endMs + 20_000) return;
    for (const id of ids) {
      if (down.has(id) || paused.has(id) || expiring.has(id)) continue;
      const r = replicas.get(id) as GroupReplica;
      if (r.core.status().role !== 'leader') continue;
      const due = r.structures.sessions.expired(now);
      if (due.length === 0) continue;
      expiring.add(id);
      r.write('', { kind: 'session', op: 'expire', sessions: due }, () => void expiring.delete(id));
      run(id);
    }
    heap.push(now + 1000, duty);
  };
  heap.push(1000, duty);

  // ---- Faults, one at a time. ----
  const fault = (): void => {
    if (now >= endMs) return;
    const kind = rnd.nextInt(5);
    const leader = ids.find((u) => !down.has(u) && (replicas.get(u) as GroupReplica).core.status().role === 'leader');
    const victim = rnd.next() < 0.6 && leader !== undefined ? leader : (ids[rnd.nextInt(size)] as string);
    let duration = 300 + rnd.nextInt(5000);
    if (kind === 0 || kind === 1) {
      if (kind === 1) duration = 50 + rnd.nextInt(400);
      log(`FAULT ${kind === 0 ? 'machine crash' : 'kill -9'} ${victim} for ${duration} ms`);
      down.add(victim);
      closeConnections(victim);
      if (kind === 0) (disks.get(victim) as SimDisk).crash({ tearLastWrite: rnd.next() < 0.5 });
      else (disks.get(victim) as SimDisk).processCrash();
      heap.push(now + 1000, () => {
        if (!down.has(victim)) return;
        for (const u of ids) if (!down.has(u)) (replicas.get(u) as GroupReplica).memberGone(victim);
      });
      heap.push(now + duration, () => {
        down.delete(victim);
        boot(victim);
        routers.set(victim, makeRouter(victim));
        run(victim);
      });
    } else if (kind === 2) {
      log(`FAULT pause ${victim} for ${duration} ms`);
      paused.add(victim);
      heap.push(now + duration, () => paused.delete(victim));
    } else {
      const side = kind === 3 ? [victim] : ids.filter(() => rnd.next() < 0.4);
      for (const a of side) for (const b of ids) if (!side.includes(b)) {
        cut.add(`${a}>${b}`);
        cut.add(`${b}>${a}`);
      }
      log(`FAULT partition [${side.join(',')}] for ${duration} ms`);
      heap.push(now + duration, () => cut.clear());
    }
    heap.push(now + duration + 200 + rnd.nextInt(2000), fault);
  };
  heap.push(2000 + rnd.nextInt(2000), fault);
  heap.push(endMs, () => {
    faultsOn = false;
  });

  for (;;) {
    const ev = heap.pop();
    if (ev === undefined || ev.at > endMs + CALL_TIMEOUT_MS + 5000) break;
    now = ev.at;
    ev.run();
  }
  const v1 = checkHistory(atomicLongModel, longHistory, 20_000);
  if (v1.result !== 'ok') fail(`AtomicLong history not linearizable (${v1.result}) on ${v1.object}${v1.result === 'illegal' ? `: ${v1.detail}` : ''}`);
  const v2 = checkHistory(atomicRefModel, refHistory, 20_000);
  if (v2.result !== 'ok') fail(`AtomicReference history not linearizable (${v2.result})${v2.result === 'illegal' ? `: ${v2.detail}` : ''}`);
  // Clients stop at the end holding what they hold; their sessions then expire and hand it on.
  for (const [c, me] of lockers) if (me.session !== 0) releasedBySessionEnd(c, me);
  const v3 = checkHistory(lockModel, lockHistory, 20_000);
  if (v3.result !== 'ok' && process.env['CP_SIM_DUMP'] === '1') for (const x of [...lockHistory].sort((a, b) => a.callMs - b.callMs)) console.log(JSON.stringify(x));
  if (v3.result !== 'ok') fail(`FencedLock history not linearizable (${v3.result})${v3.result === 'illegal' ? `: ${v3.detail}` : ''}`);
  const v4 = checkHistory(semaphoreModel(SEMAPHORE_PERMITS), semHistory, 20_000);
  if (v4.result !== 'ok' && process.env['CP_SIM_DUMP'] === '1') for (const x of [...semHistory].sort((a, b) => a.callMs - b.callMs)) console.log(JSON.stringify(x));
  if (v4.result !== 'ok') fail(`Semaphore history not linearizable (${v4.result})${v4.result === 'illegal' ? `: ${v4.detail}` : ''}`);
  if (counts.acknowledged < 50 && process.env['CP_SIM_DUMP'] === '1') {
    for (const x of [...longHistory, ...refHistory, ...lockHistory].sort((a, b) => a.callMs - b.callMs)) console.log(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
    for (const id of ids) console.log(id, JSON.stringify((replicas.get(id) as GroupReplica).core.status()), down.has(id));
  }
  if (counts.acknowledged < 50) fail(`only ${counts.acknowledged} calls answered`);
  return { seed: o.seed, size, ...counts, sessionsExpired, lockOps: lockHistory.length, semaphoreOps: semHistory.length };
}
