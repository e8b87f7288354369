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

export const SLAB_CHUNK_BYTES_MIN = 256;
export const SLAB_CHUNK_BYTES_MAX = 16 * 1024;
/** Records at least this long get their own chunk: a closed chunk never wastes more than this. */
export const SLAB_DEDICATED_BYTES_MIN = 4 * 1024;
const CHUNK_GROWTH = 1.5;
/** Below this much garbage a slab is never worth compacting. */
const COMPACT_GARBAGE_BYTES_MIN = 4 * 1024;

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
  /** Written by allocate(): where the caller writes its record. */
  lastChunkId = 0;
  lastOffset = 0;

  constructor(firstChunkBytes: number = SLAB_CHUNK_BYTES_MIN) {
    this.nextChunkBytes = clampChunkBytes(firstChunkBytes);
  }

  /** Reserves `bytes` for one record; returns the chunk and sets lastChunkId/lastOffset. */
  allocate(bytes: number): Buffer {
    if (isDedicatedLength(bytes)) return this.adopt(Buffer.allocUnsafeSlow(bytes));
    let chunk = this.openChunkId < 0 ? null : this.chunks[this.openChunkId]!;
    if (chunk === null || chunk.length - this.openUsedBytes < bytes) chunk = this.openChunk(bytes);
    this.lastChunkId = this.openChunkId;
    this.lastOffset = this.openUsedBytes;
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
    this.lastChunkId = id;
    this.lastOffset = 0;
    return chunk;
  }

  chunk(id: number): Buffer {
    const chunk = this.chunks[id];
    assert(chunk !== undefined && chunk !== null, 'slab chunk is not live');
    return chunk;
  }

  /** The record of `bytes` in chunk `id` is gone; its space becomes garbage. */
  release(id: number, bytes: number): void {
    const records = this.chunkRecords[id];
    assert(records !== undefined && records > 0, 'slab chunk has no live record');
    this.chunkRecords[id] = records - 1;
    if (!isDedicatedLength(bytes)) this.sharedLiveBytes -= bytes;
    if (records === 1 && id !== this.openChunkId) this.dropChunk(id);
  }

  /** Shared-chunk bytes that hold no live record (dropped tails included, the open tail not). */
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

  private openChunk(bytes: number): Buffer {
    const previous = this.openChunkId;
    this.openChunkId = -1;
    if (previous >= 0 && this.chunkRecords[previous] === 0) this.dropChunk(previous);
    const size = Math.max(bytes, this.nextChunkBytes);
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
    this.chunks[id] = chunk;
    this.chunkDedicated[id] = dedicated;
    return id;
  }

  private dropChunk(id: number): void {
    const chunk = this.chunks[id]!;
    if (!this.chunkDedicated[id]) this.sharedAllocatedBytes -= chunk.length;
    this.chunks[id] = null;
    this.freeChunkIds.push(id);
  }
}

function clampChunkBytes(bytes: number): number {
  return Math.min(SLAB_CHUNK_BYTES_MAX, Math.max(SLAB_CHUNK_BYTES_MIN, bytes));
}
