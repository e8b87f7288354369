// The linearizability checker (tests/harness/linearizability.ts) on small histories whose verdict is
// known by hand: it must reject a stale read, a lost update, a duplicated id and a latch whose count
// goes back up, accept correct histories (concurrent ones, and ones with calls whose outcome is
// unknown), and say 'unknown' instead of passing when its deadline runs out.
import test from 'node:test';
import assert from 'node:assert/strict';
import { atomicLongModel, atomicRefModel, checkHistory, latchModel, lockModel, semaphoreModel } from '../harness/linearizability.js';
import type { SemaphoreInput, SemaphoreOutput } from '../harness/linearizability.js';
import type { LatchInput, LatchOutput, LockInput, LockOutput, LongInput, LongOutput, Operation, RefInput, RefOutput } from '../harness/linearizability.js';

type LongOp = Operation<LongInput, LongOutput>;
const op = (client: number, callMs: number, returnMs: number, input: LongInput, output: LongOutput | undefined, object = 'x'): LongOp => ({ object, client, input, output, callMs, returnMs });

test('a sequential history that follows the model is linearizable', () => {
  const h = [op(1, 0, 1, { op: 'set', value: 5n }, undefined), op(2, 2, 3, { op: 'get' }, { value: 5n }), op(1, 4, 5, { op: 'addAndGet', delta: 2n }, { value: 7n })];
  assert.deepEqual(checkHistory(atomicLongModel, h), { result: 'ok' });
});

test('a stale read is rejected: a read that starts after a write finished must see it', () => {
  const h = [op(1, 0, 10, { op: 'set', value: 1n }, undefined), op(2, 20, 30, { op: 'get' }, { value: 0n })];
  const v = checkHistory(atomicLongModel, h);
  assert.equal(v.result, 'illegal');
});

test('the same read overlapping the write may see either value', () => {
  for (const seen of [0n, 1n]) {
    const h = [op(1, 0, 10, { op: 'set', value: 1n }, undefined), op(2, 5, 30, { op: 'get' }, { value: seen })];
    assert.equal(checkHistory(atomicLongModel, h).result, 'ok');
  }
});

test('a lost update is rejected: two increments that both answered 1', () => {
  const h = [op(1, 0, 10, { op: 'addAndGet', delta: 1n }, { value: 1n }), op(2, 0, 10, { op: 'addAndGet', delta: 1n }, { value: 1n })];
  assert.equal(checkHistory(atomicLongModel, h).result, 'illegal');
  const h2 = [op(1, 0, 10, { op: 'addAndGet', delta: 1n }, { value: 1n }), op(2, 0, 10, { op: 'addAndGet', delta: 1n }, { value: 2n }), op(3, 20, 21, { op: 'get' }, { value: 1n })];
  assert.equal(checkHistory(atomicLongModel, h2).result, 'illegal', 'a later read that lost one increment');
});

test('a duplicated id is rejected; ids handed out concurrently in any order are accepted', () => {
  const ids = [op(1, 0, 5, { op: 'addAndGet', delta: 1n }, { value: 2n }), op(2, 1, 6, { op: 'addAndGet', delta: 1n }, { value: 1n }), op(3, 2, 7, { op: 'addAndGet', delta: 1n }, { value: 3n })];
  assert.equal(checkHistory(atomicLongModel, ids).result, 'ok');
  const dup = [...ids, op(4, 8, 9, { op: 'addAndGet', delta: 1n }, { value: 3n })];
  assert.equal(checkHistory(atomicLongModel, dup).result, 'illegal');
});

test('compare-and-set: a CAS that answered true must have seen the expected value', () => {
  const ok = [op(1, 0, 1, { op: 'set', value: 3n }, undefined), op(2, 2, 3, { op: 'compareAndSet', expected: 3n, updated: 4n }, { result: true }), op(3, 4, 5, { op: 'get' }, { value: 4n })];
  assert.equal(checkHistory(atomicLongModel, ok).result, 'ok');
  const bad = [op(1, 0, 1, { op: 'set', value: 3n }, undefined), op(2, 2, 3, { op: 'compareAndSet', expected: 2n, updated: 4n }, { result: true })];
  assert.equal(checkHistory(atomicLongModel, bad).result, 'illegal');
});

test('a call whose outcome is unknown may have taken effect or not, at any time after its call', () => {
  const took = [op(1, 0, Infinity, { op: 'addAndGet', delta: 1n }, undefined), op(2, 10, 11, { op: 'get' }, { value: 1n })];
  const didNot = [op(1, 0, Infinity, { op: 'addAndGet', delta: 1n }, undefined), op(2, 10, 11, { op: 'get' }, { value: 0n })];
  assert.equal(checkHistory(atomicLongModel, took).result, 'ok');
  assert.equal(checkHistory(atomicLongModel, didNot).result, 'ok');
  const twice = [...took, op(2, 12, 13, { op: 'get' }, { value: 2n })];
  assert.equal(checkHistory(atomicLongModel, twice).result, 'illegal', 'one unknown increment cannot count twice');
  const before = [op(2, 0, 1, { op: 'get' }, { value: 1n }), op(1, 5, Infinity, { op: 'addAndGet', delta: 1n }, undefined)];
  assert.equal(checkHistory(atomicLongModel, before).result, 'illegal', 'nor take effect before its call');
});

test('64-bit wrap-around is part of the model', () => {
  const h = [op(1, 0, 1, { op: 'set', value: 2n ** 63n - 1n }, undefined), op(1, 2, 3, { op: 'addAndGet', delta: 1n }, { value: -(2n ** 63n) })];
  assert.equal(checkHistory(atomicLongModel, h).result, 'ok');
});

test('objects are checked apart: a violation on one object is named', () => {
  const h = [op(1, 0, 1, { op: 'set', value: 1n }, undefined, 'a'), op(2, 2, 3, { op: 'get' }, { value: 1n }, 'a'), op(1, 0, 1, { op: 'set', value: 1n }, undefined, 'b'), op(2, 2, 3, { op: 'get' }, { value: 9n }, 'b')];
  const v = checkHistory(atomicLongModel, h);
  assert.equal(v.result, 'illegal');
  assert.equal(v.result === 'illegal' ? v.object : '', 'b');
});

test('AtomicReference: null, compare-and-set by value, stale reads rejected', () => {
  const r = (client: number, callMs: number, returnMs: number, input: RefInput, output: RefOutput | undefined): Operation<RefInput, RefOutput> => ({ object: 'r', client, input, output, callMs, returnMs });
  const ok = [r(1, 0, 1, { op: 'isNull' }, { result: true }), r(1, 2, 3, { op: 'compareAndSet', expected: null, updated: 'a' }, { result: true }), r(2, 4, 5, { op: 'get' }, { value: 'a' })];
  assert.equal(checkHistory(atomicRefModel, ok).result, 'ok');
  const stale = [r(1, 0, 1, { op: 'set', value: 'a' }, undefined), r(2, 2, 3, { op: 'set', value: 'b' }, undefined), r(3, 4, 5, { op: 'get' }, { value: 'a' })];
  assert.equal(checkHistory(atomicRefModel, stale).result, 'illegal');
});

test('CountDownLatch: a count that goes back up without a new trySetCount is rejected', () => {
  const l = (client: number, callMs: number, returnMs: number, input: LatchInput, output: LatchOutput | undefined): Operation<LatchInput, LatchOutput> => ({ object: 'l', client, input, output, callMs, returnMs });
  const ok = [l(1, 0, 1, { op: 'trySetCount', count: 2 }, { result: true }), l(2, 2, 3, { op: 'countDown' }, { count: 1 }), l(3, 4, 5, { op: 'getCount' }, { count: 1 }), l(1, 6, 7, { op: 'trySetCount', count: 5 }, { result: false })];
  assert.equal(checkHistory(latchModel, ok).result, 'ok');
  const back = [l(1, 0, 1, { op: 'trySetCount', count: 2 }, { result: true }), l(2, 2, 3, { op: 'countDown' }, { count: 1 }), l(3, 4, 5, { op: 'getCount' }, { count: 2 })];
  assert.equal(checkHistory(latchModel, back).result, 'illegal');
});

test('a search past its deadline answers unknown, never ok', () => {
  // Many concurrent increments with unknown outcomes and a final read no count can explain.
  const h: LongOp[] = [];
  for (let c = 0; c < 24; c++) h.push(op(c, 0, Infinity, { op: 'addAndGet', delta: 1n << BigInt(c) }, undefined));
  h.push(op(99, 1, 2, { op: 'get' }, { value: -1n }));
  const v = checkHistory(atomicLongModel, h, 50);
  assert.notEqual(v.result, 'ok');
});

test('FencedLock: fences must rise, two holders at once are rejected, an unlock is by the owner', () => {
  type L = Operation<LockInput, LockOutput>;
  const l = (client: number, callMs: number, returnMs: number, input: LockInput, output: LockOutput | undefined): L => ({ object: 'L', client, input, output, callMs, returnMs });
  const ok: L[] = [l(1, 0, 1, { op: 'lock', client: 1, wait: true }, { fence: 5 }), l(2, 0, 10, { op: 'lock', client: 2, wait: true }, { fence: 9 }), l(1, 2, 3, { op: 'unlock', client: 1 }, { ok: true })];
  assert.equal(checkHistory(lockModel, ok).result, 'ok');
  const twoHolders: L[] = [l(1, 0, 1, { op: 'lock', client: 1, wait: true }, { fence: 5 }), l(2, 2, 3, { op: 'lock', client: 2, wait: true }, { fence: 9 })];
  assert.equal(checkHistory(lockModel, twoHolders).result, 'illegal');
  const fenceBack: L[] = [l(1, 0, 1, { op: 'lock', client: 1, wait: true }, { fence: 5 }), l(1, 2, 3, { op: 'unlock', client: 1 }, { ok: true }), l(2, 4, 5, { op: 'lock', client: 2, wait: true }, { fence: 4 })];
  assert.equal(checkHistory(lockModel, fenceBack).result, 'illegal', 'a fence that went back');
  const tryHeld: L[] = [l(1, 0, 1, { op: 'lock', client: 1, wait: true }, { fence: 5 }), l(2, 2, 3, { op: 'lock', client: 2, wait: false }, { fence: 0 })];
  assert.equal(checkHistory(lockModel, tryHeld).result, 'ok');
  const tryFree: L[] = [l(2, 2, 3, { op: 'lock', client: 2, wait: false }, { fence: 0 })];
  assert.equal(checkHistory(lockModel, tryFree).result, 'illegal', 'a tryLock without a wait that found the lock free must take it');
});

test('FencedLock: an unlock whose outcome is unknown may have released the lock or found it not held', () => {
  type L = Operation<LockInput, LockOutput>;
  const l = (client: number, callMs: number, returnMs: number, input: LockInput, output: LockOutput | undefined): L => ({ object: 'L', client, input, output, callMs, returnMs });
  const h: L[] = [l(2, 0, 1, { op: 'lock', client: 2, wait: true }, { fence: 3 }), l(2, 2, Infinity, { op: 'unlock', client: 2 }, undefined), l(2, 10, 11, { op: 'unlock', client: 2 }, { ok: true }), l(1, 12, 13, { op: 'lock', client: 1, wait: true }, { fence: 7 })];
  assert.equal(checkHistory(lockModel, h).result, 'ok', 'the first unlock never applied');
});

test('semaphore of 2 permits: three holders at once, a release of nothing, a refused acquire with one free are rejected', () => {
  type Op = Operation<SemaphoreInput, SemaphoreOutput>;
  const op = (client: number, input: SemaphoreInput, output: SemaphoreOutput | undefined, callMs: number, returnMs: number): Op => ({ object: 's', client, input, output, callMs, returnMs });
  const acq = (c: number): SemaphoreInput => ({ op: 'acquire', client: c });
  const rel = (c: number): SemaphoreInput => ({ op: 'release', client: c });
  const ok: Op[] = [op(1, acq(1), { acquired: true }, 0, 1), op(2, acq(2), { acquired: true }, 2, 3), op(3, acq(3), { acquired: false }, 4, 5), op(1, rel(1), { ok: true }, 6, 7), op(3, acq(3), { acquired: true }, 8, 9)];
  assert.equal(checkHistory(semaphoreModel(2), ok).result, 'ok');
  const three: Op[] = [op(1, acq(1), { acquired: true }, 0, 1), op(2, acq(2), { acquired: true }, 2, 3), op(3, acq(3), { acquired: true }, 4, 5)];
  assert.equal(checkHistory(semaphoreModel(2), three).result, 'illegal', 'a third permit');
  assert.equal(checkHistory(semaphoreModel(2), [op(1, rel(1), { ok: true }, 0, 1)]).result, 'illegal', 'released what it did not hold');
  assert.equal(checkHistory(semaphoreModel(2), [op(1, acq(1), { acquired: false }, 0, 1)]).result, 'illegal', 'refused while both were free');
  const unknown: Op[] = [op(1, acq(1), undefined, 0, Infinity), op(2, acq(2), { acquired: true }, 2, 3), op(3, acq(3), { acquired: false }, 4, 5), op(1, rel(1), { ok: true }, 6, 7)];
  assert.equal(checkHistory(semaphoreModel(2), unknown).result, 'ok', 'an acquire without an answer may have taken effect');
  const overlapping: Op[] = [op(1, acq(1), { acquired: true }, 0, 10), op(2, acq(2), { acquired: true }, 1, 9), op(3, acq(3), { acquired: false }, 2, 8)];
  assert.equal(checkHistory(semaphoreModel(2), overlapping).result, 'ok', 'concurrent: the refusal after both acquires');
});
