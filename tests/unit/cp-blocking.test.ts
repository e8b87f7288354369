// FencedLock and Semaphore state (src/cp/blocking.ts): fences are the acquiring entry's index and
// rise across owners; re-entry keeps the fence up to lock-acquire-limit (then fence 0); unlock by a
// non-owner or with another fence is refused; a release hands the lock to the first waiter in the
// same entry; a closed session's locks and permits go to the next waiters and its waits fail;
// tryLock/tryAcquire deadlines expire through the log; session-aware permits cannot be released
// by another session, sessionless ones can; initial-permits from the configuration; snapshots.
import test from 'node:test';
import assert from 'node:assert/strict';
import { LockRegistry, NOT_LOCKED, SemaphoreRegistry } from '../../src/cp/blocking.js';
import type { BlockingCompletion } from '../../src/cp/blocking.js';

const config = {
  lockAcquireLimit: (name: string) => (name === 'once' ? 1 : 0),
  semaphore: (name: string) => ({ jdkCompatible: name === 'jdk', initialPermits: name === 'three' ? 3 : 0 }),
};

test('FencedLock: the fence is the acquiring entry, re-entry keeps it, the limit answers 0', () => {
  const l = new LockRegistry(config);
  assert.deepEqual(l.lock(10, 0, 'a', 1, 7, 'i1', -1), { type: 'fence', fence: 10 });
  assert.deepEqual(l.lock(11, 0, 'a', 1, 7, 'i2', -1), { type: 'fence', fence: 10 });
  assert.deepEqual(l.ownership('a'), { type: 'ownership', fence: 10, lockCount: 2, sessionId: 1, threadId: 7 });
  assert.deepEqual(l.lock(12, 0, 'once', 1, 7, 'i3', -1), { type: 'fence', fence: 12 });
  assert.deepEqual(l.lock(13, 0, 'once', 1, 7, 'i4', -1), { type: 'fence', fence: 0, limitReached: true }, 'lock-acquire-limit 1 reached (REST 409, not a timeout)');
  assert.equal(l.indexOf('a'), 11, 'the re-entry at 11 changed its count');
  const out: BlockingCompletion[] = [];
  assert.equal(l.unlock('a', 2, 7, 0, out).type, 'error', 'another session is not the owner');
  assert.equal(l.unlock('a', 1, 7, 99, out).type, 'error', 'another fence');
  l.at = 20;
  assert.deepEqual(l.unlock('a', 1, 7, 10, out), { type: 'unlocked', stillLocked: true });
  l.at = 21;
  assert.deepEqual(l.unlock('a', 1, 7, 10, out), { type: 'unlocked', stillLocked: false });
  assert.deepEqual(l.ownership('a'), NOT_LOCKED);
  assert.equal(l.indexOf('a'), 21, 'a free lock keeps the index of the entry that freed it (its ETag)');
  assert.equal(l.indexOf('never'), 0);
  const copy = new LockRegistry(config);
  copy.restore(JSON.parse(JSON.stringify(l.snapshot())));
  assert.equal(copy.indexOf('a'), 21, 'the index survives a snapshot');
});

test('FencedLock: waiters get the lock in order with their own entry as fence; fences rise', () => {
  const l = new LockRegistry(config);
  const out: BlockingCompletion[] = [];
  l.lock(5, 0, 'a', 1, 1, 'i1', -1);
  assert.deepEqual(l.lock(6, 0, 'a', 2, 1, 'i2', -1), { type: 'waiting' });
  assert.deepEqual(l.lock(7, 0, 'a', 3, 1, 'i3', 0), { type: 'fence', fence: 0 }, 'tryLock without a wait');
  assert.deepEqual(l.lock(8, 0, 'a', 3, 1, 'i4', 1000), { type: 'waiting' });
  l.unlock('a', 1, 1, 0, out);
  assert.deepEqual(out, [{ invocation: 'i2', result: { type: 'fence', fence: 6 } }]);
  assert.equal(l.isWaiting('i4'), true);
  assert.deepEqual(l.expiredWaits(999), []);
  assert.deepEqual(l.expiredWaits(1000), ['i4']);
  const exp: BlockingCompletion[] = [];
  l.expire(new Set(['i4']), exp);
  assert.deepEqual(exp, [{ invocation: 'i4', result: { type: 'fence', fence: 0 } }], 'a timed-out tryLock answers 0');
});

test('FencedLock: a closed session releases its lock to the next waiter and fails its own waits', () => {
  const l = new LockRegistry(config);
  l.lock(1, 0, 'a', 1, 1, 'i1', -1);
  l.lock(2, 0, 'b', 2, 1, 'i2', -1);
  l.lock(3, 0, 'b', 1, 1, 'i3', -1);
  l.lock(4, 0, 'a', 3, 1, 'i4', -1);
  const out: BlockingCompletion[] = [];
  l.sessionClosed(1, out);
  assert.deepEqual(out.map((c) => [c.invocation, c.result.type]).sort(), [['i3', 'error'], ['i4', 'fence']]);
  assert.deepEqual(l.ownership('a'), { type: 'ownership', fence: 4, lockCount: 1, sessionId: 3, threadId: 1 });
  assert.equal(l.holds(1), false);
  assert.equal(l.holds(2), true);
});

test('Semaphore: session-aware permits belong to their session; waiters are granted in order', () => {
  const s = new SemaphoreRegistry(config);
  assert.equal(s.available('three'), 3, 'initial-permits from the configuration');
  assert.deepEqual(s.init('three', 5), { type: 'bool', result: false }, 'initial permits count as initialized');
  assert.deepEqual(s.init('p', 2), { type: 'bool', result: true });
  assert.deepEqual(s.acquire(0, 'p', 1, 'a1', 2, -1), { type: 'acquired', acquired: true });
  assert.deepEqual(s.acquire(0, 'p', 2, 'a2', 1, -1), { type: 'waiting' });
  assert.deepEqual(s.acquire(0, 'p', 3, 'a3', 1, 0), { type: 'acquired', acquired: false });
  const out: BlockingCompletion[] = [];
  assert.equal(s.release('p', 2, 1, out).type, 'error', 'session 2 holds none');
  assert.deepEqual(s.release('p', 1, 1, out), { type: 'permits', permits: 1 });
  assert.deepEqual(out, [{ invocation: 'a2', result: { type: 'acquired', acquired: true } }]);
  assert.equal(s.available('p'), 0);
  const closed: BlockingCompletion[] = [];
  s.sessionClosed(1, closed);
  assert.equal(s.available('p'), 1, 'the closed session\'s permit came back');
  assert.deepEqual(s.drain('p', 3), { type: 'permits', permits: 1 });
  assert.deepEqual(s.change('p', -2, out), { type: 'bool', result: true });
  assert.equal(s.available('p'), -2);
});

test('Semaphore: jdk-compatible ones are sessionless; a deadline expires a wait and lets the next through', () => {
  const s = new SemaphoreRegistry(config);
  s.init('jdk', 0);
  const out: BlockingCompletion[] = [];
  assert.deepEqual(s.release('jdk', -1, 2, out), { type: 'permits', permits: 2 }, 'anyone releases');
  s.init('q', 1);
  s.acquire(0, 'q', 1, 'b1', 1, -1);
  s.acquire(0, 'q', 2, 'b2', 2, 500);
  s.acquire(0, 'q', 3, 'b3', 1, -1);
  s.release('q', 1, 1, out);
  assert.equal(out.length, 0, 'b2 wants 2: it and those behind it wait');
  const exp: BlockingCompletion[] = [];
  s.expire(new Set(s.expiredWaits(500)), exp);
  assert.deepEqual(exp, [
    { invocation: 'b2', result: { type: 'acquired', acquired: false } },
    { invocation: 'b3', result: { type: 'acquired', acquired: true } },
  ]);
});

test('snapshots restore locks, semaphores and their waiters', () => {
  const l = new LockRegistry(config);
  l.lock(3, 0, 'a', 1, 1, 'i1', -1);
  l.lock(4, 0, 'a', 2, 1, 'i2', 500);
  const l2 = new LockRegistry(config);
  l2.restore(JSON.parse(JSON.stringify(l.snapshot())));
  assert.deepEqual(l2.ownership('a'), l.ownership('a'));
  assert.deepEqual(l2.expiredWaits(500), ['i2']);
  const s = new SemaphoreRegistry(config);
  s.init('p', 1);
  s.acquire(0, 'p', 1, 'a1', 1, -1);
  s.acquire(0, 'p', 2, 'a2', 1, -1);
  const s2 = new SemaphoreRegistry(config);
  s2.restore(JSON.parse(JSON.stringify(s.snapshot())));
  const out: BlockingCompletion[] = [];
  s2.release('p', 1, 1, out);
  assert.deepEqual(out, [{ invocation: 'a2', result: { type: 'acquired', acquired: true } }]);
  assert.equal(s2.isWaiting('a2'), false);
});

test('replicas configured differently apply the same lock and semaphore entries alike: the leader stamps its configuration', async () => {
  const { CpStructures } = await import('../../src/cp/structures.js');
  const { withSettings } = await import('../../src/cp/group-replica.js');
  const { decodeEnvelope, encodeEnvelope } = await import('../../src/cp/commands.js');
  const leaderConfig = { lockAcquireLimit: () => 1, semaphore: () => ({ jdkCompatible: true, initialPermits: 2 }) };
  const otherConfig = { lockAcquireLimit: () => 0, semaphore: () => ({ jdkCompatible: false, initialPermits: 0 }) };
  const times = { ttlMs: 300_000, heartbeatMs: 5000 };
  const leader = new CpStructures(300_000, times, leaderConfig);
  const follower = new CpStructures(300_000, times, otherConfig);
  const commands = [
    { kind: 'session', op: 'create', endpoint: 'a:1', endpointType: 'SERVER', endpointName: 'a' },
    { kind: 'lock', op: 'lock', name: 'l', session: 1, thread: 1, timeoutMs: -1 },
    { kind: 'lock', op: 'lock', name: 'l', session: 1, thread: 1, timeoutMs: -1 },
    { kind: 'semaphore', op: 'acquire', name: 's', session: 1, permits: 2, timeoutMs: 0 },
    { kind: 'semaphore', op: 'release', name: 's', session: -1, permits: 1 },
  ] as const;
  const answers: unknown[][] = [[], []];
  commands.forEach((c, i) => {
    // As the log carries it: stamped by the leader, encoded, decoded on each replica.
    const entry = decodeEnvelope(encodeEnvelope({ invocation: `inv-${i}`, nowMs: 1000 + i, command: withSettings(c, leaderConfig) }, 1024), 1024);
    answers[0]?.push(leader.apply(i + 1, entry).result);
    answers[1]?.push(follower.apply(i + 1, entry).result);
  });
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[0]?.[2], { type: 'fence', fence: 0, limitReached: true }, "the leader's lock-acquire-limit 1, not the follower's 0 (no limit)");
  assert.deepEqual(answers[0]?.[4], { type: 'permits', permits: 1 }, 'a jdk-compatible semaphore: any caller releases');
  assert.deepEqual(JSON.stringify(follower.snapshot()), JSON.stringify(leader.snapshot()));
});
