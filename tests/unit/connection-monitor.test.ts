// Checks src/cluster/connection-monitor.ts, the refusal rule of issue #11, as a pure function of
// the times passed in: maxFaults refusals at least 0.75 x intervalMs apart suspect a member (re-dial
// timers may fire a little early); a flood of refusals closer together counts once per that span;
// a member heard again starts from nothing; a watch with no refusal ends after watchMs; faults are
// per uuid, so a new incarnation at the same address inherits nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionMonitor } from '../../src/cluster/connection-monitor.js';

const monitor = (): ConnectionMonitor => new ConnectionMonitor({ intervalMs: 100, maxFaults: 3, watchMs: 10_000 });

test('three refusals 100 ms apart suspect; the log gets the count and the span', () => {
  const m = monitor();
  m.watch('u1', 'h:1', 0);
  assert.deepEqual(m.refused('u1', 'h:1', 1), { kind: 'counted', faults: 1 });
  assert.deepEqual(m.refused('u1', 'h:1', 101), { kind: 'counted', faults: 2 });
  assert.deepEqual(m.refused('u1', 'h:1', 201), { kind: 'suspect', faults: 3, spanMs: 200 });
  assert.equal(m.isWatched('u1'), false, 'a suspected member is handed over to membership');
});

test('a flood counts at most once per three quarters of an interval: no suspicion before (maxFaults - 1) x 75 ms', () => {
  const m = monitor();
  for (let t = 0; t < 150; t += 1) assert.notEqual(m.refused('u1', 'h:1', t).kind, 'suspect', `at ${t} ms`);
  assert.equal(m.refused('u1', 'h:1', 150).kind, 'suspect');
});

test('re-dials from a timer that fires a little early still count: refusals 99.6 ms apart suspect at the third', () => {
  const m = monitor();
  assert.equal(m.refused('u1', 'h:1', 1000).kind, 'counted');
  assert.equal(m.refused('u1', 'h:1', 1099.6).kind, 'counted');
  assert.equal(m.refused('u1', 'h:1', 1199.2).kind, 'suspect');
});

test('a member heard again starts from nothing', () => {
  const m = monitor();
  m.refused('u1', 'h:1', 0);
  m.refused('u1', 'h:1', 100);
  m.forget('u1');
  assert.deepEqual(m.refused('u1', 'h:1', 200), { kind: 'counted', faults: 1 });
});

test('faults are per uuid: a new incarnation at the same address inherits none', () => {
  const m = monitor();
  m.refused('old', 'h:1', 0);
  m.refused('old', 'h:1', 100);
  assert.deepEqual(m.refused('new', 'h:1', 200), { kind: 'counted', faults: 1 });
});

test('a watch with no refusal ends after watchMs; due() lists what to dial', () => {
  const m = monitor();
  m.watch('u1', 'h:1', 0);
  m.watch('u2', 'h:2', 5000);
  assert.deepEqual(m.due(9000).map((d) => d.uuid), ['u1', 'u2']);
  assert.deepEqual(m.due(10_001).map((d) => d.uuid), ['u2']);
  m.retain((u) => u !== 'u2');
  assert.equal(m.size, 0);
});

test('bad options are refused', () => {
  assert.throws(() => new ConnectionMonitor({ intervalMs: 100, maxFaults: 0, watchMs: 1 }), RangeError);
  assert.throws(() => new ConnectionMonitor({ intervalMs: 0, maxFaults: 3, watchMs: 1 }), RangeError);
});
