// One queue: its items in FIFO order, its item-id counter and its waiting polls. A queue lives in
// one partition (the partition of queuePartitionKey(name)); `name@key` partitions by `key` and takes
// its configuration from `name`, like the reference.
// Invariants: item ids increase by one per accepted offer and are never reused (a backup can mirror
// the owner by id); waiters exist only while the queue is empty (an offer hands its item to the
// first live waiter instead of storing it); an item is never dropped: if no waiter takes it, it is
// stored; with max-size > 0, at most max-size items are stored.
import type { QueueConfig } from '../config/types.js';
import { assert } from '../util/assert.js';
import { Fifo } from './fifo.js';
import { WaiterList } from './waiter-list.js';

export interface QueueItem {
  /** Per queue, increasing by one per accepted offer. */
  readonly id: number;
  readonly value: Buffer;
  readonly contentType: string | null;
}

export interface PollWaiter {
  /** Try to hand the item to the waiting client; return false if the client is gone (the item then goes to the next waiter or back to the head of the queue, never lost). */
  deliver(item: QueueItem): boolean;
}

/** The part of a queue name that chooses its partition: after the first `@`, else the whole name. */
export function queuePartitionKey(name: string): string {
  const at = name.indexOf('@');
  return at < 0 ? name : name.slice(at + 1);
}

/** The part of a queue name that chooses its configuration: before the first `@`, else the whole name. */
export function queueConfigName(name: string): string {
  const at = name.indexOf('@');
  return at < 0 ? name : name.slice(0, at);
}

/** Waiting polls across all queues of a member; every QueueStore keeps it exact. */
export interface WaiterTally {
  count: number;
}

export class QueueStore {
  private readonly items = new Fifo<QueueItem>();
  private readonly waiters = new WaiterList<PollWaiter>();
  private nextItemId = 1;

  constructor(
    readonly name: string,
    readonly config: QueueConfig,
    private readonly tally: WaiterTally,
  ) {}

  get size(): number {
    return this.items.size;
  }

  get waiterCount(): number {
    return this.waiters.size;
  }

  /** Adds an item (or hands it to the first live waiter); false when the queue is full. */
  offer(value: Uint8Array, contentType: string | null): boolean {
    return this.offerItem(value, contentType) !== 'full';
  }

  /**
   * Like offer, but says what happened: the stored item (a backup must store it too), 'delivered'
   * (a waiting poll took it at once; nothing to back up) or 'full'.
   */
  offerItem(value: Uint8Array, contentType: string | null): QueueItem | 'delivered' | 'full' {
    if (this.config.maxSize > 0 && this.items.size >= this.config.maxSize) return 'full';
    const item: QueueItem = { id: this.nextItemId++, value: Buffer.from(value), contentType };
    let delivered = false;
    try {
      delivered = this.handToWaiter(item);
    } finally {
      // Also when a waiter threw: the item is stored, never lost.
      if (!delivered) this.items.push(item);
    }
    return delivered ? 'delivered' : item;
  }

  /** Backup side: stores an item the owner stored, with the owner's id. */
  storeReplica(item: QueueItem): void {
    this.items.push(item);
    if (item.id >= this.nextItemId) this.nextItemId = item.id + 1;
  }

  /** Backup side: removes the item the owner's poll took (normally the head). */
  removeReplica(id: number): boolean {
    const head = this.items.shift();
    if (head === undefined) return false;
    if (head.id === id) return true;
    // Out of step (should not happen with in-order backups): rebuild without that id.
    const rest = [head, ...this.items];
    this.items.clear();
    let found = false;
    for (const item of rest) {
      if (item.id === id && !found) found = true;
      else this.items.push(item);
    }
    return found;
  }

  /** The stored item with this id, or null (ids rise from head to tail: a binary search). */
  itemWithId(id: number): QueueItem | null {
    let lo = 0;
    let hi = this.items.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const item = this.items.at(mid) as QueueItem;
      if (item.id === id) return item;
      if (item.id < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }

  /** The stored items in order, for a snapshot. */
  itemsInOrder(): QueueItem[] {
    return [...this.items];
  }

  get nextId(): number {
    return this.nextItemId;
  }

  /** Replaces the contents from a snapshot (waiters stay). */
  restore(items: readonly QueueItem[], nextItemId: number): void {
    this.items.clear();
    for (const item of items) this.items.push(item);
    // A loop, not Math.max(...items): a spread of a large queue would overflow the stack.
    let next = Math.max(nextItemId, 1);
    for (const item of items) if (item.id + 1 > next) next = item.id + 1;
    this.nextItemId = next;
  }

  poll(): QueueItem | null {
    return this.items.shift() ?? null;
  }

  /** The item a poll would take next, left in place. */
  peek(): QueueItem | null {
    return this.items.at(0) ?? null;
  }

  /** Registers a waiting poll; the queue must be empty (poll first). */
  addWaiter(waiter: PollWaiter): void {
    assert(this.items.size === 0, 'a poll waits only on an empty queue');
    assert(this.waiters.add(waiter), 'the same waiter is already waiting on this queue');
    this.tally.count++;
  }

  removeWaiter(waiter: PollWaiter): boolean {
    if (!this.waiters.remove(waiter)) return false;
    this.tally.count--;
    return true;
  }

  drainWaiters(): PollWaiter[] {
    const waiters = this.waiters.drain();
    this.tally.count -= waiters.length;
    return waiters;
  }

  clear(): number {
    return this.items.clear();
  }

  /** Offers the item to waiters in arrival order; a waiter whose client is gone is dropped. */
  private handToWaiter(item: QueueItem): boolean {
    for (let waiter = this.waiters.shift(); waiter !== null; waiter = this.waiters.shift()) {
      this.tally.count--;
      if (waiter.deliver(item)) return true;
    }
    return false;
  }
}
