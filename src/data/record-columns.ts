// Record metadata as columns (struct of arrays): record i is the i-th element of every typed array.
// This costs ~60 bytes per record and no JS object per record, which is what keeps a million
// entries small and the garbage collector idle.
// Invariants: a record index is live or on the free list, never both; a free record has
// chunk === FREE_RECORD and keeps the next free index in `offset`; indices below `highWater` have
// been used, so iteration scans [0, highWater). Capacity grows by 1.25x: every partition of a map
// fills at the same pace, so a coarser factor would make all of them overshoot together.
import { assert } from '../util/assert.js';

export const FREE_RECORD = 0xffffffff;
const NO_FREE = -1;
const GROWTH = 1.25;
export const RECORD_CAPACITY_MIN = 8;

export class RecordColumns {
  capacity: number;
  highWater = 0;
  private freeHead = NO_FREE;
  /** In-partition hash of the key (not the partition hash): locates the index slot. */
  hash: Int32Array;
  /** Slab chunk id, or FREE_RECORD. */
  chunk: Uint32Array;
  /** Byte offset of key then value in the chunk; for a free record, the next free index + 1 (0 = none). */
  offset: Uint32Array;
  keyBytes: Uint32Array;
  valueBytes: Uint32Array;
  contentType: Uint32Array;
  hits: Uint32Array;
  version: Float64Array;
  creationTimeMs: Float64Array;
  updateTimeMs: Float64Array;
  lastAccessTimeMs: Float64Array;

  constructor(capacity: number) {
    this.capacity = Math.max(RECORD_CAPACITY_MIN, capacity);
    const n = this.capacity;
    this.hash = new Int32Array(n);
    this.chunk = new Uint32Array(n);
    this.offset = new Uint32Array(n);
    this.keyBytes = new Uint32Array(n);
    this.valueBytes = new Uint32Array(n);
    this.contentType = new Uint32Array(n);
    this.hits = new Uint32Array(n);
    this.version = new Float64Array(n);
    this.creationTimeMs = new Float64Array(n);
    this.updateTimeMs = new Float64Array(n);
    this.lastAccessTimeMs = new Float64Array(n);
  }

  isLive(index: number): boolean {
    return index < this.highWater && this.chunk[index] !== FREE_RECORD;
  }

  /** A record index to fill: a freed one first, else the next unused one (growing if needed). */
  allocate(): number {
    if (this.freeHead !== NO_FREE) {
      const index = this.freeHead;
      this.freeHead = this.offset[index]! - 1;
      return index;
    }
    if (this.highWater === this.capacity) this.grow(Math.ceil(this.capacity * GROWTH));
    return this.highWater++;
  }

  free(index: number): void {
    assert(this.isLive(index), 'record is not live');
    this.chunk[index] = FREE_RECORD;
    this.offset[index] = this.freeHead + 1;
    this.freeHead = index;
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    this.hash = growArray(this.hash, capacity, Int32Array);
    this.chunk = growArray(this.chunk, capacity, Uint32Array);
    this.offset = growArray(this.offset, capacity, Uint32Array);
    this.keyBytes = growArray(this.keyBytes, capacity, Uint32Array);
    this.valueBytes = growArray(this.valueBytes, capacity, Uint32Array);
    this.contentType = growArray(this.contentType, capacity, Uint32Array);
    this.hits = growArray(this.hits, capacity, Uint32Array);
    this.version = growArray(this.version, capacity, Float64Array);
    this.creationTimeMs = growArray(this.creationTimeMs, capacity, Float64Array);
    this.updateTimeMs = growArray(this.updateTimeMs, capacity, Float64Array);
    this.lastAccessTimeMs = growArray(this.lastAccessTimeMs, capacity, Float64Array);
  }
}

type TypedArray = Int32Array | Uint32Array | Float64Array;

function growArray<T extends TypedArray>(old: T, capacity: number, Kind: new (n: number) => T): T {
  const grown = new Kind(capacity);
  grown.set(old);
  return grown;
}
