// Checks the single member's states and health without sockets, driving LocalMember directly on a
// fake clock: STARTING before it listens (not ready, not safe), ACTIVE after, PASSIVE refusing writes
// but not reads, SHUTTING_DOWN answering waiting polls with "no item", SHUT_DOWN last; and waiting
// polls served first come, first served, skipping clients that went away without losing the item;
// a member that has not joined its cluster yet is not ready and answers data calls 503 at once.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { LocalMember } from '../../src/member/local-member.js';
import { NO_RUNTIME_FIGURES } from '../../src/member/metrics-snapshot.js';
import type { ClientLiveness, StoredValue } from '../../src/member/member-api.js';
import { Logger } from '../../src/util/logger.js';
import { GridError } from '../../src/util/errors.js';

const BY = { user: 'admin', source: '10.0.0.9' };

function config(): Config {
  const r = loadConfig({ argv: ['--rest'], env: {}, cwd: '/', readFile: () => { throw new Error('no file'); }, fileExists: () => false, randomHex: () => 'abcd', version: '0.1.0' });
  assert.equal(r.kind, 'run');
  return (r as Extract<typeof r, { kind: 'run' }>).config;
}

function member(): { m: LocalMember; stops: string[] } {
  const stops: string[] = [];
  const m = new LocalMember(config(), {
    clock: { nowMs: () => 1_000_000, monotonicMs: () => 0 },
    logger: new Logger('OFF', 'text', { write: () => {} }),
    connections: () => ({ http: 2, member: 1 }),
    runtimeMetrics: () => NO_RUNTIME_FIGURES,
    requestStop: (reason) => stops.push(reason),
    seed: 7,
  });
  return { m, stops };
}

class Client implements ClientLiveness {
  gone = false;
  private callbacks: (() => void)[] = [];
  isGone(): boolean {
    return this.gone;
  }
  onGone(callback: () => void): () => void {
    this.callbacks.push(callback);
    return () => (this.callbacks = this.callbacks.filter((c) => c !== callback));
  }
  leave(): void {
    this.gone = true;
    for (const c of this.callbacks.slice()) c();
  }
  get subscriptions(): number {
    return this.callbacks.length;
  }
}

const text = (v: StoredValue | null): string | null => (v === null ? null : v.value.toString());

test('STARTING until listening, then ACTIVE and ready; counts come from the runtime', () => {
  const { m } = member();
  assert.deepEqual(m.health(), { nodeState: 'STARTING', clusterState: 'ACTIVE', clusterSafe: false, migrationQueueSize: 0, clusterSize: 1, ready: false });
  m.setAddress('127.0.0.1', 5701);
  m.markActive();
  assert.equal(m.health().nodeState, 'ACTIVE');
  assert.equal(m.health().ready, true);
  assert.equal(m.health().clusterSafe, true);
  const info = m.clusterInfo();
  assert.equal(info.connectionCount, 2);
  assert.equal(info.allConnectionCount, 3);
  assert.match(m.nodesText(), /^\[Member \[127\.0\.0\.1\]:5701 - [0-9a-f-]{36} this\]\nGrid 0\.1\.0\nNode\.js /);
});

test('metrics snapshot: a single member owns every entry and item; per map, per queue, waiting polls', () => {
  const { m } = member();
  m.setAddress('127.0.0.1', 5701);
  m.markActive();
  for (let i = 0; i < 7; i++) m.mapPut('m', `k${i}`, Buffer.from('v'), null);
  m.mapPut('n', 'k', Buffer.from('v'), null);
  m.queueOffer('q', Buffer.from('x'), null);
  void m.queuePoll('w', 30, new Client());
  const s = m.metricsSnapshot();
  assert.equal(s.member, '[127.0.0.1]:5701');
  assert.equal(s.nodeState, 'ACTIVE');
  assert.equal(s.flat.mapEntries, 8);
  assert.equal(s.flat.mapEntriesBackup, 0);
  assert.equal(s.flat.queueItems, 1);
  assert.equal(s.flat.waitingPolls, 1);
  assert.equal(s.flat.clusterSafe, 1);
  assert.equal(s.flat.httpConnections, 2);
  assert.deepEqual(s.maps, [{ name: 'm', owned: 7, backup: 0 }, { name: 'n', owned: 1, backup: 0 }]);
  assert.deepEqual(s.queues, [{ name: 'q', owned: 1, backup: 0, waitingPolls: 0 }, { name: 'w', owned: 0, backup: 0, waitingPolls: 1 }]);
  m.node.stop();
});

test('PASSIVE refuses writes and polls with 503, keeps reads', async () => {
  const { m } = member();
  m.markActive();
  m.mapPut('m', 'k', Buffer.from('v'), null);
  assert.equal(await m.changeClusterState('PASSIVE', BY), 'changed');
  assert.equal(m.health().nodeState, 'PASSIVE');
  assert.equal(await m.changeClusterState('PASSIVE', BY), 'unchanged');
  assert.throws(() => m.mapPut('m', 'k', Buffer.from('w'), null), (e: unknown) => e instanceof GridError && e.status === 503 && e.retryAfterSeconds !== null);
  assert.throws(() => m.queueOffer('q', Buffer.from('x'), null), GridError);
  assert.equal(text(m.mapGet('m', 'k') as StoredValue | null), 'v');
  assert.equal(m.queueSize('q'), 0);
  assert.equal(await m.changeClusterState('ACTIVE', BY), 'changed');
  assert.equal(m.health().nodeState, 'ACTIVE');
});

test('waiting polls: FIFO, a departed client takes nothing, no subscription left behind', async () => {
  const { m } = member();
  m.markActive();
  const a = new Client();
  const b = new Client();
  const c = new Client();
  const pa = m.queuePoll('q', 30, a);
  const pb = m.queuePoll('q', 30, b);
  const pc = m.queuePoll('q', 30, c);
  assert.ok(pa instanceof Promise && pb instanceof Promise && pc instanceof Promise);
  b.leave();
  assert.equal(await pb, null, 'the departed client is answered "no item"');
  m.queueOffer('q', Buffer.from('one'), 'text/plain');
  m.queueOffer('q', Buffer.from('two'), null);
  assert.equal(text(await pa), 'one');
  assert.equal(text(await pc), 'two');
  assert.equal(m.queueSize('q'), 0, 'no item went to the departed client');
  assert.equal(a.subscriptions + b.subscriptions + c.subscriptions, 0);
});

test('stopping answers waiting polls with no item and does not wait for new ones', async () => {
  const { m, stops } = member();
  m.markActive();
  const waiting = m.queuePoll('q', 300, new Client());
  m.beginShutdown();
  assert.equal(await waiting, null);
  assert.equal(m.health().nodeState, 'SHUTTING_DOWN');
  assert.equal(m.health().ready, false);
  assert.equal(m.queuePoll('q', 300, new Client()), null, 'a poll during the stop answers at once');
  m.markShutDown();
  assert.equal(m.health().nodeState, 'SHUT_DOWN');
  m.shutdownMember(BY);
  assert.deepEqual(stops, ["memberShutdown requested over REST by 'admin' from 10.0.0.9"]);
});

test('until it has joined a cluster: not ready, and every data call answers 503 "cluster not ready" at once', () => {
  const base = config();
  // A tcp-ip member list to join, no transport and timers that never fire: it stays unjoined.
  const c: Config = { ...base, network: { ...base.network, join: { tcpIp: { ...base.network.join.tcpIp, enabled: true, members: ['127.0.0.1:5702'] } } } };
  const m = new LocalMember(c, {
    clock: { nowMs: () => 1_000_000, monotonicMs: () => 0 },
    logger: new Logger('OFF', 'text', { write: () => {} }),
    connections: () => ({ http: 0, member: 0 }),
    runtimeMetrics: () => NO_RUNTIME_FIGURES,
    requestStop: () => {},
    seed: 7,
    timers: { setTimeout: () => ({ id: 0 }), clearTimeout: () => {} },
  });
  m.setAddress('127.0.0.1', 5701);
  m.markActive();
  assert.equal(m.health().nodeState, 'STARTING', 'not joined yet: STARTING, not ACTIVE');
  assert.equal(m.health().ready, false);
  assert.equal(m.health().clusterSafe, false);
  const notReady = (e: unknown): boolean => e instanceof GridError && e.status === 503 && e.message.startsWith('cluster not ready') && e.retryAfterSeconds === 1;
  assert.throws(() => m.mapGet('m', 'k'), notReady);
  assert.throws(() => m.mapPut('m', 'k', Buffer.from('v'), null), notReady);
  assert.throws(() => m.mapRemove('m', 'k'), notReady);
  assert.throws(() => m.mapClear('m'), notReady);
  assert.throws(() => m.queueOffer('q', Buffer.from('x'), null), notReady);
  assert.throws(() => m.queuePoll('q', 0, new Client()), notReady);
  assert.throws(() => m.queuePoll('q', 30, new Client()), notReady);
  assert.throws(() => m.queueSize('q'), notReady);
  assert.equal(m.clusterInfo().members.length, 1, 'it lists only itself');
});

test('credentials: the cluster name when security is off', () => {
  const { m } = member();
  assert.equal(m.authenticate({ user: 'dev', password: 'anything' }, 'x', '127.0.0.1'), true);
  assert.equal(m.authenticate({ user: 'Dev', password: '' }, 'x', '127.0.0.1'), false);
});
