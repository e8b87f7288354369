// Checks the simulation harness tests/harness/sim-world.ts: virtual time and the event queue (order by
// time then scheduling order, run/runFor/step/runUntil semantics, a livelock guard), per-member
// timers (Node-like delays, clearTimeout, cancelAll), and the simulated network (per-link FIFO unless
// reordering is on, real encode/decode on every message, loss, duplication, partitions and heal,
// one-way blocks, pauses (timers and deliveries wait and run late, in order), crash and restart, cluster-name refusals, connection counts, counters),
// and a dead process (peers told of the close, dials refused) apart from a silent one and a paused one; two clusters: a
// dial-only transport (a WAN publisher's connection) whose answers come back on its connection, and degraded one-way
// links (extra loss and latency). Determinism is checked by running one randomized scenario twice per seed and
// comparing traces and fingerprints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { message, type Message } from '../../src/cluster/messages.js';
import type { Peer } from '../../src/cluster/transport.js';
import { SIM_EPOCH_MS_DEFAULT, SIM_REFUSAL_CLUSTER_NAME, SimFailure, SimWorld, type SimTransport, type SimWorldOptions } from '../harness/sim-world.js';

const A = 'a.sim:5701';
const B = 'b.sim:5701';
const C = 'c.sim:5701';

interface Inbox {
  readonly got: { from: Peer; message: Message }[];
  readonly refused: { address: string; reason: string; hard: boolean }[];
  readonly unreachable: { address: string; refused: boolean }[];
  readonly disconnected: Peer[];
}

function member(world: SimWorld, address: string, uuid: string, clusterName?: string): { t: SimTransport; inbox: Inbox } {
  const t = world.transportFor(address, uuid, clusterName === undefined ? {} : { clusterName });
  const inbox: Inbox = { got: [], refused: [], unreachable: [], disconnected: [] };
  t.setHandler({
    onMessage: (from, m) => void inbox.got.push({ from, message: m }),
    onRefused: (addr, reason, hard) => void inbox.refused.push({ address: addr, reason, hard }),
    onUnreachable: (addr, refused) => void inbox.unreachable.push({ address: addr, refused }),
    onDisconnected: (peer) => void inbox.disconnected.push(peer),
  });
  return { t, inbox };
}

/** A small numbered message: backupAck's version carries the sequence number. */
const numbered = (n: number): Message => message('backupAck', { partitionId: 1, version: n });
const numbers = (inbox: Inbox): number[] => inbox.got.map((g) => (g.message.kind === 'backupAck' ? g.message.body.version : -1));

test('the clock is virtual: wall = epoch + virtual ms, monotonic = virtual ms', () => {
  const w = new SimWorld(1);
  assert.equal(w.clock.monotonicMs(), 0);
  assert.equal(w.clock.nowMs(), SIM_EPOCH_MS_DEFAULT);
  w.runFor(1500);
  assert.equal(w.timeMs, 1500);
  assert.equal(w.clock.monotonicMs(), 1500);
  assert.equal(w.clock.nowMs(), SIM_EPOCH_MS_DEFAULT + 1500);
  assert.equal(new SimWorld(1, { epochMs: 0 }).clock.nowMs(), 0);
});

test('events run by time, then in the order they were scheduled', () => {
  const w = new SimWorld(1);
  const log: string[] = [];
  w.at(10, 'x', () => log.push('10a'));
  w.at(5, 'x', () => log.push('5'));
  w.at(10, 'x', () => log.push('10b'));
  w.after(0, 'x', () => log.push('0'));
  const cancelled = w.at(7, 'x', () => log.push('7'));
  cancelled.cancel();
  assert.equal(w.pendingEvents, 4);
  w.run(9);
  assert.deepEqual(log, ['0', '5']);
  assert.equal(w.timeMs, 9);
  assert.equal(w.step(), true);
  assert.equal(w.timeMs, 10);
  w.run(10);
  assert.deepEqual(log, ['0', '5', '10a', '10b']);
  assert.equal(w.step(), false);
  assert.equal(w.pendingEvents, 0);
  assert.throws(() => w.at(3, 'past', () => {}), /cannot schedule/);
});

test('runUntil checks the predicate first and after every event; on timeout the time is the deadline', () => {
  const w = new SimWorld(1);
  let n = 0;
  for (let t = 1; t <= 10; t++) w.at(t * 10, 'tick', () => n++);
  assert.equal(w.runUntil(() => true, 1000), true);
  assert.equal(w.timeMs, 0);
  assert.equal(w.runUntil(() => n === 3, 1000), true);
  assert.equal(w.timeMs, 30);
  assert.equal(w.runUntil(() => n === 99, 75), false);
  assert.equal(w.timeMs, 75);
  assert.equal(n, 7);
});

test('per-member timers: Node-like delays, clearTimeout, cancelAll only touches one member', () => {
  const w = new SimWorld(1);
  const ta = w.timersFor('a');
  const tb = w.timersFor('b');
  assert.equal(w.timersFor('a'), ta);
  const fired: string[] = [];
  ta.setTimeout(() => fired.push(`a0@${w.timeMs}`), 0); // below 1 ms: after 1 ms, as in Node
  ta.setTimeout(() => fired.push(`a-5@${w.timeMs}`), -5);
  const h = ta.setTimeout(() => fired.push('cleared'), 50);
  ta.setTimeout(() => fired.push(`a100@${w.timeMs}`), 100);
  tb.setTimeout(() => fired.push(`b100@${w.timeMs}`), 100);
  ta.clearTimeout(h);
  ta.clearTimeout(h);
  ta.clearTimeout({ id: 123_456 });
  w.runFor(10);
  assert.deepEqual(fired, ['a0@1', 'a-5@1']);
  assert.equal(ta.pendingCount, 1);
  assert.equal(ta.cancelAll(), 1);
  assert.equal(ta.pendingCount, 0);
  w.runFor(200);
  assert.deepEqual(fired, ['a0@1', 'a-5@1', 'b100@100']);
  // The object is usable again after cancelAll (a restarted member).
  ta.setTimeout(() => fired.push(`again@${w.timeMs}`), 5);
  w.runFor(10);
  assert.equal(fired.at(-1), 'again@215');
  assert.throws(() => ta.setTimeout(() => {}, Number.NaN));
  assert.throws(() => ta.setTimeout(() => {}, 2 ** 31));
});

test('the livelock guard and event failures name the seed', () => {
  const w = new SimWorld(77, { eventsPerRunMax: 1000 });
  const spin = (): void => void w.after(0, 'spin', spin);
  spin();
  assert.throws(() => w.runFor(1), (e: unknown) => e instanceof SimFailure && e.seed === 77 && /seed=77/.test(e.message) && /livelock/.test(e.message));
  const w2 = new SimWorld(78);
  const boom = new Error('boom');
  w2.after(3, 'explode', () => {
    throw boom;
  });
  assert.throws(() => w2.runFor(5), (e: unknown) => e instanceof SimFailure && e.cause === boom && /explode/.test(e.message) && /seed=78 t=3ms/.test(e.message));
});

test('messages arrive decoded from bytes, with the sender identity, after 1-5 ms by default', () => {
  const w = new SimWorld(5);
  const a = member(w, A, 'uuid-a');
  const b = member(w, B, 'uuid-b');
  const sent = message('invokeResult', {
    status: 1, found: true, value: Uint8Array.of(1, 2, 3), contentType: 'text/plain; charset=utf-8', count: 2 ** 40, errorCode: '', message: 'é€😀', retryAfterSeconds: 0,
  }, 42);
  assert.equal(a.t.send(B, sent), true);
  assert.equal(b.inbox.got.length, 0, 'nothing is delivered synchronously');
  w.runFor(1000);
  assert.equal(b.inbox.got.length, 1);
  const got = b.inbox.got[0];
  assert.ok(got !== undefined);
  assert.deepEqual(got.from, { uuid: 'uuid-a', address: A });
  assert.notEqual(got.message, sent);
  assert.equal(got.message.callId, 42);
  assert.ok(got.message.kind === 'invokeResult' && Buffer.isBuffer(got.message.body.value));
  assert.deepEqual({ ...got.message.body, value: [...got.message.body.value] }, { ...sent.body, value: [1, 2, 3] });
  const at = w.recentTrace().find((l) => l.includes(`deliver ${A}->${B} invokeResult#42`));
  assert.ok(at !== undefined);
  const ms = Number(at.split(' ')[0]);
  assert.ok(ms >= 1 && ms <= 5, at);
  assert.deepEqual(w.stats().delivered, { invokeResult: 1 });
});

test('per-link FIFO by default, even with widely varying delays', () => {
  const w = new SimWorld(9, { delayMsMin: 1, delayMsMax: 50 });
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  for (let i = 0; i < 300; i++) {
    a.t.send(B, numbered(i));
    if (i % 7 === 0) w.runFor(3);
  }
  w.runFor(1000);
  assert.deepEqual(numbers(b.inbox), Array.from({ length: 300 }, (_, i) => i));
});

test('reorder: true lets later messages overtake; all still arrive', () => {
  const w = new SimWorld(9, { reorder: true });
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  for (let i = 0; i < 300; i++) a.t.send(B, numbered(i));
  w.runFor(1000);
  const got = numbers(b.inbox);
  assert.deepEqual([...got].sort((x, y) => x - y), Array.from({ length: 300 }, (_, i) => i));
  assert.notDeepEqual(got, [...got].sort((x, y) => x - y), 'expected some reordering');
});

test('loss drops single messages (send still returns true); duplication delivers twice; counters add up', () => {
  const w = new SimWorld(3, { lossRate: 0.3 });
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  for (let i = 0; i < 1000; i++) assert.equal(a.t.send(B, numbered(i)), true);
  w.runFor(100);
  const s = w.stats();
  const delivered = s.delivered['backupAck'] ?? 0;
  assert.equal(delivered, b.inbox.got.length);
  assert.ok(delivered > 600 && delivered < 800, `delivered ${delivered}`);
  assert.equal((s.sent['backupAck'] ?? 0) - delivered, s.dropped['backupAck']);
  assert.equal(s.droppedByReason['loss'], s.dropped['backupAck']);
  const got = numbers(b.inbox);
  assert.ok(got.every((n, i) => i === 0 || n > (got[i - 1] as number)), 'survivors stay in order');

  w.setNetwork({ lossRate: 0, duplicateRate: 1 });
  b.inbox.got.length = 0;
  a.t.send(B, numbered(5000));
  w.runFor(100);
  assert.deepEqual(numbers(b.inbox), [5000, 5000]);
  assert.equal(w.stats().duplicated, 1);
  assert.match(w.formatStats(), /seed=3/);
  assert.match(w.formatStats(), /backupAck: sent 1001, delivered/);
});

test('partitions drop messages between groups, also those in flight; unlisted addresses form one group; heal', () => {
  const w = new SimWorld(11);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  const c = member(w, C, 'uc');
  a.t.send(B, numbered(1)); // in flight when the partition begins
  w.partition([[A]]);
  assert.equal(w.partitioned(A, B), true);
  assert.equal(w.partitioned(B, C), false);
  assert.equal(a.t.send(B, numbered(2)), true);
  b.t.send(A, numbered(3));
  b.t.send(C, numbered(4));
  c.t.send(B, numbered(5));
  w.runFor(100);
  assert.deepEqual(numbers(a.inbox), []);
  assert.deepEqual(numbers(b.inbox), [5]);
  assert.deepEqual(numbers(c.inbox), [4]);
  assert.equal(w.stats().droppedByReason['partition'], 3);

  w.partition([[A, C], [B]]);
  a.t.send(C, numbered(6));
  a.t.send(B, numbered(7));
  w.runFor(100);
  assert.deepEqual(numbers(c.inbox), [4, 6]);
  assert.deepEqual(numbers(b.inbox), [5]);
  assert.throws(() => w.partition([[A], [A, B]]), /two partition groups/);

  w.heal();
  a.t.send(B, numbered(8));
  w.runFor(100);
  assert.deepEqual(numbers(b.inbox), [5, 8]);
});

test('block is one-way: A hears B, B does not hear A; heal lifts it', () => {
  const w = new SimWorld(3);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  w.block([A], [B]);
  assert.equal(a.t.send(B, numbered(1)), true);
  b.t.send(A, numbered(2));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), []);
  assert.deepEqual(numbers(a.inbox), [2]);
  w.heal();
  a.t.send(B, numbered(3));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [3]);
});

test('partitionsHold: a partition holds messages as TCP does and delivers them in order after the heal; a closed connection drops them', () => {
  const w = new SimWorld(3, { partitionsHold: true });
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  const c = member(w, C, 'uc');
  a.t.send(B, numbered(0));
  a.t.send(C, numbered(0));
  w.runFor(20);
  w.block([A], [B, C]);
  assert.equal(a.t.send(B, numbered(1)), true);
  a.t.send(B, numbered(2));
  a.t.send(C, numbered(3));
  w.runFor(5000);
  assert.deepEqual(numbers(b.inbox), [0], 'nothing through the block');
  a.t.disconnect(C);
  w.heal();
  a.t.send(B, numbered(4));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [0, 1, 2, 4], 'held, then delivered in order before what came after the heal');
  assert.deepEqual(numbers(c.inbox), [0], 'the closed connection took its held bytes with it');
  assert.deepEqual(w.heldCounts, { delivered: 2, dropped: 1 });
});

test('pause: timers and deliveries of a paused member wait and run at resume, late and in order; cleared timers do not', () => {
  const w = new SimWorld(4);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  const timers = w.timersFor('b');
  const fired: string[] = [];
  timers.setTimeout(() => fired.push(`t1@${w.timeMs}`), 100);
  const cleared = timers.setTimeout(() => fired.push('cleared'), 200);
  w.runFor(50);
  w.pause(B, 'b');
  assert.equal(w.isPaused(B), true);
  a.t.send(B, numbered(1));
  a.t.send(B, numbered(2));
  w.runFor(1000);
  assert.deepEqual(fired, []);
  assert.deepEqual(numbers(b.inbox), []);
  timers.clearTimeout(cleared);
  w.resume(B);
  w.runFor(10);
  assert.deepEqual(fired, ['t1@1050']);
  assert.deepEqual(numbers(b.inbox), [1, 2]);
  a.t.send(B, numbered(3));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [1, 2, 3]);
});

test('crash: the dead transport neither sends nor receives, in-flight messages are lost; restart gets a new identity', () => {
  const w = new SimWorld(13);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub-1');
  a.t.send(B, numbered(1));
  w.runFor(100);
  assert.equal(a.t.connectionCount(), 1);
  assert.equal(b.t.connectionCount(), 1);

  a.t.send(B, numbered(2)); // in flight when B dies
  w.crash(B);
  assert.equal(w.isAlive(B), false);
  assert.equal(b.t.isAlive, false);
  assert.equal(b.t.send(A, numbered(3)), false, 'a dead transport refuses at once');
  assert.equal(b.t.connectionCount(), 0);
  assert.equal(a.t.connectionCount(), 0);
  assert.equal(a.t.send(B, numbered(4)), true, 'to a dead address: accepted and lost, like TCP');
  w.runFor(100);
  assert.deepEqual(numbers(b.inbox), [1]);
  assert.deepEqual(numbers(a.inbox), []);
  assert.equal(w.stats().droppedByReason['closed'], 1);
  assert.equal(w.stats().droppedByReason['unreachable'], 1);
  assert.equal(w.stats().droppedByReason['sender-closed'], 1);

  // Restart: a new transport at the same address with a new uuid.
  a.t.send(B, numbered(5)); // in flight to the old process: must not reach the new one
  const b2 = member(w, B, 'ub-2');
  assert.equal(w.transportAt(B), b2.t);
  a.t.send(B, numbered(6));
  b2.t.send(A, numbered(7));
  w.runFor(100);
  assert.deepEqual(numbers(b2.inbox), [6]);
  assert.deepEqual(a.inbox.got.map((g) => g.from), [{ uuid: 'ub-2', address: B }]);
  assert.deepEqual(numbers(b.inbox), [1]);
  // Replacing a live transport crashes the old one.
  const b3 = member(w, B, 'ub-3');
  assert.equal(b2.t.isAlive, false);
  assert.equal(b3.t.isAlive, true);
});

test('sending to an address nobody listens on, or to a member without a handler, loses the message', () => {
  const w = new SimWorld(17);
  const a = member(w, A, 'ua');
  const silent = w.transportFor(B, 'ub');
  assert.equal(a.t.send('nobody.sim:1', numbered(1)), true);
  assert.equal(a.t.send(B, numbered(2)), true);
  w.runFor(100);
  assert.deepEqual(w.stats().droppedByReason, { 'no-handler': 1, unreachable: 1 });
  assert.equal(silent.connectionCount(), 0);
});

test('another cluster: the sender is told once (soft), nothing is delivered, later sends return false until disconnect', () => {
  const w = new SimWorld(19);
  const a = member(w, A, 'ua', 'blue');
  const b = member(w, B, 'ub', 'green');
  assert.equal(a.t.send(B, numbered(1)), true, 'the refusal is not known yet');
  assert.equal(a.t.send(B, numbered(2)), true);
  w.runFor(100);
  assert.deepEqual(a.inbox.refused, [{ address: B, reason: SIM_REFUSAL_CLUSTER_NAME, hard: false }]);
  assert.deepEqual(b.inbox.got, []);
  assert.deepEqual(b.inbox.refused, []);
  assert.equal(a.t.send(B, numbered(3)), false);
  assert.equal(a.t.connectionCount(), 0);
  assert.equal(w.stats().droppedByReason['refused'], 3);
  a.t.disconnect(B); // forget, dial again: refused again
  assert.equal(a.t.send(B, numbered(4)), true);
  w.runFor(100);
  assert.equal(a.inbox.refused.length, 2);
  // The same cluster at that address after a restart is reachable again.
  const b2 = member(w, B, 'ub-2', 'blue');
  assert.equal(a.t.send(B, numbered(5)), true);
  w.runFor(100);
  assert.deepEqual(numbers(b2.inbox), [5]);
});

test('disconnect closes the pair connection and drops what it carries; the next send dials again', () => {
  const w = new SimWorld(23);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  a.t.send(B, numbered(1));
  w.runFor(10);
  assert.equal(a.t.connectionCount(), 1);
  b.t.send(A, numbered(2));
  a.t.disconnect(B);
  assert.equal(a.t.connectionCount(), 0);
  assert.equal(b.t.connectionCount(), 0);
  w.runFor(10);
  assert.deepEqual(numbers(a.inbox), [], 'in flight on the closed connection: lost');
  b.t.send(A, numbered(3));
  w.runFor(10);
  assert.deepEqual(numbers(a.inbox), [3]);
  assert.equal(a.t.connectionCount(), 1);
});

test('the in-flight byte cap makes send return false, like a full write queue', () => {
  const w = new SimWorld(29, { linkInFlightBytesMax: 100 });
  const a = member(w, A, 'ua');
  member(w, B, 'ub');
  const results = Array.from({ length: 20 }, (_, i) => a.t.send(B, numbered(i)));
  assert.ok(results.includes(false) && results[0] === true, String(results));
  w.runFor(100);
  assert.equal(a.t.send(B, numbered(99)), true, 'room again once delivered');
});

test('an encode failure is thrown from send() as a SimFailure naming the seed', () => {
  const w = new SimWorld(31);
  const a = member(w, A, 'ua');
  const bad = { kind: 'backupAck', callId: 0, body: { partitionId: -1, version: 0 } } as unknown as Message;
  assert.throws(() => a.t.send(B, bad), (e: unknown) => e instanceof SimFailure && e.seed === 31 && /encoding backupAck failed/.test(e.message));
  const badCall = { ...numbered(1), callId: -1 } as Message;
  assert.throws(() => a.t.send(B, badCall), SimFailure);
});

test('a message over frameBytesMax is dropped at once, as the real transport does', () => {
  const w = new SimWorld(37, { frameBytesMax: 64 });
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  assert.equal(a.t.send(B, message('shutdownMember', { reason: 'x'.repeat(100) })), false);
  assert.equal(a.t.send(B, message('shutdownMember', { reason: 'x'.repeat(20) })), true);
  w.runFor(10);
  assert.equal(b.inbox.got.length, 1);
  assert.equal(w.stats().droppedByReason['too-large'], 1);
});

/** A randomized chatty scenario: pings with random fan-out, timers, loss, a partition and a crash. */
function scenario(seed: number, options: SimWorldOptions = {}): { trace: string[]; fingerprint: string; stats: string } {
  const w = new SimWorld(seed, { lossRate: 0.05, ...options });
  const addresses = [A, B, C];
  const rnd = w.randomFor('scenario');
  const start = (address: string, uuid: string): void => {
    const timers = w.timersFor(address);
    const t = w.transportFor(address, uuid);
    t.setHandler({
      onMessage: (_from, m) => {
        if (m.kind === 'backupAck' && m.body.version < 400) {
          const to = addresses[rnd.nextInt(addresses.length)] as string;
          timers.setTimeout(() => void t.send(to, numbered(m.body.version + 1)), rnd.nextInt(20));
        }
      },
      onRefused: () => {},
    });
    const tick = (): void => {
      t.send(addresses[rnd.nextInt(3)] as string, numbered(0));
      timers.setTimeout(tick, 50 + rnd.nextInt(50));
    };
    timers.setTimeout(tick, rnd.nextInt(100));
  };
  for (const a of addresses) start(a, `u-${a}`);
  w.runFor(500);
  w.partition([[A], [B, C]]);
  w.runFor(300);
  w.heal();
  w.crash(B);
  w.timersFor(B).cancelAll();
  w.runFor(200);
  start(B, 'u-b-2');
  w.runFor(500);
  return { trace: w.recentTrace(), fingerprint: w.fingerprint(), stats: w.formatStats() };
}

test('determinism: the same seed gives the identical trace; another seed does not', () => {
  for (const seed of [1, 2, 0xffff_ffff]) {
    const one = scenario(seed);
    const two = scenario(seed);
    assert.ok(one.trace.length > 100, `only ${one.trace.length} trace lines`);
    assert.deepEqual(two.trace, one.trace);
    assert.equal(two.fingerprint, one.fingerprint);
    assert.equal(two.stats, one.stats);
  }
  assert.notEqual(scenario(1).fingerprint, scenario(2).fingerprint);
  // The fingerprint covers lines that fell out of the kept trace.
  const short = scenario(1, { traceLinesMax: 10 });
  assert.equal(short.trace.length, 10);
  assert.equal(short.fingerprint, scenario(1).fingerprint);
  assert.deepEqual(short.trace, scenario(1).trace.slice(-10));
});

test('randomFor depends on the seed and the name only', () => {
  const w = new SimWorld(5);
  const x = w.randomFor('m1').next();
  w.runFor(10);
  assert.equal(new SimWorld(5).randomFor('m1').next(), x);
  assert.notEqual(new SimWorld(5).randomFor('m2').next(), x);
  assert.notEqual(new SimWorld(6).randomFor('m1').next(), x);
});

test('a dead process: peers with an open connection hear the close, and every later dial is refused', () => {
  const w = new SimWorld(5);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  a.t.send(B, numbered(1));
  w.runFor(20);
  w.crash(B);
  w.runFor(20);
  assert.deepEqual(a.inbox.disconnected, [{ uuid: 'ub', address: B }]);
  a.t.send(B, numbered(2));
  a.t.send(B, numbered(3));
  w.runFor(20);
  assert.ok(a.inbox.unreachable.length >= 1 && a.inbox.unreachable.every((u) => u.address === B && u.refused), JSON.stringify(a.inbox.unreachable));
  // A new process at the address accepts: no more refusals.
  const before = a.inbox.unreachable.length;
  const b2 = member(w, B, 'ub2');
  a.t.send(B, numbered(4));
  w.runFor(20);
  assert.equal(a.inbox.unreachable.length, before);
  assert.deepEqual(numbers(b2.inbox), [4]);
  void b;
});

test('a silent process and a paused one refuse nothing; a paused peer hears a close when it resumes', () => {
  const w = new SimWorld(6);
  const a = member(w, A, 'ua');
  member(w, B, 'ub');
  member(w, C, 'uc');
  a.t.send(B, numbered(1));
  a.t.send(C, numbered(1));
  w.runFor(20);
  w.crash(B, 'silent');
  w.pause(C, 'c-timers');
  a.t.send(B, numbered(2));
  a.t.send(C, numbered(2));
  w.runFor(100);
  assert.deepEqual(a.inbox.disconnected, []);
  assert.deepEqual(a.inbox.unreachable, []);
  // A paused member hears of a dead peer only when it runs again.
  const w2 = new SimWorld(7);
  const x = member(w2, A, 'ua');
  member(w2, B, 'ub');
  x.t.send(B, numbered(1));
  w2.runFor(20);
  w2.pause(A, 'a-timers');
  w2.crash(B);
  w2.runFor(100);
  assert.deepEqual(x.inbox.disconnected, []);
  w2.resume(A);
  w2.runFor(10);
  assert.deepEqual(x.inbox.disconnected, [{ uuid: 'ub', address: B }]);
});

/** A dial-only transport (dialTransportFor) of `owner` to cluster `clusterName`, with an inbox. */
function dialer(world: SimWorld, owner: SimTransport, clusterName: string): { t: SimTransport; inbox: Inbox } {
  const t = world.dialTransportFor(owner, clusterName);
  const inbox: Inbox = { got: [], refused: [], unreachable: [], disconnected: [] };
  t.setHandler({
    onMessage: (from, m) => void inbox.got.push({ from, message: m }),
    onRefused: (addr, reason, hard) => void inbox.refused.push({ address: addr, reason, hard }),
    onUnreachable: (addr, refused) => void inbox.unreachable.push({ address: addr, refused }),
    onDisconnected: (peer) => void inbox.disconnected.push(peer),
  });
  return { t, inbox };
}

test('two clusters: a dial-only transport reaches the other cluster as its owner, and the answers come back on it', () => {
  const w = new SimWorld(8);
  const a = member(w, A, 'ua', 'a');
  const b = member(w, B, 'ub', 'b');
  const wan = dialer(w, a.t, 'b');
  // With no connection from A's dialer yet, B dialling A reaches A's member port: another cluster.
  b.t.send(A, numbered(1));
  w.runFor(20);
  assert.deepEqual(a.inbox.got, []);
  assert.equal(b.inbox.refused.length, 1);
  // The dialer handshakes with B's cluster name and A's identity; B's answer travels back on that connection.
  assert.equal(wan.t.send(B, numbered(2)), true);
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [2]);
  assert.deepEqual(b.inbox.got[0]?.from, { uuid: 'ua', address: A });
  assert.equal(b.t.send(A, numbered(3)), true, 'the open connection is used although A was refused before');
  w.runFor(20);
  assert.deepEqual(numbers(wan.inbox), [3]);
  assert.deepEqual(wan.inbox.got[0]?.from, { uuid: 'ub', address: B });
  assert.deepEqual(a.inbox.got, [], "A's member transport hears nothing of it");
  assert.equal(wan.t.connectionCount(), 1);
  assert.equal(b.t.connectionCount(), 1);
  assert.equal(a.t.connectionCount(), 0);
  // The dialer speaks cluster b: a member of cluster a refuses it.
  member(w, C, 'uc', 'a');
  wan.t.send(C, numbered(4));
  w.runFor(20);
  assert.deepEqual(wan.inbox.refused.map((r) => r.address), [C]);
  // A one-way block between the clusters stops the answers, not the batches.
  w.block([B], [A]);
  wan.t.send(B, numbered(5));
  b.t.send(A, numbered(6));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [2, 5]);
  assert.deepEqual(numbers(wan.inbox), [3]);
  w.heal();
});

test('two clusters: a dialer dies with its owner; a dead target closes the dialled connection and refuses later dials', () => {
  const w = new SimWorld(9);
  const a = member(w, A, 'ua', 'a');
  const b = member(w, B, 'ub', 'b');
  const wan = dialer(w, a.t, 'b');
  wan.t.send(B, numbered(1));
  w.runFor(20);
  w.crash(B);
  w.runFor(20);
  assert.deepEqual(wan.inbox.disconnected, [{ uuid: 'ub', address: B }]);
  assert.deepEqual(a.inbox.disconnected, []);
  wan.t.send(B, numbered(2));
  w.runFor(20);
  assert.deepEqual(wan.inbox.unreachable, [{ address: B, refused: true }]);
  // B restarts (empty, new identity): the dialer reaches it again.
  const b2 = member(w, B, 'ub2', 'b');
  wan.t.send(B, numbered(3));
  w.runFor(20);
  assert.deepEqual(numbers(b2.inbox), [3]);
  // A dies: its dialer with it; B hears the close of the dialled connection.
  w.crash(A);
  w.runFor(20);
  assert.equal(wan.t.send(B, numbered(4)), false);
  assert.deepEqual(b2.inbox.disconnected, [{ uuid: 'ua', address: A }]);
  void b;
});

test('degrade adds loss and latency to some one-way links only; restore lifts it', () => {
  const w = new SimWorld(10);
  const a = member(w, A, 'ua');
  const b = member(w, B, 'ub');
  w.degrade([A], [B], { delayMsMin: 500, delayMsMax: 600 });
  a.t.send(B, numbered(1));
  b.t.send(A, numbered(1));
  w.runFor(100);
  assert.deepEqual(numbers(a.inbox), [1], 'the other direction is not degraded');
  assert.deepEqual(numbers(b.inbox), []);
  w.runFor(600);
  assert.deepEqual(numbers(b.inbox), [1]);
  w.degrade([A], [B], { lossRate: 1 });
  for (let i = 2; i < 12; i++) assert.equal(a.t.send(B, numbered(i)), true);
  w.runFor(100);
  assert.deepEqual(numbers(b.inbox), [1]);
  w.restore();
  a.t.send(B, numbered(12));
  w.runFor(20);
  assert.deepEqual(numbers(b.inbox), [1, 12]);
  assert.throws(() => w.degrade([A], [B], { lossRate: 2 }), /lossRate/);
});
