// Queue items handed back by a split brain's smaller side, remembered on the owner for a while so
// that the same item handed back twice is stored once (cluster.md, "Handing data back").
//
// A side that merges hands back every replica its members held: the queue's owner there and its
// backup both send the same items (same id on that side, same bytes). The first copy is stored
// under a new id (ids are per queue and the larger side has its own), so the second copy cannot be
// recognised by id in the queue any more, and it may even have been polled already. This log maps
// (queue, id on the merging side, bytes) to the id the item got here, for `ttlMs` after it was
// stored, at most `entriesMax` entries over all queues (the oldest go first).
//
// Two items of one queue with the same id and the same bytes are the same item, except across a
// partition that restarted empty (its ids start again): an item equal in id and bytes to one
// merged in the last `ttlMs` is then taken for a copy of it. That can only drop a copy of an item
// held twice by the smaller side; it is the price of at-most-once delivery of what one side holds.
import { murmurHash3x86 } from '../partition/murmur3.js';

export const MERGED_ITEMS_TTL_MS = 10 * 60_000;
export const MERGED_ITEMS_MAX = 100_000;

interface Remembered {
  readonly newId: number;
  readonly expiresMs: number;
}

export class MergedItemLog {
  /** Insertion order is expiry order (one ttl for every entry), so the oldest is always first. */
  private readonly entries = new Map<string, Remembered>();
  /**
   * Per queue, how many times its copy here was dropped: part of every key, so what was remembered
   * of a dropped copy matches nothing (it ages out with the rest). The ids it remembered belong to
   * the data that went with the drop: the queue here starts its ids again, and a later hand-back of
   * a new item under a reused id (the same member handing its own one-member cluster's queue back
   * again, seed 212121 with --overlap) must not be taken for one already stored.
   */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly ttlMs: number = MERGED_ITEMS_TTL_MS,
    private readonly entriesMax: number = MERGED_ITEMS_MAX,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The id an item with this merging-side id and these bytes was stored under here, or null. */
  storedAs(queue: string, id: number, value: Uint8Array, nowMs: number): number | null {
    this.expire(nowMs);
    return this.entries.get(this.key(queue, id, value))?.newId ?? null;
  }

  /** The item with merging-side `id` and `value` was stored here as `newId` (or handed to a waiting poll: -1). */
  remember(queue: string, id: number, value: Uint8Array, newId: number, nowMs: number): void {
    this.expire(nowMs);
    const key = this.key(queue, id, value);
    this.entries.delete(key);
    this.entries.set(key, { newId, expiresMs: nowMs + this.ttlMs });
    while (this.entries.size > this.entriesMax) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  /** The queue's copy here was dropped (or replaced): forget what was handed back into it. */
  forgetQueue(queue: string): void {
    if (this.entries.size === 0) return;
    this.generations.set(queue, (this.generations.get(queue) ?? 0) + 1);
  }

  private key(queue: string, id: number, value: Uint8Array): string {
    return logKey(queue, this.generations.get(queue) ?? 0, id, value);
  }

  private expire(nowMs: number): void {
    for (const [key, r] of this.entries) {
      if (r.expiresMs > nowMs) return;
      this.entries.delete(key);
    }
  }
}

function logKey(queue: string, generation: number, id: number, value: Uint8Array): string {
  return `${queue}\u0000${generation}\u0000${id}\u0000${value.length}\u0000${murmurHash3x86(value, 0x4d455247)}`;
}
