// WAN event queues and the publisher's queue accounting: order, consume by cursor, backup prune,
// sync segments, and every queue-full behaviour (wan.md "Events and queues").
import assert from 'node:assert/strict';
import test from 'node:test';
import type { WanEventWire } from '../../src/cluster/messages.js';
import type { Message } from '../../src/cluster/messages.js';
import type { Transport } from '../../src/cluster/transport.js';
import type { WanBatchPublisherConfig } from '../../src/config/types.js';
import { EVENT_CLEAR, EVENT_PUT, EVENT_SYNC_PUT, PartitionEventQueue } from '../../src/wan/event-queue.js';
import { WanPublisher, type PublisherHost } from '../../src/wan/publisher.js';
import type { TimerHandle } from '../../src/util/clock.js';

function ev(version: number, kind = EVENT_PUT, key = `k${version}`): WanEventWire {
  return { partitionId: 0, version, kind, map: 'm', key: Buffer.from(key), value: Buffer.from(`v${version}`), contentType: null, creationTimeMs: 1, updateTimeMs: 1, lastAccessTimeMs: 1, entryVersion: 0, hits: 0, ttlMs: -1, maxIdleMs: -1, policy: 0, origin: 'a' };
}

test('a queue hands out its head in order and consume removes exactly what a batch carried', () => {
  const q = new PartitionEventQueue();
  for (let v = 1; v <= 5; v++) q.push(ev(v), 0);
  const first = q.take(3);
  assert.deepEqual(first.events.map((e) => e.version), [1, 2, 3]);
  q.push(ev(6), 0);
  assert.equal(q.consume(first.cursor).writes, 3);
  assert.deepEqual(q.take(10).events.map((e) => e.version), [4, 5, 6]);
  assert.equal(q.eventCount, 3);
});

test('a cursor taken before clearEvents never consumes events queued after it', () => {
  const q = new PartitionEventQueue();
  for (let v = 1; v <= 3; v++) q.push(ev(v), 0);
  const batch = q.take(3);
  assert.equal(q.clearEvents(), 3);
  q.push(ev(4), 0);
  assert.equal(q.consume(batch.cursor).writes, 0);
  assert.deepEqual(q.take(10).events.map((e) => e.version), [4]);
});

test('a backup prunes up to the acknowledged version and keeps later ones', () => {
  const q = new PartitionEventQueue();
  for (let v = 1; v <= 6; v++) q.push(ev(v), v);
  assert.equal(q.pruneTo(4), 4);
  assert.deepEqual(q.writeEvents().map((e) => e.version), [5, 6]);
  assert.equal(q.oldestQueuedAtMs(), 5);
});

test('sync segments keep their place among write events and do not count as events', () => {
  const q = new PartitionEventQueue();
  q.push(ev(1), 0);
  q.pushSync('s1', [ev(1, EVENT_SYNC_PUT, 'a'), ev(1, EVENT_SYNC_PUT, 'b'), ev(1, EVENT_SYNC_PUT, 'c')], 0);
  q.push(ev(2), 0);
  assert.equal(q.eventCount, 2);
  const b1 = q.take(2);
  assert.deepEqual(b1.events.map((e) => e.key.toString()), ['k1', 'a']);
  assert.deepEqual(q.consume(b1.cursor), { writes: 1, syncsDone: [] });
  const b2 = q.take(10);
  assert.deepEqual(b2.events.map((e) => e.key.toString()), ['b', 'c', 'k2']);
  assert.deepEqual(q.consume(b2.cursor), { writes: 1, syncsDone: ['s1'] });
  assert.ok(q.isEmpty);
});

test('a snapshot import replaces the write events and reports the syncs it dropped', () => {
  const q = new PartitionEventQueue();
  q.push(ev(1), 0);
  q.pushSync('s9', [ev(1, EVENT_SYNC_PUT, 'x')], 0);
  assert.deepEqual(q.replace([ev(7), ev(8)], 0), ['s9']);
  assert.deepEqual(q.writeEvents().map((e) => e.version), [7, 8]);
});

// ── publisher accounting ──────────────────────────────────────────────────────────────────────────

function publisher(over: Partial<WanBatchPublisherConfig>, owned = true): { p: WanPublisher; sent: Message[] } {
  const sent: Message[] = [];
  const config: WanBatchPublisherConfig = {
    clusterName: 'b',
    publisherId: 'b',
    targetEndpoints: ['127.0.0.1:5801'],
    batchSize: 500,
    batchMaxDelayMs: 1000,
    responseTimeoutMs: 60_000,
    queueCapacity: 3,
    queueFullBehavior: 'DISCARD_AFTER_MUTATION',
    acknowledgeType: 'ACK_ON_OPERATION_COMPLETE',
    initialPublisherState: 'PAUSED',
    consistencyCheckStrategy: 'NONE',
    ...over,
  };
  let id = 0;
  const host: PublisherHost = {
    partitionCount: 4,
    clusterName: 'a',
    clusterId: () => 'cid',
    isOwner: () => owned,
    onAcked: () => {},
    onSyncPartitionDone: () => {},
    nextCallId: () => ++id,
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    timers: { setTimeout: (): TimerHandle => ({ id: ++id }), clearTimeout: () => {} },
    log: { debug: () => {}, info: () => {}, warning: () => {}, severe: () => {} } as unknown as PublisherHost['log'],
  };
  const transport: Transport = { send: (_a, m) => (sent.push(m), true), disconnect: () => {}, connectionCount: () => 0 };
  return { p: new WanPublisher('to-b', config, host, transport), sent };
}

function fill(p: WanPublisher, n: number): number {
  let queued = 0;
  for (let i = 0; i < n; i++) {
    if (p.enqueue(i % 4, { ...ev(i + 1), partitionId: i % 4 }, true, p.primaryCount)) {
      p.primaryCount++;
      queued++;
    }
  }
  return queued;
}

test('DISCARD_AFTER_MUTATION: a full queue drops and counts, writes are never refused', () => {
  const { p } = publisher({ queueFullBehavior: 'DISCARD_AFTER_MUTATION' });
  assert.equal(fill(p, 5), 3);
  assert.equal(p.counters.dropped, 2);
  assert.equal(p.refusesWrites(p.primaryCount), false);
  assert.equal(p.primaryQueued(), 3);
});

test('THROW_EXCEPTION: a full queue refuses writes in every state but STOPPED', () => {
  const { p } = publisher({ queueFullBehavior: 'THROW_EXCEPTION' });
  fill(p, 3);
  assert.equal(p.refusesWrites(p.primaryCount), true, 'PAUSED');
  p.setState('REPLICATING');
  assert.equal(p.refusesWrites(p.primaryCount), true, 'REPLICATING');
  p.setState('STOPPED');
  assert.equal(p.refusesWrites(p.primaryCount), false, 'STOPPED queues nothing, so refuses nothing');
  assert.equal(p.enqueue(0, ev(99), true, p.primaryCount), false, 'STOPPED queues nothing');
});

test('THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE: refuses only while REPLICATING, otherwise drops', () => {
  const { p } = publisher({ queueFullBehavior: 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE' });
  fill(p, 3);
  assert.equal(p.refusesWrites(p.primaryCount), false, 'PAUSED: not active');
  assert.equal(fill(p, 1), 0);
  assert.equal(p.counters.dropped, 1);
  p.setState('REPLICATING');
  assert.equal(p.refusesWrites(p.primaryCount), true);
});

test('a clear event is queued even over capacity (a clear is never refused nor dropped)', () => {
  const { p } = publisher({ queueFullBehavior: 'DISCARD_AFTER_MUTATION' });
  fill(p, 3);
  assert.equal(p.enqueue(1, ev(50, EVENT_CLEAR, ''), true, p.primaryCount), true);
});

test('a backup queue takes what its owner queued, whatever its own count (the owner decides)', () => {
  const { p } = publisher({}, false);
  let kept = 0;
  for (let i = 0; i < 5; i++) if (p.enqueue(0, ev(i + 1), false, 0)) kept++;
  assert.equal(kept, 5);
  assert.equal(p.counters.dropped, 0);
  assert.equal(p.backupQueued(), 5);
  assert.equal(p.primaryQueued(), 0);
});

test('clearQueues drops what is queued on this member and counts it', () => {
  const { p } = publisher({});
  fill(p, 3);
  assert.equal(p.clearQueues(), 3);
  p.recount();
  assert.equal(p.primaryCount, 0);
  assert.equal(p.counters.cleared, 3);
});

test('a paused publisher sends nothing; resumed, it sends one batch per endpoint with each partition once', () => {
  const { p, sent } = publisher({ queueCapacity: 100, batchMaxDelayMs: 0 });
  fill(p, 8);
  p.pump();
  assert.equal(sent.length, 0);
  p.setState('REPLICATING');
  p.pump();
  assert.equal(sent.length, 1);
  const m = sent[0] as Extract<Message, { kind: 'wanBatch' }>;
  assert.equal(m.body.events.length, 8);
  // Within each partition, versions ascend (source order).
  const byPartition = new Map<number, number[]>();
  for (const e of m.body.events) byPartition.set(e.partitionId, [...(byPartition.get(e.partitionId) ?? []), e.version]);
  for (const versions of byPartition.values()) assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
  p.pump();
  assert.equal(sent.length, 1, 'no second batch while every partition has one in flight');
});
