// The queues of this member. Queues are created on first offer or waiting poll and configured once
// through resolveConfig(name before `@`). Waiting polls hold no timers: the shell owns the timer
// and calls cancelWaiter when it fires or the client goes away; an offer hands its item to the
// first live waiter. The number of waiting polls on the member is capped by waitersMax.
// Invariant: `waiting.count` equals the sum of the queues' waiter counts (the stores keep it).
import type { QueueConfig } from '../config/types.js';
import { assert } from '../util/assert.js';
import { GridError } from '../util/errors.js';
import { type PollWaiter, type QueueItem, QueueStore, type WaiterTally, queueConfigName } from './queue-store.js';

export { queuePartitionKey, queueConfigName } from './queue-store.js';
export type { PollWaiter, QueueItem } from './queue-store.js';

export interface QueueServiceOptions {
  readonly resolveConfig: (name: string) => QueueConfig;
  /** Waiting polls allowed on this member at once (grid.queue.waiters.max). */
  readonly waitersMax: number;
}

export class QueueService {
  private readonly resolveConfig: (name: string) => QueueConfig;
  private readonly waitersMax: number;
  private readonly queues = new Map<string, QueueStore>();
  private readonly waiting: WaiterTally = { count: 0 };

  constructor(options: QueueServiceOptions) {
    assert(Number.isInteger(options.waitersMax) && options.waitersMax >= 0, 'waitersMax must be a non-negative integer');
    this.resolveConfig = options.resolveConfig;
    this.waitersMax = options.waitersMax;
  }

  /** false = full. If polls are waiting, the item goes to the first live one instead of the queue. */
  offer(name: string, value: Uint8Array, contentType: string | null): boolean {
    return this.queueFor(name).offer(value, contentType);
  }

  /** Offer that reports the stored item, 'delivered' (to a waiting poll) or 'full'. */
  offerItem(name: string, value: Uint8Array, contentType: string | null): QueueItem | 'delivered' | 'full' {
    return this.queueFor(name).offerItem(value, contentType);
  }

  /** Backup side: store an item with the owner's id. */
  storeReplica(name: string, item: QueueItem): void {
    this.queueFor(name).storeReplica(item);
  }

  /** Backup side: remove the item the owner's poll took. */
  /** Whether the queue holds an item with this id and these bytes (split-brain merge). */
  hasItem(name: string, id: number, value: Uint8Array): boolean {
    const q = this.queues.get(name);
    if (q === undefined || id < 0) return false;
    return q.itemsInOrder().some((i) => i.id === id && Buffer.compare(i.value, value) === 0);
  }

  /** The stored item with this id in the queue, or null. */
  itemWithId(name: string, id: number): QueueItem | null {
    return this.queues.get(name)?.itemWithId(id) ?? null;
  }

  removeReplica(name: string, id: number): void {
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    queue.removeReplica(id);
    this.dropIfIdle(name, queue);
  }

  /** Snapshot of one queue: its items in order and its next item id (null when it holds nothing). */
  exportQueue(name: string): { items: QueueItem[]; nextItemId: number } | null {
    const queue = this.queues.get(name);
    if (queue === undefined) return null;
    return { items: queue.itemsInOrder(), nextItemId: queue.nextId };
  }

  /** Replaces one queue's items from a snapshot (waiting polls keep waiting and are served). */
  restoreQueue(name: string, items: readonly QueueItem[], nextItemId: number): void {
    const queue = this.queueFor(name);
    queue.restore(items, nextItemId);
    this.dropIfIdle(name, queue);
  }

  /** Drops a queue's items (its partition moved away); waiting polls stay for the caller to answer. */
  dropItems(name: string): void {
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    queue.clear();
    this.dropIfIdle(name, queue);
  }

  /** Removes and returns the waiting polls of one queue. */
  takeWaiters(name: string): PollWaiter[] {
    const queue = this.queues.get(name);
    if (queue === undefined) return [];
    const waiters = queue.drainWaiters();
    this.dropIfIdle(name, queue);
    return waiters;
  }

  /** The head item, left in place (null: empty or no such queue). */
  peek(name: string): QueueItem | null {
    return this.queues.get(name)?.peek() ?? null;
  }

  poll(name: string): QueueItem | null {
    const queue = this.queues.get(name);
    if (queue === undefined) return null;
    const item = queue.poll();
    this.dropIfIdle(name, queue);
    return item;
  }

  /**
   * Returns the head item now, or registers the waiter and returns null. Throws
   * ERR_DATA_QUEUE_FULL (503, retry after 1 s) when waitersMax polls already wait on this member.
   */
  pollOrWait(name: string, waiter: PollWaiter): QueueItem | null {
    const queue = this.queueFor(name);
    const item = queue.poll();
    if (item !== null) {
      this.dropIfIdle(name, queue);
      return item;
    }
    if (this.waiting.count >= this.waitersMax) {
      this.dropIfIdle(name, queue);
      throw new GridError('ERR_DATA_QUEUE_FULL', 'too many waiting polls', { retryAfterSeconds: 1 });
    }
    queue.addWaiter(waiter);
    return null;
  }

  /** Stops a waiting poll (timeout, client gone); false when it was not waiting (already served). */
  cancelWaiter(name: string, waiter: PollWaiter): boolean {
    const queue = this.queues.get(name);
    if (queue === undefined || !queue.removeWaiter(waiter)) return false;
    this.dropIfIdle(name, queue);
    return true;
  }

  size(name: string): number {
    return this.queues.get(name)?.size ?? 0;
  }

  waitingPolls(): number {
    return this.waiting.count;
  }

  /** For graceful shutdown: removes every waiting poll and returns them, so the shell answers 204. */
  cancelAllWaiters(): PollWaiter[] {
    const waiters: PollWaiter[] = [];
    for (const [name, queue] of this.queues) {
      for (const waiter of queue.drainWaiters()) waiters.push(waiter);
      this.dropIfIdle(name, queue);
    }
    assert(this.waiting.count === 0, 'every waiter was counted');
    return waiters;
  }

  /** Items and waiting polls of every queue held here. */
  queueSizes(): { name: string; size: number; waitingPolls: number }[] {
    const out: { name: string; size: number; waitingPolls: number }[] = [];
    for (const [name, queue] of this.queues) out.push({ name, size: queue.size, waitingPolls: queue.waiterCount });
    return out;
  }

  queueNames(): string[] {
    return [...this.queues.keys()];
  }

  /** Removes every item (waiting polls keep waiting); returns how many there were. */
  clear(name: string): number {
    const queue = this.queues.get(name);
    if (queue === undefined) return 0;
    const removed = queue.clear();
    this.dropIfIdle(name, queue);
    return removed;
  }

  /**
   * An empty queue nobody waits on holds no state worth keeping, so it is dropped: polling random
   * names cannot grow memory. (This is why `empty-queue-ttl` has no further effect in this version.)
   */
  private dropIfIdle(name: string, queue: QueueStore): void {
    if (queue.size === 0 && queue.waiterCount === 0) this.queues.delete(name);
  }

  private queueFor(name: string): QueueStore {
    let queue = this.queues.get(name);
    if (queue === undefined) {
      queue = new QueueStore(name, this.resolveConfig(queueConfigName(name)), this.waiting);
      this.queues.set(name, queue);
    }
    return queue;
  }
}
