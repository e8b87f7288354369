// One partition's WAN queue for one publisher on this member (wan.md "Events and queues"): the map
// writes of that partition in the order the partition applied them, waiting to reach the target,
// plus the sync segments of running syncs in their place among them.
//
// The same queue is the primary queue while this member owns the partition and a backup queue while
// it holds a backup replica: both are fed by the store's mutation stream at the same versions, the
// owner sends from its queue, and backups drop what the owner reports acknowledged (pruneTo).
//
// Invariants:
// - Items leave only from the head, in order: by an acknowledgement up to a cursor (consume), by a
//   backup prune up to a version (pruneTo), or all at once (clear). Every item has a sequence
//   number, increasing along the queue, so a cursor taken before a clear never consumes items that
//   arrived after it.
// - `eventCount` counts write events only; sync entries never count against queue capacity.
// - A sync segment's entries were taken from the partition at one version (a snapshot), and sit at
//   the point of the stream where that snapshot was taken.
import type { WanEventWire } from '../cluster/messages.js';

export const EVENT_PUT = 1;
export const EVENT_REMOVE = 2;
export const EVENT_CLEAR = 3;
export const EVENT_SYNC_PUT = 4;

export interface QueuedEvent {
  readonly type: 'event';
  readonly seq: number;
  /** Monotonic milliseconds when it was queued (for lag). */
  readonly queuedAtMs: number;
  readonly wire: WanEventWire;
}

export interface SyncSegment {
  readonly type: 'sync';
  readonly seq: number;
  readonly queuedAtMs: number;
  readonly syncId: string;
  /** Sync puts of the snapshot, in the order they are sent. */
  readonly entries: readonly WanEventWire[];
  /** Entries already acknowledged by the target. */
  done: number;
}

export type QueueItem = QueuedEvent | SyncSegment;

/** Where a batch ends in a queue: every item before `seq`, and `offset` entries of item `seq` if it is a segment. */
export interface QueueCursor {
  readonly seq: number;
  readonly offset: number;
}

export interface TakenEvents {
  readonly events: WanEventWire[];
  readonly cursor: QueueCursor;
  /** Write events among them (not sync entries). */
  readonly writes: number;
}

export class PartitionEventQueue {
  private items: QueueItem[] = [];
  private head = 0;
  private nextSeq = 1;
  /** Write events queued (sync segments excluded). */
  eventCount = 0;

  get isEmpty(): boolean {
    return this.head >= this.items.length;
  }

  /** Queued items (events and segments) in order, oldest first. */
  *all(): Generator<QueueItem> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as QueueItem;
  }

  oldestQueuedAtMs(): number | null {
    const first = this.items[this.head];
    return first === undefined ? null : first.queuedAtMs;
  }

  push(wire: WanEventWire, nowMs: number): void {
    this.items.push({ type: 'event', seq: this.nextSeq++, queuedAtMs: nowMs, wire });
    this.eventCount++;
  }

  pushSync(syncId: string, entries: readonly WanEventWire[], nowMs: number): void {
    this.items.push({ type: 'sync', seq: this.nextSeq++, queuedAtMs: nowMs, syncId, entries, done: 0 });
  }

  /** About how many items wait here: the write events, plus what is left of a sync segment at the head (O(1)). */
  pendingItems(): number {
    const first = this.items[this.head];
    return this.eventCount + (first !== undefined && first.type === 'sync' ? first.entries.length - first.done : 0);
  }

  /** Sync entries queued here and not yet acknowledged (every segment's remainder). */
  syncEntriesLeft(): number {
    let n = 0;
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as QueueItem;
      if (item.type === 'sync') n += item.entries.length - item.done;
    }
    return n;
  }

  /** Up to `max` events from the head (segments expanded), without removing them. */
  take(max: number): TakenEvents {
    const events: WanEventWire[] = [];
    let writes = 0;
    let cursor: QueueCursor = { seq: this.items[this.head]?.seq ?? this.nextSeq, offset: 0 };
    for (let i = this.head; i < this.items.length && events.length < max; i++) {
      const item = this.items[i] as QueueItem;
      if (item.type === 'event') {
        events.push(item.wire);
        writes++;
        cursor = { seq: item.seq + 1, offset: 0 };
        continue;
      }
      let k = item.done;
      while (k < item.entries.length && events.length < max) events.push(item.entries[k++] as WanEventWire);
      cursor = k >= item.entries.length ? { seq: item.seq + 1, offset: 0 } : { seq: item.seq, offset: k };
    }
    return { events, cursor, writes };
  }

  /**
   * Removes what a batch up to `cursor` delivered. Returns the write events removed and the syncs
   * whose segments were completed.
   */
  consume(cursor: QueueCursor): { writes: number; syncsDone: string[] } {
    let writes = 0;
    const syncsDone: string[] = [];
    while (this.head < this.items.length) {
      const item = this.items[this.head] as QueueItem;
      if (item.seq >= cursor.seq) {
        if (item.seq === cursor.seq && item.type === 'sync' && cursor.offset > item.done) item.done = cursor.offset;
        break;
      }
      if (item.type === 'event') writes++;
      else syncsDone.push(item.syncId);
      this.removeHead();
    }
    this.eventCount -= writes;
    this.compact();
    return { writes, syncsDone };
  }

  /** Backup side: drops write events up to partition version `version` (the owner's acknowledged point). */
  pruneTo(version: number): number {
    let n = 0;
    while (this.head < this.items.length) {
      const item = this.items[this.head] as QueueItem;
      if (item.type === 'event' && item.wire.version > version) break;
      if (item.type === 'event') n++;
      this.removeHead();
    }
    this.eventCount -= n;
    this.compact();
    return n;
  }

  /** Drops every write event (clearWanQueues); sync segments stay. Returns how many were dropped. */
  clearEvents(): number {
    const kept: QueueItem[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as QueueItem;
      if (item.type === 'sync') kept.push(item);
    }
    const n = this.eventCount;
    this.items = kept;
    this.head = 0;
    this.eventCount = 0;
    return n;
  }

  /** Drops everything; returns the ids of the syncs whose segments were dropped unfinished. */
  clearAll(): string[] {
    const syncs: string[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as QueueItem;
      if (item.type === 'sync') syncs.push(item.syncId);
    }
    this.items = [];
    this.head = 0;
    this.eventCount = 0;
    return syncs;
  }

  /** Drops the segments of one sync (it ended); returns whether there were any. */
  dropSync(syncId: string): boolean {
    const before = this.items.length - this.head;
    this.items = this.items.slice(this.head).filter((i) => i.type !== 'sync' || i.syncId !== syncId);
    this.head = 0;
    return this.items.length !== before;
  }

  /** Write events only, oldest first (what a migration or resync carries). */
  writeEvents(): WanEventWire[] {
    const out: WanEventWire[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as QueueItem;
      if (item.type === 'event') out.push(item.wire);
    }
    return out;
  }

  /** Replaces the write events (snapshot import); sync segments are dropped (their syncs fail here). */
  replace(events: readonly WanEventWire[], nowMs: number): string[] {
    const dropped = this.clearAll();
    for (const e of events) this.push(e, nowMs);
    return dropped;
  }

  private removeHead(): void {
    this.items[this.head] = undefined as unknown as QueueItem;
    this.head++;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
