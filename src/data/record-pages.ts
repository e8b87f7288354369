// Record metadata in fixed-size pages: RECORDS_PER_PAGE records of RECORD_BYTES each, interleaved
// (all fields of a record share one or two cache lines, so a random get costs few cache misses),
// with no JS object per record. Pages are never reallocated once full size, so growth copies
// nothing and the allocator sees one page size over and over (little fragmentation); only the
// first page grows (1.25x) so that a small map costs little.
// Record layout, 64 bytes = 8 float64 = 16 uint32 words (one cache line when aligned):
//   f64 0 creationTimeMs | f64 1 updateTimeMs | f64 2 lastAccessTimeMs | f64 3 version
//   u32 8 hash | u32 9 location (slab) | u32 10 keyBytes | u32 11 valueBytes | u32 12 contentType | u32 13 hits
//   u32 14 own time-to-live | u32 15 own max-idle (expiry.ts expiryWord: 0 = the map's)
// Invariants: a record index below highWater is live or on the free list, never both; a free
// record has location FREE_RECORD and keeps the next free index + 1 in its keyBytes word.
import { assert } from '../util/assert.js';
import { NO_LOCATION } from './slab.js';

export const FREE_RECORD = NO_LOCATION;
const PAGE_SHIFT = 8;
export const RECORDS_PER_PAGE = 1 << PAGE_SHIFT;
const PAGE_MASK = RECORDS_PER_PAGE - 1;
const WORDS = 16;
const F64S = 8;
export const RECORD_BYTES = WORDS * 4;
const FIRST_PAGE_RECORDS_MIN = 4;
const FIRST_PAGE_GROWTH = 1.25;

export const F_CREATED = 0;
export const F_UPDATED = 1;
export const F_ACCESSED = 2;
export const F_VERSION = 3;
export const W_HASH = 8;
export const W_LOCATION = 9;
export const W_KEY_BYTES = 10;
export const W_VALUE_BYTES = 11;
export const W_CONTENT_TYPE = 12;
export const W_HITS = 13;
export const W_TTL = 14;
export const W_MAX_IDLE = 15;

export class RecordPages {
  private readonly f64Pages: Float64Array[] = [];
  private readonly u32Pages: Uint32Array[] = [];
  /** Records the pages can hold. */
  capacity = 0;
  highWater = 0;
  private freeHead = -1;

  constructor(capacity: number) {
    const firstPage = Math.min(RECORDS_PER_PAGE, Math.max(FIRST_PAGE_RECORDS_MIN, capacity));
    this.addPage(firstPage);
    while (this.capacity < capacity) this.addPage(RECORDS_PER_PAGE);
  }

  isLive(index: number): boolean {
    return index < this.highWater && this.getU32(index, W_LOCATION) !== FREE_RECORD;
  }

  /** A record index to fill: a freed one first, else the next unused one (growing if needed). */
  allocate(): number {
    if (this.freeHead >= 0) {
      const index = this.freeHead;
      this.freeHead = this.getU32(index, W_KEY_BYTES) - 1;
      return index;
    }
    if (this.highWater === this.capacity) this.grow();
    return this.highWater++;
  }

  free(index: number): void {
    assert(this.isLive(index), 'record is not live');
    this.setU32(index, W_LOCATION, FREE_RECORD);
    this.setU32(index, W_KEY_BYTES, this.freeHead + 1);
    this.freeHead = index;
  }

  getF64(index: number, field: number): number {
    return this.f64Pages[index >>> PAGE_SHIFT]![(index & PAGE_MASK) * F64S + field]!;
  }

  setF64(index: number, field: number, value: number): void {
    this.f64Pages[index >>> PAGE_SHIFT]![(index & PAGE_MASK) * F64S + field] = value;
  }

  getU32(index: number, word: number): number {
    return this.u32Pages[index >>> PAGE_SHIFT]![(index & PAGE_MASK) * WORDS + word]!;
  }

  setU32(index: number, word: number, value: number): void {
    this.u32Pages[index >>> PAGE_SHIFT]![(index & PAGE_MASK) * WORDS + word] = value;
  }

  /** The in-partition key hash, as a signed int32. */
  hash(index: number): number {
    return this.u32Pages[index >>> PAGE_SHIFT]![(index & PAGE_MASK) * WORDS + W_HASH]! | 0;
  }

  private grow(): void {
    if (this.f64Pages.length > 1 || this.capacity === RECORDS_PER_PAGE) {
      this.addPage(RECORDS_PER_PAGE);
      return;
    }
    const records = Math.min(RECORDS_PER_PAGE, Math.ceil(this.capacity * FIRST_PAGE_GROWTH));
    const old = this.u32Pages[0]!;
    this.f64Pages.length = this.u32Pages.length = 0;
    this.capacity = 0;
    this.addPage(records);
    this.u32Pages[0]!.set(old);
  }

  private addPage(records: number): void {
    const buffer = new ArrayBuffer(records * RECORD_BYTES);
    this.f64Pages.push(new Float64Array(buffer));
    this.u32Pages.push(new Uint32Array(buffer));
    this.capacity += records;
  }
}
