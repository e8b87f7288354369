// Checks the queue store (src/data/queue-service.ts, queue-store.ts, fifo.ts, waiter-list.ts): FIFO
// order and item ids; max-size; waiting polls served first come first served; a dead waiter skipped
// without losing the item (and a throwing one); cancel; 10,000+ waiters added, cancelled and served
// within a time bound; the waitersMax cap; shutdown draining; and `name@key` partitioning and
// configuration. Waiters are plain objects recording what they were handed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { QueueConfig } from '../../src/config/types.js';
import { type PollWaiter, type QueueItem, QueueService, queueConfigName, queuePartitionKey } from '../../src/data/queue-service.js';
import { Fifo } from '../../src/data/fifo.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';

function queueConfig(name: string, maxSize = 0): QueueConfig {
  return { name, maxSize, backupCount: 1, asyncBackupCount: 0, emptyQueueTtlSeconds: -1, dataPersistence: { enabled: false, fsync: false }, mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 } };
}

function service(maxSize = 0, waitersMax = 100_000): QueueService {
  return new QueueService({ resolveConfig: (name) => queueConfig(name, maxSize), waitersMax });
}

class Waiter implements PollWaiter {
  readonly received: QueueItem[] = [];
  constructor(private alive = true) {}
  deliver(item: QueueItem): boolean {
    if (!this.alive) return false;
    this.received.push(item);
    return true;
  }
}

const text = (item: QueueItem | null): string | null => (item === null ? null : item.value.toString());

test('items come out first in, first out, with increasing ids, copied values and content types', () => {
  const queues = service();
  const input = Buffer.from('one');
  assert.equal(queues.offer('q', input, 'text/plain'), true);
  input.write('XXX');
  queues.offer('q', Buffer.from('two'), null);
  queues.offer('q', Buffer.from('three'), 'application/json');
  assert.equal(queues.size('q'), 3);
  const first = queues.poll('q')!;
  assert.deepEqual([text(first), first.contentType, first.id], ['one', 'text/plain', 1]);
  const second = queues.poll('q')!;
  assert.deepEqual([text(second), second.contentType, second.id], ['two', null, 2]);
  assert.equal(queues.poll('q')!.id, 3);
  assert.equal(queues.poll('q'), null);
  assert.equal(queues.poll('missing'), null);
  assert.equal(queues.size('missing'), 0);
  assert.deepEqual(queues.queueNames(), [], 'reads do not create queues, and an empty queue nobody waits on is dropped');
  queues.offer('q', new Uint8Array(0), null);
  assert.equal(queues.poll('q')!.value.length, 0, 'empty items are items');
});

test('max-size refuses offers while full; polling makes room', () => {
  const queues = service(2);
  assert.equal(queues.offer('q', Buffer.from('a'), null), true);
  assert.equal(queues.offer('q', Buffer.from('b'), null), true);
  assert.equal(queues.offer('q', Buffer.from('c'), null), false);
  assert.equal(queues.size('q'), 2);
  assert.equal(text(queues.poll('q')), 'a');
  assert.equal(queues.offer('q', Buffer.from('d'), null), true);
  assert.equal(queues.poll('q')!.id, 2);
  assert.equal(queues.poll('q')!.id, 3, 'a refused offer takes no id');
  assert.equal(service(0).offer('q', Buffer.alloc(1), null), true, 'max-size 0 is unbounded');
});

test('a large queue stays FIFO through growth and shrinking', () => {
  const queues = service();
  for (let i = 0; i < 50_000; i++) queues.offer('q', Buffer.from(String(i)), null);
  for (let i = 0; i < 25_000; i++) assert.equal(text(queues.poll('q')), String(i));
  for (let i = 50_000; i < 60_000; i++) queues.offer('q', Buffer.from(String(i)), null);
  for (let i = 25_000; i < 60_000; i++) assert.equal(text(queues.poll('q')), String(i));
  assert.equal(queues.size('q'), 0);
  const fifo = new Fifo<number>();
  for (let i = 0; i < 40; i++) fifo.push(i);
  for (let i = 0; i < 30; i++) fifo.shift();
  for (let i = 40; i < 45; i++) fifo.push(i);
  assert.deepEqual([...fifo], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44]);
});

test('waiting polls are served in arrival order, instead of storing the item', () => {
  const queues = service();
  const waiters = [new Waiter(), new Waiter(), new Waiter()];
  for (const w of waiters) assert.equal(queues.pollOrWait('q', w), null);
  assert.equal(queues.waitingPolls(), 3);
  queues.offer('q', Buffer.from('a'), null);
  queues.offer('q', Buffer.from('b'), null);
  assert.deepEqual(waiters.map((w) => w.received.map(text)), [['a'], ['b'], []]);
  assert.equal(queues.size('q'), 0, 'handed over, not stored');
  assert.equal(queues.waitingPolls(), 1);
  queues.offer('q', Buffer.from('c'), null);
  queues.offer('q', Buffer.from('d'), null);
  assert.deepEqual(waiters[2]!.received.map(text), ['c']);
  assert.equal(queues.size('q'), 1);
  assert.equal(text(queues.pollOrWait('q', new Waiter())), 'd', 'an item present is returned at once');
  assert.equal(queues.waitingPolls(), 0);
});

test('a waiter whose client is gone is skipped and the item is not lost', () => {
  const queues = service();
  const dead = new Waiter(false);
  const alive = new Waiter();
  queues.pollOrWait('q', dead);
  queues.pollOrWait('q', alive);
  queues.offer('q', Buffer.from('x'), null);
  assert.deepEqual(alive.received.map(text), ['x']);
  assert.equal(queues.waitingPolls(), 0);
  queues.pollOrWait('q', new Waiter(false));
  queues.pollOrWait('q', new Waiter(false));
  queues.offer('q', Buffer.from('y'), null);
  assert.equal(queues.waitingPolls(), 0);
  assert.equal(queues.size('q'), 1, 'nobody took it: it is stored');
  assert.equal(text(queues.poll('q')), 'y');
});

test('a waiter that throws does not lose the item', () => {
  const queues = service();
  queues.pollOrWait('q', { deliver: () => { throw new Error('boom'); } });
  assert.throws(() => queues.offer('q', Buffer.from('z'), null), /boom/);
  assert.equal(queues.waitingPolls(), 0);
  assert.equal(text(queues.poll('q')), 'z');
});

test('a cancelled waiter gets nothing; cancelling twice or elsewhere is harmless', () => {
  const queues = service();
  const a = new Waiter();
  const b = new Waiter();
  queues.pollOrWait('q', a);
  queues.pollOrWait('q', b);
  assert.equal(queues.cancelWaiter('q', a), true);
  assert.equal(queues.cancelWaiter('q', a), false);
  assert.equal(queues.cancelWaiter('other', b), false);
  queues.offer('q', Buffer.from('v'), null);
  assert.deepEqual([a.received.length, b.received.length], [0, 1]);
  assert.equal(queues.cancelWaiter('q', b), false, 'already served');
  assert.equal(queues.waitingPolls(), 0);
});

test('10,000 waiters per queue are cheap to add, cancel in any order and serve', () => {
  const queues = service();
  const random = new SeededRandom(5);
  const started = performance.now();
  for (let round = 0; round < 5; round++) {
    const waiters = Array.from({ length: 10_000 }, () => new Waiter());
    for (const w of waiters) queues.pollOrWait(`q${round}`, w);
    const order = waiters.map((w, i) => [random.next(), i] as const).sort((x, y) => x[0] - y[0]);
    const cancelled = new Set<number>();
    for (const [, i] of order.slice(0, 5_000)) {
      assert.equal(queues.cancelWaiter(`q${round}`, waiters[i]!), true);
      cancelled.add(i);
    }
    for (let n = 0; n < 5_000; n++) queues.offer(`q${round}`, Buffer.from(String(n)), null);
    const served = waiters.filter((w, i) => !cancelled.has(i));
    served.forEach((w, n) => assert.deepEqual(w.received.map(text), [String(n)], 'first come, first served'));
    assert.equal(queues.waitingPolls(), 0);
  }
  const elapsedMs = performance.now() - started;
  assert.ok(elapsedMs < 2_000, `took ${elapsedMs.toFixed(0)} ms`);
});

test('waitersMax caps waiting polls across queues with a retryable 503', () => {
  const queues = service(0, 3);
  queues.pollOrWait('a', new Waiter());
  queues.pollOrWait('b', new Waiter());
  const c = new Waiter();
  queues.pollOrWait('a', c);
  assert.throws(
    () => queues.pollOrWait('c', new Waiter()),
    (e: unknown) => e instanceof GridError && e.code === 'ERR_DATA_QUEUE_FULL' && e.status === 503 && e.retryAfterSeconds === 1,
  );
  queues.offer('c', Buffer.from('here'), null);
  assert.equal(text(queues.pollOrWait('c', new Waiter())), 'here', 'a poll that need not wait is not capped');
  queues.cancelWaiter('a', c);
  assert.equal(queues.pollOrWait('c', new Waiter()), null);
});

test('cancelAllWaiters removes and returns every waiter; clear removes items only', () => {
  const queues = service();
  const waiters = [new Waiter(), new Waiter(), new Waiter()];
  queues.pollOrWait('a', waiters[0]!);
  queues.pollOrWait('b', waiters[1]!);
  queues.pollOrWait('a', waiters[2]!);
  const drained = queues.cancelAllWaiters();
  assert.equal(drained.length, 3);
  assert.deepEqual(new Set(drained), new Set(waiters));
  assert.equal(queues.waitingPolls(), 0);
  queues.offer('a', Buffer.from('kept'), null);
  assert.equal(waiters[0]!.received.length, 0);
  queues.offer('a', Buffer.from('kept2'), null);
  assert.equal(queues.clear('a'), 2);
  assert.equal(queues.clear('missing'), 0);
  const w = new Waiter();
  queues.pollOrWait('a', w);
  assert.equal(queues.clear('a'), 0);
  queues.offer('a', Buffer.from('after'), null);
  assert.deepEqual(w.received.map(text), ['after'], 'clear left the waiter waiting');
});

test('name@key partitions by key and configures by name', () => {
  assert.equal(queuePartitionKey('orders@customer-7'), 'customer-7');
  assert.equal(queueConfigName('orders@customer-7'), 'orders');
  assert.equal(queuePartitionKey('plain'), 'plain');
  assert.equal(queueConfigName('plain'), 'plain');
  assert.equal(queuePartitionKey('a@b@c'), 'b@c');
  assert.equal(queueConfigName('a@'), 'a');
  assert.equal(queuePartitionKey('a@'), '');
  const resolved: string[] = [];
  const queues = new QueueService({
    resolveConfig: (name) => {
      resolved.push(name);
      return queueConfig(name, name === 'small' ? 1 : 0);
    },
    waitersMax: 10,
  });
  assert.equal(queues.offer('small@k1', Buffer.from('1'), null), true);
  assert.equal(queues.offer('small@k1', Buffer.from('2'), null), false, 'configured by "small"');
  assert.equal(queues.offer('small@k2', Buffer.from('3'), null), true, 'a different queue');
  assert.deepEqual(resolved, ['small', 'small']);
  assert.deepEqual(queues.queueNames().sort(), ['small@k1', 'small@k2']);
});

test('polling many names leaves nothing behind: idle empty queues are dropped', () => {
  const queues = service();
  const waiter = { deliver: () => true };
  for (let i = 0; i < 1000; i++) {
    assert.equal(queues.pollOrWait(`q${i}`, waiter), null);
    assert.equal(queues.cancelWaiter(`q${i}`, waiter), true);
    queues.poll(`p${i}`);
  }
  assert.deepEqual(queues.queueNames(), []);
  queues.offer('kept', Buffer.from('x'), null);
  assert.deepEqual(queues.queueNames(), ['kept'], 'a queue with items stays');
});

test('queueSizes reports items and waiting polls per queue (metrics)', () => {
  const q = service();
  q.offer('a', Buffer.from('1'), null);
  q.offer('a', Buffer.from('2'), null);
  const waiter: PollWaiter = { deliver: () => true };
  assert.equal(q.pollOrWait('w', waiter), null);
  assert.deepEqual(q.queueSizes(), [
    { name: 'a', size: 2, waitingPolls: 0 },
    { name: 'w', size: 0, waitingPolls: 1 },
  ]);
});
