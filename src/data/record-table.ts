// The records of one map in one partition: an open-addressing hash index (linear probing over an
// Int32Array of record index + 1, 0 = empty slot) over record pages, with key+value bytes in a slab.
// A partition can therefore be exported, cleared or dropped as a unit, and holds no JS object per
// record.
// Invariants: every live record sits in exactly one index slot, reachable from hash & mask without
// crossing an empty slot (deletion shifts followers back instead of leaving tombstones); the index
// stays at most 3/4 full; `count` equals the number of live records. Record indices are stable
// until `maintain()` rebuilds the table, which callers only run when they hold no record index.
import type { ContentTypes } from './content-types.js';
import type { Random } from '../util/clock.js';
import { assert } from '../util/assert.js';
import {
  F_ACCESSED,
  F_CREATED,
  F_UPDATED,
  F_VERSION,
  RecordPages,
  W_CONTENT_TYPE,
  W_HASH,
  W_HITS,
  W_KEY_BYTES,
  W_LOCATION,
  W_MAX_IDLE,
  W_TTL,
  W_VALUE_BYTES,
} from './record-pages.js';
import { Slab, isDedicatedLength, locationOffset } from './slab.js';
import { merkleEntryHash } from './merkle-tree.js';
import { type EntryExpiry, type ExpiryPolicy, entryPolicy, expiryOfWord, expiryWord, isExpired } from './expiry.js';

const INDEX_SLOTS_MIN = 16;
/** A table this large or larger is rebuilt smaller when fewer than a quarter of its records are live. */
const SHRINK_CAPACITY_MIN = 64;
const RANDOM_PROBES = 4;
const HITS_MAX = 0xffffffff;

/** Metadata carried across a migration or a backup copy, so a record keeps its history. */
/** A record as a read sees it (map-service.ts re-exports it). */
export interface MapRecordView {
  /** Read-only: never write into it (it shares memory with the store). */
  readonly value: Buffer;
  readonly contentType: string | null;
  readonly creationTimeMs: number;
  readonly updateTimeMs: number;
  readonly lastAccessTimeMs: number;
  /** 0 when created, + 1 per update. */
  readonly version: number;
  /** Reads (gets) since creation; a put does not count. */
  readonly hits: number;
  /** The record's own time-to-live and max-idle (expiry.ts EntryExpiry: -1 = the map's). */
  readonly ttlMs: number;
  readonly maxIdleMs: number;
}

export interface RecordMetadata {
  readonly creationTimeMs: number;
  readonly updateTimeMs: number;
  readonly lastAccessTimeMs: number;
  readonly version: number;
  readonly hits: number;
  /** The record's own expiry (absent: the map's). */
  readonly ttlMs?: number;
  readonly maxIdleMs?: number;
}

/** A record's value and content type, as a read answers them (read-only: `value` shares memory with the store). */
export class StoredRecord {
  constructor(
    readonly value: Buffer,
    readonly contentType: string | null,
  ) {}
}

export class RecordTable {
  count = 0;
  /** Bumped by every structural change, so iterators can detect mutation under them. */
  modCount = 0;
  private slots: Int32Array;
  private records: RecordPages;
  private slab: Slab;

  constructor(private readonly types: ContentTypes) {
    this.slots = new Int32Array(INDEX_SLOTS_MIN);
    this.records = new RecordPages(0);
    this.slab = new Slab();
  }

  get highWater(): number {
    return this.records.highWater;
  }

  /** Memory the table holds: its records' slots (64 bytes each), its index, and its slab. */
  get heldBytes(): number {
    return this.records.highWater * 64 + this.slots.byteLength + this.slab.heldBytes;
  }

  isLive(index: number): boolean {
    return this.records.isLive(index);
  }

  /** The record index holding `key`, or -1. */
  find(key: Uint8Array, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    const records = this.records;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const index = slots[s]! - 1;
      if (index < 0) return -1;
      if (records.hash(index) === hash && this.keyEquals(index, key)) return index;
    }
  }

  /** Adds a record for a key that is not in the table; returns its index. */
  insert(key: Uint8Array, hash: number, value: Uint8Array, contentType: string | null, nowMs: number): number {
    const location = this.storeBytes(key, value);
    if ((this.count + 1) * 4 > this.slots.length * 3) this.slots = buildIndex(this.records, this.slots.length * 2);
    const records = this.records;
    const index = records.allocate();
    records.setU32(index, W_HASH, hash);
    records.setU32(index, W_LOCATION, location);
    records.setU32(index, W_KEY_BYTES, key.length);
    records.setU32(index, W_VALUE_BYTES, value.length);
    records.setU32(index, W_CONTENT_TYPE, this.types.acquire(contentType));
    records.setU32(index, W_HITS, 0);
    records.setU32(index, W_TTL, 0);
    records.setU32(index, W_MAX_IDLE, 0);
    records.setF64(index, F_VERSION, 0);
    records.setF64(index, F_CREATED, nowMs);
    records.setF64(index, F_UPDATED, nowMs);
    records.setF64(index, F_ACCESSED, nowMs);
    insertSlot(this.slots, hash, index);
    this.count++;
    this.modCount++;
    return index;
  }

  /** Replaces the value of a live record: new bytes elsewhere, version + 1, access and update now. */
  overwrite(index: number, key: Uint8Array, value: Uint8Array, contentType: string | null, nowMs: number): void {
    const records = this.records;
    const location = this.storeBytes(key, value);
    this.releaseBytes(index);
    records.setU32(index, W_LOCATION, location);
    records.setU32(index, W_VALUE_BYTES, value.length);
    const typeId = this.types.acquire(contentType);
    this.types.release(records.getU32(index, W_CONTENT_TYPE));
    records.setU32(index, W_CONTENT_TYPE, typeId);
    records.setF64(index, F_VERSION, records.getF64(index, F_VERSION) + 1);
    records.setF64(index, F_UPDATED, nowMs);
    records.setF64(index, F_ACCESSED, nowMs);
    // A write that names no expiry gives the record the map's again.
    records.setU32(index, W_TTL, 0);
    records.setU32(index, W_MAX_IDLE, 0);
    this.modCount++;
  }

  /** Sets a record's own expiry (after insert or overwrite, which reset it to the map's). */
  setExpiry(index: number, expiry: EntryExpiry): void {
    this.records.setU32(index, W_TTL, expiryWord(expiry.ttlMs));
    this.records.setU32(index, W_MAX_IDLE, expiryWord(expiry.maxIdleMs));
  }

  /** Whether the record has an expiry of its own. */
  hasOwnExpiry(index: number): boolean {
    return this.records.getU32(index, W_TTL) !== 0 || this.records.getU32(index, W_MAX_IDLE) !== 0;
  }

  /** The policy that applies to the record: the map's (`map`), with the record's own settings over it. */
  policyOf(index: number, map: ExpiryPolicy): ExpiryPolicy {
    const records = this.records;
    const ttl = records.getU32(index, W_TTL);
    const idle = records.getU32(index, W_MAX_IDLE);
    return ttl === 0 && idle === 0 ? map : entryPolicy(map, expiryOfWord(ttl), expiryOfWord(idle));
  }

  /** Whether the record has expired at `nowMs` under the map's policy and its own settings. */
  isExpiredAt(index: number, map: ExpiryPolicy, nowMs: number): boolean {
    const records = this.records;
    return isExpired(this.policyOf(index, map), records.getF64(index, F_UPDATED), records.getF64(index, F_ACCESSED), nowMs);
  }

  /** Sets the history of a record (after insert or overwrite) from a migration or backup copy. */
  restoreMetadata(index: number, metadata: RecordMetadata): void {
    const records = this.records;
    records.setF64(index, F_CREATED, metadata.creationTimeMs);
    records.setF64(index, F_UPDATED, metadata.updateTimeMs);
    records.setF64(index, F_ACCESSED, metadata.lastAccessTimeMs);
    records.setF64(index, F_VERSION, metadata.version);
    records.setU32(index, W_HITS, Math.min(metadata.hits, HITS_MAX));
    records.setU32(index, W_TTL, metadata.ttlMs === undefined ? 0 : expiryWord(metadata.ttlMs));
    records.setU32(index, W_MAX_IDLE, metadata.maxIdleMs === undefined ? 0 : expiryWord(metadata.maxIdleMs));
  }

  delete(index: number): void {
    const records = this.records;
    assert(records.isLive(index), 'record is not live');
    const slots = this.slots;
    const mask = slots.length - 1;
    let s = records.hash(index) & mask;
    while (slots[s] !== index + 1) {
      assert(slots[s] !== 0, 'a live record is missing from the index');
      s = (s + 1) & mask;
    }
    removeSlot(slots, records, s);
    this.types.release(records.getU32(index, W_CONTENT_TYPE));
    this.releaseBytes(index);
    records.free(index);
    this.count--;
    this.modCount++;
  }

  /** A read: the record was accessed now and has one more hit (saturating). */
  touch(index: number, nowMs: number): void {
    const records = this.records;
    records.setF64(index, F_ACCESSED, nowMs);
    const hits = records.getU32(index, W_HITS);
    if (hits !== HITS_MAX) records.setU32(index, W_HITS, hits + 1);
  }

  updateTimeMs(index: number): number {
    return this.records.getF64(index, F_UPDATED);
  }

  lastAccessTimeMs(index: number): number {
    return this.records.getF64(index, F_ACCESSED);
  }

  hits(index: number): number {
    return this.records.getU32(index, W_HITS);
  }

  /** A snapshot of the record whose bytes stay valid whatever happens to the table later. */
  /** The value and content type of a record (a read's answer): what `view` gives, without the metadata. */
  stored(index: number): StoredRecord {
    const records = this.records;
    const location = records.getU32(index, W_LOCATION);
    const start = locationOffset(location) + records.getU32(index, W_KEY_BYTES);
    return new StoredRecord(this.slab.chunkAt(location).subarray(start, start + records.getU32(index, W_VALUE_BYTES)), this.types.name(records.getU32(index, W_CONTENT_TYPE)));
  }

  view(index: number): MapRecordView {
    const records = this.records;
    const location = records.getU32(index, W_LOCATION);
    const start = locationOffset(location) + records.getU32(index, W_KEY_BYTES);
    return {
      value: this.slab.chunkAt(location).subarray(start, start + records.getU32(index, W_VALUE_BYTES)),
      contentType: this.types.name(records.getU32(index, W_CONTENT_TYPE)),
      creationTimeMs: records.getF64(index, F_CREATED),
      updateTimeMs: records.getF64(index, F_UPDATED),
      lastAccessTimeMs: records.getF64(index, F_ACCESSED),
      version: records.getF64(index, F_VERSION),
      hits: records.getU32(index, W_HITS),
      ttlMs: expiryOfWord(records.getU32(index, W_TTL)),
      maxIdleMs: expiryOfWord(records.getU32(index, W_MAX_IDLE)),
    };
  }

  /** The hash the record was inserted with (the index hash, also the Merkle key hash), a signed int32. */
  keyHash(index: number): number {
    return this.records.hash(index);
  }

  /** The Merkle entry hash of a record (merkle-tree.ts), over its key and value bytes where they lie. */
  entryHash(index: number): number {
    const records = this.records;
    const location = records.getU32(index, W_LOCATION);
    const start = locationOffset(location);
    const end = start + records.getU32(index, W_KEY_BYTES) + records.getU32(index, W_VALUE_BYTES);
    return merkleEntryHash(records.hash(index), this.slab.chunkAt(location), start, end);
  }

  /** The key bytes of a record (a read-only view, valid like a value view). */
  key(index: number): Buffer {
    const location = this.records.getU32(index, W_LOCATION);
    const start = locationOffset(location);
    return this.slab.chunkAt(location).subarray(start, start + this.records.getU32(index, W_KEY_BYTES));
  }

  /** A random live record other than `exclude`, or -1 when there is none. */
  randomLiveIndex(random: Random, exclude: number): number {
    const highWater = this.records.highWater;
    if (this.count === 0 || highWater === 0) return -1;
    for (let probe = 0; probe < RANDOM_PROBES; probe++) {
      const index = random.nextInt(highWater);
      if (index !== exclude && this.records.isLive(index)) return index;
    }
    const start = random.nextInt(highWater);
    for (let step = 0; step < highWater; step++) {
      const index = (start + step) % highWater;
      if (index !== exclude && this.records.isLive(index)) return index;
    }
    return -1;
  }

  /** Releases every record's content type; the caller then drops the table. Returns the count. */
  releaseAll(): number {
    const records = this.records;
    for (let index = 0; index < records.highWater; index++) {
      if (records.isLive(index)) this.types.release(records.getU32(index, W_CONTENT_TYPE));
    }
    const count = this.count;
    this.count = 0;
    this.modCount++;
    return count;
  }

  /**
   * Reclaims space at a safe point (no record index held by the caller): when more than half the
   * slab is garbage, or fewer than a quarter of the record slots are live, every live record is
   * copied into fresh pages, a fresh index and a NEW slab. Old chunks are never reused, so views
   * handed out before stay valid. Record indices change.
   */
  maintain(): void {
    const shrink = this.records.capacity >= SHRINK_CAPACITY_MIN && this.count * 4 < this.records.capacity;
    if (shrink) this.rebuild();
    else if (this.slab.shouldCompact()) this.compactSlab();
  }

  /**
   * Moves the live records' bytes into a new slab, leaving the garbage behind; records and index
   * stay (an overwrite-heavy table compacts often: this is the cheap half of a rebuild).
   */
  private compactSlab(): void {
    const records = this.records;
    const oldSlab = this.slab;
    const slab = new Slab(oldSlab.liveSharedBytes);
    for (let i = 0; i < records.highWater; i++) {
      if (!records.isLive(i)) continue;
      records.setU32(i, W_LOCATION, moveBytes(records, i, oldSlab, slab));
    }
    this.slab = slab;
    this.modCount++;
  }

  private rebuild(): void {
    const old = this.records;
    const oldSlab = this.slab;
    const records = new RecordPages(this.count);
    const slab = new Slab(oldSlab.liveSharedBytes);
    const slots = new Int32Array(indexSlotsFor(this.count));
    for (let i = 0; i < old.highWater; i++) {
      if (!old.isLive(i)) continue;
      const j = records.allocate();
      const location = moveBytes(old, i, oldSlab, slab);
      for (let word = W_HASH; word <= W_MAX_IDLE; word++) records.setU32(j, word, old.getU32(i, word));
      for (let field = F_CREATED; field <= F_VERSION; field++) records.setF64(j, field, old.getF64(i, field));
      records.setU32(j, W_LOCATION, location);
      insertSlot(slots, records.hash(j), j);
    }
    assert(records.highWater === this.count, 'rebuild kept every live record');
    this.records = records;
    this.slab = slab;
    this.slots = slots;
    this.modCount++;
  }

  /** Copies key then value into the slab; returns their location. Changes nothing else. */
  private storeBytes(key: Uint8Array, value: Uint8Array): number {
    const chunk = this.slab.allocate(key.length + value.length);
    const offset = this.slab.lastOffset;
    copyInto(chunk, key, offset);
    copyInto(chunk, value, offset + key.length);
    return this.slab.lastLocation;
  }

  private releaseBytes(index: number): void {
    const records = this.records;
    const bytes = records.getU32(index, W_KEY_BYTES) + records.getU32(index, W_VALUE_BYTES);
    this.slab.release(records.getU32(index, W_LOCATION), bytes);
  }

  /** Whether the live record at `index` holds this key. */
  holdsKey(index: number, key: Uint8Array): boolean {
    return index >= 0 && index < this.records.highWater && this.isLive(index) && this.keyEquals(index, key);
  }

  private keyEquals(index: number, key: Uint8Array): boolean {
    const records = this.records;
    const length = key.length;
    if (records.getU32(index, W_KEY_BYTES) !== length) return false;
    const location = records.getU32(index, W_LOCATION);
    const chunk = this.slab.chunkAt(location);
    const offset = locationOffset(location);
    for (let k = 0; k < length; k++) if (chunk[offset + k] !== key[k]) return false;
    return true;
  }
}

/** Copies the key and value bytes of record `i` from `from` into `to` (a dedicated chunk moves as it is); returns their new location. */
function moveBytes(records: RecordPages, i: number, from: Slab, to: Slab): number {
  const bytes = records.getU32(i, W_KEY_BYTES) + records.getU32(i, W_VALUE_BYTES);
  const location = records.getU32(i, W_LOCATION);
  const source = from.chunkAt(location);
  const start = locationOffset(location);
  if (isDedicatedLength(bytes)) {
    assert(start === 0 && source.length === bytes, 'a dedicated chunk holds exactly one record');
    to.adopt(source);
  } else {
    source.copy(to.allocate(bytes), to.lastOffset, start, start + bytes);
  }
  return to.lastLocation;
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

function buildIndex(records: RecordPages, slotCount: number): Int32Array {
  const slots = new Int32Array(slotCount);
  for (let index = 0; index < records.highWater; index++) {
    if (records.isLive(index)) insertSlot(slots, records.hash(index), index);
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
function removeSlot(slots: Int32Array, records: RecordPages, hole: number): void {
  const mask = slots.length - 1;
  for (let s = (hole + 1) & mask; slots[s] !== 0; s = (s + 1) & mask) {
    const home = records.hash(slots[s]! - 1) & mask;
    const stays = hole <= s ? home > hole && home <= s : home > hole || home <= s;
    if (!stays) {
      slots[hole] = slots[s]!;
      hole = s;
    }
  }
  slots[hole] = 0;
}
