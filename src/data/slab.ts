// Append-only byte storage for the key+value bytes of one record table (one map in one partition).
// Bytes live in chunks: small records are appended back to back into the open chunk; a chunk that
// cannot take the next record is closed, and the next one is 1.5x larger (up to
// SLAB_CHUNK_BYTES_MAX), so a small partition wastes little and a big one needs few chunks. A record
// of SLAB_DEDICATED_BYTES_MIN or more gets a chunk of exactly its size.
//
// Invariant: bytes once written are never written again. A GET hands out views (subarrays) of a
// chunk, and those must stay valid and unchanged after the record is overwritten or removed, so
// space is reclaimed only by dropping a whole chunk (when its last record leaves) or by the record
// table copying its live records into a NEW slab (compaction); old chunks then live on only as long
// as some view still references them.
import { assert } from '../util/assert.js';
import { GridError } from '../util/errors.js';

export const SLAB_CHUNK_BYTES_MIN = 256;
export const SLAB_CHUNK_BYTES_MAX = 16 * 1024;
/** Records at least this long get their own chunk: a closed chunk never wastes more than this. */
export const SLAB_DEDICATED_BYTES_MIN = 4 * 1024;
const CHUNK_GROWTH = 1.5;
/** Below this much garbage a slab is never worth compacting. */
const COMPACT_GARBAGE_BYTES_MIN = 4 * 1024;

/**
 * A record's location is one uint32: chunk id * LOCATION_CHUNK_UNIT + offset. Shared chunks are at
 * most SLAB_CHUNK_BYTES_MAX long and dedicated records start at offset 0, so offsets fit below the
 * unit. 0xffffffff (the last id's last offset) is never a location, so record tables can use it.
 */
const LOCATION_CHUNK_UNIT = SLAB_CHUNK_BYTES_MAX;
const CHUNK_IDS_MAX = Math.floor(0xffffffff / LOCATION_CHUNK_UNIT);
export const NO_LOCATION = 0xffffffff;

export function locationChunk(location: number): number {
  return Math.floor(location / LOCATION_CHUNK_UNIT);
}

export function locationOffset(location: number): number {
  return location % LOCATION_CHUNK_UNIT;
}

export function isDedicatedLength(bytes: number): boolean {
  return bytes >= SLAB_DEDICATED_BYTES_MIN;
}

export class Slab {
  private readonly chunks: (Buffer | null)[] = [];
  /** Live records per chunk: a closed chunk is dropped when this reaches 0. */
  private readonly chunkRecords: number[] = [];
  private readonly chunkDedicated: boolean[] = [];
  private readonly freeChunkIds: number[] = [];
  private openChunkId = -1;
  private openUsedBytes = 0;
  private nextChunkBytes: number;
  /** Bytes of live records in shared (non-dedicated) chunks. */
  private sharedLiveBytes = 0;
  /** Bytes of shared chunks still held (open chunk included). */
  private sharedAllocatedBytes = 0;
  /** Bytes of dedicated chunks (one large record each). */
  private dedicatedBytes = 0;
  /** Written by allocate() and adopt(): where the caller writes its record. */
  lastOffset = 0;
  lastLocation = 0;

  constructor(firstChunkBytes: number = SLAB_CHUNK_BYTES_MIN) {
    this.nextChunkBytes = clampChunkBytes(firstChunkBytes);
  }

  /** Reserves `bytes` for one record; returns the chunk and sets lastOffset/lastLocation. */
  allocate(bytes: number): Buffer {
    if (isDedicatedLength(bytes)) return this.adopt(Buffer.allocUnsafeSlow(bytes));
    let chunk = this.openChunkId < 0 ? null : this.chunks[this.openChunkId]!;
    // `remaining === 0` too: an empty record at the very end would have an offset out of range.
    const remaining = chunk === null ? 0 : chunk.length - this.openUsedBytes;
    if (chunk === null || remaining < bytes || remaining === 0) chunk = this.openChunk(bytes);
    this.lastOffset = this.openUsedBytes;
    this.lastLocation = this.openChunkId * LOCATION_CHUNK_UNIT + this.openUsedBytes;
    this.openUsedBytes += bytes;
    this.chunkRecords[this.openChunkId]!++;
    this.sharedLiveBytes += bytes;
    return chunk;
  }

  /** Takes over a dedicated chunk holding exactly one record (compaction moves them without copying). */
  adopt(chunk: Buffer): Buffer {
    assert(isDedicatedLength(chunk.length), 'only dedicated records are adopted');
    const id = this.newChunkId(chunk, true);
    this.chunkRecords[id] = 1;
    this.dedicatedBytes += chunk.length;
    this.lastOffset = 0;
    this.lastLocation = id * LOCATION_CHUNK_UNIT;
    return chunk;
  }

  /** The chunk holding the record at `location` (a record's bytes start at locationOffset). */
  chunkAt(location: number): Buffer {
    const chunk = this.chunks[locationChunk(location)];
    assert(chunk !== undefined && chunk !== null, 'slab chunk is not live');
    return chunk;
  }

  /** The record of `bytes` at `location` is gone; its space becomes garbage. */
  release(location: number, bytes: number): void {
    const id = locationChunk(location);
    const records = this.chunkRecords[id];
    assert(records !== undefined && records > 0, 'slab chunk has no live record');
    this.chunkRecords[id] = records - 1;
    if (!isDedicatedLength(bytes)) this.sharedLiveBytes -= bytes;
    if (records === 1 && id !== this.openChunkId) this.dropChunk(id);
  }

  /** Shared-chunk bytes that hold no live record: dead records and closed chunks' unused tails (not the open tail). */
  garbageBytes(): number {
    const openTail = this.openChunkId < 0 ? 0 : this.chunks[this.openChunkId]!.length - this.openUsedBytes;
    return this.sharedAllocatedBytes - this.sharedLiveBytes - openTail;
  }

  /** More than half of the shared space is garbage: time to copy the live records into a new slab. */
  shouldCompact(): boolean {
    const garbage = this.garbageBytes();
    return garbage >= COMPACT_GARBAGE_BYTES_MIN && garbage > this.sharedLiveBytes;
  }

  get liveSharedBytes(): number {
    return this.sharedLiveBytes;
  }

  /** Every byte of chunk the slab holds (records' bytes, garbage and the open chunk's free tail). */
  get heldBytes(): number {
    return this.sharedAllocatedBytes + this.dedicatedBytes;
  }

  private openChunk(bytes: number): Buffer {
    const previous = this.openChunkId;
    this.openChunkId = -1;
    if (previous >= 0 && this.chunkRecords[previous] === 0) this.dropChunk(previous);
    const size = Math.max(bytes + 1, this.nextChunkBytes);
    this.nextChunkBytes = clampChunkBytes(Math.ceil(size * CHUNK_GROWTH));
    const chunk = Buffer.allocUnsafeSlow(size);
    this.openChunkId = this.newChunkId(chunk, false);
    this.chunkRecords[this.openChunkId] = 0;
    this.openUsedBytes = 0;
    this.sharedAllocatedBytes += size;
    return chunk;
  }

  private newChunkId(chunk: Buffer, dedicated: boolean): number {
    const id = this.freeChunkIds.pop() ?? this.chunks.length;
    if (id >= CHUNK_IDS_MAX) throw new GridError('ERR_DATA_ENTRY_TOO_LARGE', 'one partition of this map holds too many bytes');
    this.chunks[id] = chunk;
    this.chunkDedicated[id] = dedicated;
    return id;
  }

  private dropChunk(id: number): void {
    const chunk = this.chunks[id]!;
    if (!this.chunkDedicated[id]) this.sharedAllocatedBytes -= chunk.length;
    else this.dedicatedBytes -= chunk.length;
    this.chunks[id] = null;
    this.freeChunkIds.push(id);
  }
}

function clampChunkBytes(bytes: number): number {
  return Math.min(SLAB_CHUNK_BYTES_MAX, Math.max(SLAB_CHUNK_BYTES_MIN, bytes));
}
