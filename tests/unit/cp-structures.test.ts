// The CP data structures' state machine (src/cp/structures.ts), command by command: AtomicLong's
// arithmetic wraps at 64 bits; AtomicReference compares stored bytes and content type and honours
// If-Match by log index; CountDownLatch rounds and per-invocation countDown; an invocation UUID
// makes a retried write apply once; waits complete when the count reaches zero, expire through the
// log, and fail when the latch is destroyed; a destroyed name can be used again; a snapshot restores
// everything, answers and waits included.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CALLER_ANSWERS_MAX, CpStructures } from '../../src/cp/structures.js';
import type { CpCommand, Envelope } from '../../src/cp/structures.js';

const DEDUPE_MS = 300_000;

function runner(): { sm: CpStructures; run: (command: CpCommand, invocation?: string, nowMs?: number) => ReturnType<CpStructures['apply']> } {
  const sm = new CpStructures(DEDUPE_MS);
  let index = 0;
  return { sm, run: (command, invocation = '', nowMs = 1000) => sm.apply(++index, { invocation, nowMs, command } as Envelope) };
}

const bytes = (s: string): Uint8Array => Buffer.from(s);

test('AtomicLong: set, add, getAndAdd, getAndSet, compareAndSet, and 64-bit wrap-around', () => {
  const { sm, run } = runner();
  assert.deepEqual(run({ kind: 'long', op: 'set', name: 'n', a: 5n, b: 0n }).result, { type: 'long', value: 5n });
  assert.deepEqual(run({ kind: 'long', op: 'addAndGet', name: 'n', a: 2n, b: 0n }).result, { type: 'long', value: 7n });
  assert.deepEqual(run({ kind: 'long', op: 'getAndAdd', name: 'n', a: -1n, b: 0n }).result, { type: 'long', value: 7n });
  assert.deepEqual(run({ kind: 'long', op: 'getAndSet', name: 'n', a: 100n, b: 0n }).result, { type: 'long', value: 6n });
  assert.deepEqual(run({ kind: 'long', op: 'compareAndSet', name: 'n', a: 1n, b: 2n }).result, { type: 'cas', result: false, value: 100n });
  assert.deepEqual(run({ kind: 'long', op: 'compareAndSet', name: 'n', a: 100n, b: 2n }).result, { type: 'cas', result: true, value: 2n });
  assert.equal(sm.getLong('n').value, 2n);
  assert.equal(sm.getLong('n').index, 6, 'the index of its last write');
  run({ kind: 'long', op: 'set', name: 'max', a: 2n ** 63n - 1n, b: 0n });
  assert.deepEqual(run({ kind: 'long', op: 'addAndGet', name: 'max', a: 1n, b: 0n }).result, { type: 'long', value: -(2n ** 63n) });
  assert.equal(sm.getLong('unknown').value, 0n, 'a new AtomicLong is 0');
});

test('an invocation UUID makes a retried write apply once, and the retry gets the first answer', () => {
  const { sm, run } = runner();
  assert.deepEqual(run({ kind: 'long', op: 'addAndGet', name: 'ids', a: 1n, b: 0n }, 'inv-1').result, { type: 'long', value: 1n });
  assert.deepEqual(run({ kind: 'long', op: 'addAndGet', name: 'ids', a: 1n, b: 0n }, 'inv-1').result, { type: 'long', value: 1n });
  assert.equal(sm.getLong('ids').value, 1n);
  // Without an invocation it applies again; after the dedupe window the UUID is forgotten.
  run({ kind: 'long', op: 'addAndGet', name: 'ids', a: 1n, b: 0n });
  assert.equal(sm.getLong('ids').value, 2n);
  run({ kind: 'long', op: 'addAndGet', name: 'ids', a: 1n, b: 0n }, 'inv-1', 1000 + DEDUPE_MS + 1);
  assert.equal(sm.getLong('ids').value, 3n);
});

test('AtomicReference: values compared as stored bytes and content type; If-Match by the index of the last write', () => {
  const { sm, run } = runner();
  const a = { value: bytes('a'), contentType: 'text/plain' };
  const r1 = run({ kind: 'ref', op: 'set', name: 'r', value: a, expected: null, ifIndex: -1 }).result;
  assert.deepEqual(r1, { type: 'ref', ok: true, old: null, index: 1 });
  const casWrongType = run({ kind: 'ref', op: 'compareAndSet', name: 'r', value: null, expected: { value: bytes('a'), contentType: 'application/json' }, ifIndex: -1 }).result;
  assert.equal(casWrongType.type === 'ref' && casWrongType.ok, false, 'same bytes, another content type');
  const cas = run({ kind: 'ref', op: 'compareAndSet', name: 'r', value: { value: bytes('b'), contentType: null }, expected: { value: bytes('a'), contentType: 'text/plain' }, ifIndex: -1 }).result;
  assert.equal(cas.type === 'ref' && cas.ok, true);
  assert.equal(sm.getRef('r').index, 3);
  const stale = run({ kind: 'ref', op: 'set', name: 'r', value: a, expected: null, ifIndex: 1 }).result;
  assert.deepEqual(stale.type === 'ref' ? [stale.ok, stale.index] : [], [false, 3], 'If-Match of an older write: 412');
  const fresh = run({ kind: 'ref', op: 'set', name: 'r', value: null, expected: null, ifIndex: 3 }).result;
  assert.equal(fresh.type === 'ref' && fresh.ok, true);
  assert.equal(sm.getRef('r').value, null, 'cleared');
});

test('CountDownLatch: trySetCount only at zero; countDown counts an invocation once per round; await completes at zero', () => {
  const { sm, run } = runner();
  assert.deepEqual(run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 2 }).result, { type: 'bool', result: true });
  assert.deepEqual(run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 5 }).result, { type: 'bool', result: false });
  assert.deepEqual(run({ kind: 'latch', op: 'await', name: 'l', timeoutMs: 10_000 }, 'w1').result, { type: 'waiting' });
  assert.deepEqual(run({ kind: 'latch', op: 'await', name: 'l', timeoutMs: 10_000 }, 'w1').result, { type: 'waiting' }, 'a retried await re-attaches');
  assert.deepEqual(run({ kind: 'latch', op: 'countDown', name: 'l', round: -1 }, 'c1').result, { type: 'count', count: 1, round: 1 });
  assert.deepEqual(run({ kind: 'latch', op: 'countDown', name: 'l', round: -1 }, 'c1').result, { type: 'count', count: 1, round: 1 }, 'a retried countDown counts once');
  const last = run({ kind: 'latch', op: 'countDown', name: 'l', round: 1 }, 'c2');
  assert.deepEqual(last.result, { type: 'count', count: 0, round: 1 });
  assert.deepEqual(last.completions, [{ invocation: 'w1', result: { type: 'bool', result: true } }]);
  assert.deepEqual(sm.answerOf('w1'), { type: 'bool', result: true }, 'a retry of the wait after a leader change gets its answer');
  assert.deepEqual(run({ kind: 'latch', op: 'countDown', name: 'l', round: 0 }, 'c3').result, { type: 'count', count: 0, round: 1 }, 'an older round is ignored');
  assert.equal(run({ kind: 'latch', op: 'countDown', name: 'l', round: 7 }, 'c4').result.type, 'error', 'a future round is an error');
  assert.deepEqual(run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 1 }).result, { type: 'bool', result: true }, 'a new round');
  assert.deepEqual(sm.getLatch('l'), { count: 1, round: 2, index: 10 });
});

test('waits expire through the log, and fail when their latch is destroyed; a destroyed name is used again', () => {
  const { sm, run } = runner();
  run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 1 });
  run({ kind: 'latch', op: 'await', name: 'l', timeoutMs: 500 }, 'w1', 1000);
  run({ kind: 'latch', op: 'await', name: 'l', timeoutMs: 5000 }, 'w2', 1000);
  assert.deepEqual(sm.expiredWaits(1400), []);
  assert.deepEqual(sm.expiredWaits(1500), ['w1']);
  const exp = run({ kind: 'expireWaits', invocations: ['w1'] }, '', 1500);
  assert.deepEqual(exp.completions, [{ invocation: 'w1', result: { type: 'bool', result: false } }]);
  const d = run({ kind: 'destroy', structure: 'latch', name: 'l' });
  assert.equal(d.completions[0]?.invocation, 'w2');
  assert.equal(d.completions[0]?.result.type, 'error');
  assert.deepEqual(run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 3 }).result, { type: 'bool', result: true }, 'the name is free again');
  run({ kind: 'long', op: 'set', name: 'x', a: 9n, b: 0n });
  run({ kind: 'destroy', structure: 'long', name: 'x' });
  assert.equal(sm.getLong('x').value, 0n);
});

test('a snapshot restores every object, the kept answers and the waits', () => {
  const { sm, run } = runner();
  run({ kind: 'long', op: 'set', name: 'n', a: -42n, b: 0n }, 'i1');
  run({ kind: 'ref', op: 'set', name: 'r', value: { value: Uint8Array.from([0, 255, 7]), contentType: null }, expected: null, ifIndex: -1 }, 'i2');
  run({ kind: 'latch', op: 'trySetCount', name: 'l', count: 2 });
  run({ kind: 'latch', op: 'countDown', name: 'l', round: -1 }, 'c1');
  run({ kind: 'latch', op: 'await', name: 'l', timeoutMs: 9000 }, 'w1');
  const copy = new CpStructures(DEDUPE_MS);
  copy.restore(sm.snapshot());
  assert.deepEqual(copy.getLong('n'), sm.getLong('n'));
  assert.deepEqual([...(copy.getRef('r').value?.value ?? [])], [0, 255, 7]);
  assert.deepEqual(copy.getLatch('l'), sm.getLatch('l'));
  assert.equal(copy.isWaiting('w1'), true);
  assert.deepEqual(copy.answerOf('i1'), { type: 'long', value: -42n });
  const refAnswer = copy.answerOf('i2');
  assert.ok(refAnswer?.type === 'ref' && refAnswer.ok && refAnswer.old === null);
  // The copy keeps counting where the original was: c1 counts once, the next countDown wakes w1.
  const again = copy.apply(6, { invocation: 'c1', nowMs: 1000, command: { kind: 'latch', op: 'countDown', name: 'l', round: -1 } });
  assert.deepEqual(again.result, { type: 'count', count: 1, round: 1 });
  const done = copy.apply(7, { invocation: 'c2', nowMs: 1000, command: { kind: 'latch', op: 'countDown', name: 'l', round: -1 } });
  assert.equal(done.completions[0]?.invocation, 'w1');
});

test('sessions, locks and semaphores in the group state machine: calls need a live session and count as heartbeats', () => {
  const { sm, run } = runner();
  const created = run({ kind: 'session', op: 'create', endpoint: '10.0.0.1:40000', endpointType: 'CLIENT', endpointName: 'app' }).result;
  assert.deepEqual(created, { type: 'session', id: 1, ttlMs: 300_000, heartbeatMs: 5000 });
  const lock = run({ kind: 'lock', op: 'lock', name: 'L', session: 1, thread: 1, timeoutMs: -1 }, 'l1', 2000);
  assert.deepEqual(lock.result, { type: 'fence', fence: 2 });
  assert.equal(sm.sessions.get(1)?.expirationTime, 302_000, 'the lock call was a heartbeat');
  assert.equal(run({ kind: 'lock', op: 'lock', name: 'L', session: 9, thread: 1, timeoutMs: -1 }, 'l2').result.type, 'error', 'an unknown session');
  run({ kind: 'session', op: 'create', endpoint: 'b', endpointType: 'CLIENT', endpointName: 'b' });
  assert.deepEqual(run({ kind: 'lock', op: 'lock', name: 'L', session: 2, thread: 1, timeoutMs: -1 }, 'l3').result, { type: 'waiting' });
  assert.deepEqual(run({ kind: 'lock', op: 'lock', name: 'L', session: 2, thread: 1, timeoutMs: -1 }, 'l3').result, { type: 'waiting' }, 'a retried wait re-attaches');
  const closed = run({ kind: 'session', op: 'close', id: 1 });
  assert.deepEqual(closed.completions, [{ invocation: 'l3', result: { type: 'fence', fence: 5 } }], 'the closed session\'s lock goes to the waiter');
  assert.deepEqual(sm.answerOf('l3'), { type: 'fence', fence: 5 }, 'the fence is its first acquiring entry');
  run({ kind: 'semaphore', op: 'init', name: 'S', permits: 1 });
  assert.deepEqual(run({ kind: 'semaphore', op: 'acquire', name: 'S', session: 2, permits: 1, timeoutMs: 0 }, 's1').result, { type: 'acquired', acquired: true });
  const copy = new CpStructures(DEDUPE_MS);
  copy.restore(sm.snapshot());
  assert.deepEqual(copy.locks.ownership('L'), sm.locks.ownership('L'));
  assert.equal(copy.semaphores.available('S'), 0);
  assert.deepEqual(copy.sessions.list(), sm.sessions.list());
});

test('a session expiry decided on an old version does not close a session that heartbeat since', () => {
  const { sm, run } = runner();
  run({ kind: 'session', op: 'create', endpoint: 'a', endpointType: 'CLIENT', endpointName: 'a' }, '', 0);
  const due = sm.sessions.expired(300_000);
  run({ kind: 'session', op: 'heartbeat', id: 1 }, '', 299_000);
  run({ kind: 'session', op: 'expire', sessions: due }, '', 300_000);
  assert.equal(sm.sessions.isActive(1), true);
  sm.onNewTerm(0);
  assert.equal(sm.sessions.get(1)?.expirationTime, 599_000 + 5000, 'a new leader shifted the expiry');
});

test('a member\'s invocations: applied once, kept until the member\'s floor passes them, a late copy ignored', () => {
  const { sm, run } = runner();
  const add = { kind: 'long', op: 'addAndGet', name: 'n', a: 1n, b: 0n } as const;
  const m = '6f1c3a52-1d7e-4c1e-9b55-0a1f2e3d4c5b';
  assert.deepEqual(run(add, `~${m}/1/1`).result, { type: 'long', value: 1n });
  assert.deepEqual(run(add, `~${m}/2/1`).result, { type: 'long', value: 2n });
  assert.deepEqual(run(add, `~${m}/1/1`).result, { type: 'long', value: 1n }, 'a retry of 1 gets its first answer');
  // The member is done with 1 and 2: its next call says so, and their answers go.
  assert.deepEqual(run(add, `~${m}/3/3`).result, { type: 'long', value: 3n });
  assert.equal(sm.answerOf(`~${m}/1/1`), undefined);
  assert.deepEqual(run(add, `~${m}/2/1`).result, { type: 'none' }, 'a late copy of 2 (below the floor) changes nothing');
  assert.equal(sm.getLong('n').value, 3n);
  assert.equal(sm.counts().answers, 1, 'only 3 is kept');
  // Another member's sequences are its own.
  assert.deepEqual(run(add, `~other/1/1`).result, { type: 'long', value: 4n });
  // Kept in snapshots.
  const copy = new CpStructures(DEDUPE_MS);
  copy.restore(sm.snapshot());
  assert.deepEqual(copy.apply(99, { invocation: `~${m}/3/3`, nowMs: 1000, command: add }).result, { type: 'long', value: 3n });
  assert.deepEqual(copy.apply(100, { invocation: `~${m}/2/1`, nowMs: 1000, command: add }).result, { type: 'none' });
  // A member that went away: its answers go after the dedupe time.
  run(add, '', 1000 + DEDUPE_MS + 1);
  assert.equal(sm.answerOf(`~${m}/3/3`), undefined);
});

test('caller-named invocations are kept at most CALLER_ANSWERS_MAX, the oldest forgotten first', () => {
  const { sm, run } = runner();
  const add = { kind: 'long', op: 'addAndGet', name: 'n', a: 1n, b: 0n } as const;
  for (let i = 0; i <= CALLER_ANSWERS_MAX; i++) run(add, `c-${i}`);
  assert.equal(sm.counts().answers, CALLER_ANSWERS_MAX);
  assert.equal(sm.answerOf('c-0'), undefined);
  assert.deepEqual(sm.answerOf(`c-${CALLER_ANSWERS_MAX}`), { type: 'long', value: BigInt(CALLER_ANSWERS_MAX + 1) });
});

test('a call withdrawn before its entry comes waits for nothing when it comes (its caller went away)', () => {
  const { sm, run } = runner();
  run({ kind: 'semaphore', op: 'init', name: 's', permits: 0 });
  const session = run({ kind: 'session', op: 'create', endpoint: 'a:1', endpointType: 'SERVER', endpointName: 'a' }).result as { type: string; id?: number };
  const id = (session as { session?: { id: number } }).session?.id ?? (session as { id: number }).id;
  // The withdrawal is applied first; the acquire it names comes after (routed late).
  assert.deepEqual(run({ kind: 'expireWaits', invocations: ['gone-1'] }).result, { type: 'none' });
  assert.deepEqual(run({ kind: 'semaphore', op: 'acquire', name: 's', session: id, permits: 1, timeoutMs: -1 }, 'gone-1').result, { type: 'none' }, 'answered already: not a wait');
  assert.equal(sm.isWaiting('gone-1'), false);
  const granted = run({ kind: 'semaphore', op: 'change', name: 's', session: id, delta: 1 });
  assert.deepEqual(granted.completions, [], 'the permit goes to nobody');
  assert.equal(sm.semaphores.available('s'), 1);
  // A withdrawal of a call that is waiting answers it as a timeout would.
  const waiting = run({ kind: 'semaphore', op: 'acquire', name: 's', session: id, permits: 2, timeoutMs: -1 }, 'w-2');
  assert.deepEqual(waiting.result, { type: 'waiting' });
  assert.deepEqual(run({ kind: 'expireWaits', invocations: ['w-2'] }).completions, [{ invocation: 'w-2', result: { type: 'acquired', acquired: false } }]);
});
