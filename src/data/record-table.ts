// The records of one map in one partition: an open-addressing hash index (linear probing over an
// Int32Array of record index + 1, 0 = empty slot) over record columns, with key+value bytes in a slab.
// A partition can therefore be exported, cleared or dropped as a unit, and holds no JS object per
// record.
// Invariants: every live record sits in exactly one index slot, reachable from hash & mask without
// crossing an empty slot (deletion shifts followers back instead of leaving tombstones); the index
// stays at most 3/4 full; `count` equals the number of live records. Record indices are stable
// until `maintain()` rebuilds the table, which callers only run when they hold no record index.
import type { MapRecordView } from './map-service.js';
import type { ContentTypes } from './content-types.js';
import type { Random } from '../util/clock.js';
import { assert } from '../util/assert.js';
import { FREE_RECORD, RECORD_CAPACITY_MIN, RecordColumns } from './record-columns.js';
import { Slab, isDedicatedLength } from './slab.js';

const INDEX_SLOTS_MIN = 16;
/** A table this large or larger is rebuilt smaller when fewer than a quarter of its records are live. */
const SHRINK_CAPACITY_MIN = 64;
const RANDOM_PROBES = 4;

/** Metadata carried across a migration or a backup copy, so a record keeps its history. */
export interface RecordMetadata {
  readonly creationTimeMs: number;
  readonly updateTimeMs: number;
  readonly lastAccessTimeMs: number;
  readonly version: number;
  readonly hits: number;
}

export class RecordTable {
  count = 0;
  /** Bumped by every structural change, so iterators can detect mutation under them. */
  modCount = 0;
  private slots: Int32Array;
  private cols: RecordColumns;
  private slab: Slab;

  constructor(private readonly types: ContentTypes) {
    this.slots = new Int32Array(INDEX_SLOTS_MIN);
    this.cols = new RecordColumns(RECORD_CAPACITY_MIN);
    this.slab = new Slab();
  }

  get highWater(): number {
    return this.cols.highWater;
  }

  isLive(index: number): boolean {
    return this.cols.isLive(index);
  }

  /** The record index holding `key`, or -1. */
  find(key: Uint8Array, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    const hashes = this.cols.hash;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const index = slots[s]! - 1;
      if (index < 0) return -1;
      if (hashes[index] === hash && this.keyEquals(index, key)) return index;
    }
  }

  /** Adds a record for a key that is not in the table; returns its index. */
  insert(key: Uint8Array, hash: number, value: Uint8Array, contentType: string | null, nowMs: number): number {
    if ((this.count + 1) * 4 > this.slots.length * 3) this.slots = buildIndex(this.cols, this.slots.length * 2);
    const index = this.cols.allocate();
    const cols = this.cols;
    cols.hash[index] = hash;
    cols.contentType[index] = this.types.acquire(contentType);
    cols.version[index] = 0;
    cols.hits[index] = 0;
    cols.creationTimeMs[index] = nowMs;
    cols.updateTimeMs[index] = nowMs;
    cols.lastAccessTimeMs[index] = nowMs;
    this.writeBytes(index, key, value);
    insertSlot(this.slots, hash, index);
    this.count++;
    this.modCount++;
    return index;
  }

  /** Replaces the value of a live record: new bytes elsewhere, version + 1, access and update now. */
  overwrite(index: number, key: Uint8Array, value: Uint8Array, contentType: string | null, nowMs: number): void {
    const cols = this.cols;
    const typeId = this.types.acquire(contentType);
    this.types.release(cols.contentType[index]!);
    cols.contentType[index] = typeId;
    this.slab.release(cols.chunk[index]!, cols.keyBytes[index]! + cols.valueBytes[index]!);
    this.writeBytes(index, key, value);
    cols.version[index]!++;
    cols.updateTimeMs[index] = nowMs;
    cols.lastAccessTimeMs[index] = nowMs;
    this.modCount++;
  }

  /** Sets the history of a record (after insert or overwrite) from a migration or backup copy. */
  restoreMetadata(index: number, metadata: RecordMetadata): void {
    const cols = this.cols;
    cols.creationTimeMs[index] = metadata.creationTimeMs;
    cols.updateTimeMs[index] = metadata.updateTimeMs;
    cols.lastAccessTimeMs[index] = metadata.lastAccessTimeMs;
    cols.version[index] = metadata.version;
    cols.hits[index] = Math.min(metadata.hits, 0xffffffff);
  }

  delete(index: number): void {
    const cols = this.cols;
    assert(cols.isLive(index), 'record is not live');
    const slots = this.slots;
    const mask = slots.length - 1;
    let s = cols.hash[index]! & mask;
    while (slots[s] !== index + 1) {
      assert(slots[s] !== 0, 'a live record is missing from the index');
      s = (s + 1) & mask;
    }
    removeSlot(slots, cols.hash, s);
    this.types.release(cols.contentType[index]!);
    this.slab.release(cols.chunk[index]!, cols.keyBytes[index]! + cols.valueBytes[index]!);
    cols.free(index);
    this.count--;
    this.modCount++;
  }

  /** A read: the record was accessed now and has one more hit (saturating). */
  touch(index: number, nowMs: number): void {
    const cols = this.cols;
    cols.lastAccessTimeMs[index] = nowMs;
    const hits = cols.hits[index]!;
    if (hits !== 0xffffffff) cols.hits[index] = hits + 1;
  }

  updateTimeMs(index: number): number {
    return this.cols.updateTimeMs[index]!;
  }

  lastAccessTimeMs(index: number): number {
    return this.cols.lastAccessTimeMs[index]!;
  }

  hits(index: number): number {
    return this.cols.hits[index]!;
  }

  /** A snapshot of the record whose bytes stay valid whatever happens to the table later. */
  view(index: number): MapRecordView {
    const cols = this.cols;
    const start = cols.offset[index]! + cols.keyBytes[index]!;
    return {
      value: this.slab.chunk(cols.chunk[index]!).subarray(start, start + cols.valueBytes[index]!),
      contentType: this.types.name(cols.contentType[index]!),
      creationTimeMs: cols.creationTimeMs[index]!,
      updateTimeMs: cols.updateTimeMs[index]!,
      lastAccessTimeMs: cols.lastAccessTimeMs[index]!,
      version: cols.version[index]!,
      hits: cols.hits[index]!,
    };
  }

  /** The key bytes of a record (a read-only view, valid like a value view). */
  key(index: number): Buffer {
    const cols = this.cols;
    const start = cols.offset[index]!;
    return this.slab.chunk(cols.chunk[index]!).subarray(start, start + cols.keyBytes[index]!);
  }

  /** A random live record other than `exclude`, or -1 when there is none. */
  randomLiveIndex(random: Random, exclude: number): number {
    const highWater = this.cols.highWater;
    if (this.count === 0 || highWater === 0) return -1;
    for (let probe = 0; probe < RANDOM_PROBES; probe++) {
      const index = random.nextInt(highWater);
      if (index !== exclude && this.cols.chunk[index] !== FREE_RECORD) return index;
    }
    const start = random.nextInt(highWater);
    for (let step = 0; step < highWater; step++) {
      const index = (start + step) % highWater;
      if (index !== exclude && this.cols.chunk[index] !== FREE_RECORD) return index;
    }
    return -1;
  }

  /** Releases every record's content type; the caller then drops the table. Returns the count. */
  releaseAll(): number {
    const cols = this.cols;
    for (let index = 0; index < cols.highWater; index++) {
      if (cols.chunk[index] !== FREE_RECORD) this.types.release(cols.contentType[index]!);
    }
    const count = this.count;
    this.count = 0;
    this.modCount++;
    return count;
  }

  /**
   * Reclaims space at a safe point (no record index held by the caller): when more than half the
   * slab is garbage, or fewer than a quarter of the record slots are live, every live record is
   * copied into fresh columns, a fresh index and a NEW slab. Old chunks are never reused, so views
   * handed out before stay valid. Record indices change.
   */
  maintain(): void {
    const shrink = this.cols.capacity >= SHRINK_CAPACITY_MIN && this.count * 4 < this.cols.capacity;
    if (shrink || this.slab.shouldCompact()) this.rebuild();
  }

  private rebuild(): void {
    const old = this.cols;
    const oldSlab = this.slab;
    const cols = new RecordColumns(Math.ceil(this.count * 1.25));
    const slab = new Slab(oldSlab.liveSharedBytes);
    const slots = new Int32Array(indexSlotsFor(this.count));
    for (let i = 0; i < old.highWater; i++) {
      if (old.chunk[i] === FREE_RECORD) continue;
      const j = cols.allocate();
      const bytes = old.keyBytes[i]! + old.valueBytes[i]!;
      const source = oldSlab.chunk(old.chunk[i]!);
      const start = old.offset[i]!;
      if (isDedicatedLength(bytes)) {
        assert(start === 0 && source.length === bytes, 'a dedicated chunk holds exactly one record');
        slab.adopt(source);
      } else {
        source.copy(slab.allocate(bytes), slab.lastOffset, start, start + bytes);
      }
      cols.chunk[j] = slab.lastChunkId;
      cols.offset[j] = slab.lastOffset;
      cols.keyBytes[j] = old.keyBytes[i]!;
      cols.valueBytes[j] = old.valueBytes[i]!;
      cols.hash[j] = old.hash[i]!;
      cols.contentType[j] = old.contentType[i]!;
      cols.hits[j] = old.hits[i]!;
      cols.version[j] = old.version[i]!;
      cols.creationTimeMs[j] = old.creationTimeMs[i]!;
      cols.updateTimeMs[j] = old.updateTimeMs[i]!;
      cols.lastAccessTimeMs[j] = old.lastAccessTimeMs[i]!;
      insertSlot(slots, cols.hash[j]!, j);
    }
    assert(cols.highWater === this.count, 'rebuild kept every live record');
    this.cols = cols;
    this.slab = slab;
    this.slots = slots;
    this.modCount++;
  }

  private writeBytes(index: number, key: Uint8Array, value: Uint8Array): void {
    const keyBytes = key.length;
    const chunk = this.slab.allocate(keyBytes + value.length);
    const offset = this.slab.lastOffset;
    copyInto(chunk, key, offset);
    copyInto(chunk, value, offset + keyBytes);
    const cols = this.cols;
    cols.chunk[index] = this.slab.lastChunkId;
    cols.offset[index] = offset;
    cols.keyBytes[index] = keyBytes;
    cols.valueBytes[index] = value.length;
  }

  private keyEquals(index: number, key: Uint8Array): boolean {
    const cols = this.cols;
    const length = key.length;
    if (cols.keyBytes[index] !== length) return false;
    const chunk = this.slab.chunk(cols.chunk[index]!);
    const offset = cols.offset[index]!;
    for (let k = 0; k < length; k++) if (chunk[offset + k] !== key[k]) return false;
    return true;
  }
}

/** Small copies in a loop beat the native call overhead of `set`. */
function copyInto(target: Uint8Array, source: Uint8Array, offset: number): void {
  const length = source.length;
  if (length > 32) {
    target.set(source, offset);
    return;
  }
  for (let k = 0; k < length; k++) target[offset + k] = source[k]!;
}

function indexSlotsFor(count: number): number {
  let slots = INDEX_SLOTS_MIN;
  while (count * 4 > slots * 3) slots *= 2;
  return slots;
}

function buildIndex(cols: RecordColumns, slotCount: number): Int32Array {
  const slots = new Int32Array(slotCount);
  for (let index = 0; index < cols.highWater; index++) {
    if (cols.chunk[index] !== FREE_RECORD) insertSlot(slots, cols.hash[index]!, index);
  }
  return slots;
}

function insertSlot(slots: Int32Array, hash: number, index: number): void {
  const mask = slots.length - 1;
  let s = hash & mask;
  while (slots[s] !== 0) s = (s + 1) & mask;
  slots[s] = index + 1;
}

/**
 * Backward-shift deletion: empties slot `hole`, then moves each following entry of the probe run
 * back into the hole unless its home slot lies cyclically in (hole, current], so every entry stays
 * reachable from its home without tombstones.
 */
function removeSlot(slots: Int32Array, hashes: Int32Array, hole: number): void {
  const mask = slots.length - 1;
  for (let s = (hole + 1) & mask; slots[s] !== 0; s = (s + 1) & mask) {
    const home = hashes[slots[s]! - 1]! & mask;
    const stays = hole <= s ? home > hole && home <= s : home > hole || home <= s;
    if (!stays) {
      slots[hole] = slots[s]!;
      hole = s;
    }
  }
  slots[hole] = 0;
}
