// CP sessions (src/cp/sessions.ts): ids rise from 1; a heartbeat extends the expiry and bumps the
// version; an expiry decided on an older version is cancelled by a heartbeat in between; a new
// leader shifts every expiry by one heartbeat interval; sessions holding nothing past a TTL since
// creation are inactive; a snapshot restores them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CpSessions } from '../../src/cp/sessions.js';

const TIMES = { ttlMs: 300_000, heartbeatMs: 5000 };

test('create and heartbeat: ids from 1, expiry = max(old, now + TTL), version + 1', () => {
  const s = new CpSessions(TIMES);
  const a = s.create(1000, '127.0.0.1:40000', 'CLIENT', 'app');
  assert.equal(a.id, 1);
  assert.equal(a.expirationTime, 301_000);
  assert.equal(s.create(1000, 'x', 'SERVER', 'm').id, 2);
  assert.equal(s.heartbeat(1, 5000), true);
  assert.deepEqual([s.get(1)?.expirationTime, s.get(1)?.version], [305_000, 1]);
  assert.equal(s.heartbeat(99, 5000), false, 'an unknown session is gone');
});

test('expiry: decided on a version; a heartbeat in between cancels it', () => {
  const s = new CpSessions(TIMES);
  s.create(0, 'a', 'CLIENT', 'a');
  s.create(0, 'b', 'CLIENT', 'b');
  const due = s.expired(300_000);
  assert.equal(due.length, 2);
  s.heartbeat(2, 299_000);
  assert.deepEqual(s.expire(due), [1]);
  assert.equal(s.isActive(1), false);
  assert.equal(s.isActive(2), true);
});

test('a new leader shifts every expiry by one heartbeat interval', () => {
  const s = new CpSessions(TIMES);
  s.create(0, 'a', 'CLIENT', 'a');
  s.shiftExpirations();
  assert.equal(s.get(1)?.expirationTime, 305_000);
  assert.deepEqual(s.expired(300_000), []);
});

test('inactive: holding nothing and created more than a TTL ago', () => {
  const s = new CpSessions(TIMES);
  s.create(0, 'a', 'CLIENT', 'a');
  s.create(0, 'b', 'CLIENT', 'b');
  s.create(200_000, 'c', 'CLIENT', 'c');
  assert.deepEqual(s.inactive(300_000, (id) => id === 2), [1]);
});

test('thread ids are group-wide and a snapshot restores everything', () => {
  const s = new CpSessions(TIMES);
  s.create(0, 'a', 'CLIENT', 'a');
  assert.equal(s.generateThreadId(), 1);
  assert.equal(s.generateThreadId(), 2);
  const copy = new CpSessions(TIMES);
  copy.restore(JSON.parse(JSON.stringify(s.snapshot())));
  assert.deepEqual(copy.list(), s.list());
  assert.equal(copy.generateThreadId(), 3);
  assert.equal(copy.create(1, 'd', 'CLIENT', 'd').id, 2);
});
