// The record store of one map on this member: one RecordTable per partition (created on first
// write), plus the map's expiry and eviction rules. Control flow lives here; the tables, expiry and
// eviction modules are the leaves.
// Invariants: `entryCount` is the sum of the tables' counts (expired entries not yet removed
// included); after every put or import the count is <= the eviction limit (when there is one);
// an expired record is never returned.
import type { MapConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import type { MapRecordView } from './map-service.js';
import type { ContentTypes } from './content-types.js';
import { assert } from '../util/assert.js';
import { murmurHash3x86 } from '../partition/murmur3.js';
import { type RecordMetadata, RecordTable } from './record-table.js';
import { type ExpiryPolicy, expiryEnabled, expiryPolicyOf, isExpired } from './expiry.js';
import { chooseVictim, evictionLimitOf } from './eviction.js';

/** Seed of the in-partition index hash: independent of the partition hash, whose bits chose the partition. */
const INDEX_HASH_SEED = 0x2f8a1c3b;

/** A record as it leaves a partition (migration, backup copy) and enters another member. */
export interface MapEntryExport extends RecordMetadata {
  readonly mapName: string;
  readonly key: Buffer;
  readonly value: Buffer;
  readonly contentType: string | null;
}

export class MapStore {
  private readonly tables: (RecordTable | null)[];
  private entryCount = 0;
  private readonly expiry: ExpiryPolicy;
  private readonly evictionLimit: number | null;

  constructor(
    readonly name: string,
    readonly config: MapConfig,
    partitionCount: number,
    private readonly types: ContentTypes,
    private readonly random: Random,
  ) {
    this.tables = new Array<RecordTable | null>(partitionCount).fill(null);
    this.expiry = expiryPolicyOf(config);
    this.evictionLimit = evictionLimitOf(config);
  }

  get entries(): number {
    return this.entryCount;
  }

  get expires(): boolean {
    return expiryEnabled(this.expiry);
  }

  table(partitionId: number): RecordTable | null {
    return this.tables[partitionId] ?? null;
  }

  get(key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return null;
    const index = this.findLive(table, key, indexHash(key), nowMs);
    if (index < 0) return null;
    table.touch(index, nowMs);
    return table.view(index);
  }

  /** Like get, but not a read: the record's hits and last access stay as they were (merge policies compare them). */
  peek(key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return null;
    const index = this.findLive(table, key, indexHash(key), nowMs);
    return index < 0 ? null : table.view(index);
  }

  get expiryPolicy(): ExpiryPolicy {
    return this.expiry;
  }

  put(key: Uint8Array, partitionId: number, value: Uint8Array, contentType: string | null, nowMs: number): void {
    this.write(key, partitionId, value, contentType, nowMs, null);
  }

  /** Puts a record with its history (migration target, backup). Evicts like a put. */
  importEntry(partitionId: number, entry: MapEntryExport, nowMs: number): void {
    this.write(entry.key, partitionId, entry.value, entry.contentType, nowMs, entry);
  }

  remove(key: Uint8Array, partitionId: number, nowMs: number): boolean {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return false;
    table.maintain();
    const index = this.findLive(table, key, indexHash(key), nowMs);
    if (index < 0) return false;
    this.deleteRecord(table, index);
    return true;
  }

  /** Removes every entry; returns how many there were (expired ones not yet removed included). */
  clear(): number {
    let removed = 0;
    for (let partitionId = 0; partitionId < this.tables.length; partitionId++) removed += this.clearPartition(partitionId);
    return removed;
  }

  clearPartition(partitionId: number): number {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return 0;
    const removed = table.releaseAll();
    this.tables[partitionId] = null;
    this.entryCount -= removed;
    return removed;
  }

  /** Removes the expired records among indices [from, to) of one partition; returns how many. */
  sweepRange(partitionId: number, from: number, to: number, nowMs: number): number {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return 0;
    let removed = 0;
    const end = Math.min(to, table.highWater);
    for (let index = from; index < end; index++) {
      if (table.isLive(index) && this.expiredAt(table, index, nowMs)) {
        this.deleteRecord(table, index);
        removed++;
      }
    }
    return removed;
  }

  /** Runs deferred compaction of a partition's table (call when holding no record index). */
  maintainPartition(partitionId: number): void {
    this.tables[partitionId]?.maintain();
  }

  /** The live records of one partition. Mutating that partition while iterating is a programmer error. */
  *exportPartition(partitionId: number, nowMs: number): Generator<MapEntryExport> {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return;
    const modCount = table.modCount;
    for (let index = 0; index < table.highWater; index++) {
      assert(table.modCount === modCount && this.tables[partitionId] === table, 'partition changed during export');
      if (!table.isLive(index) || this.expiredAt(table, index, nowMs)) continue;
      const view = table.view(index);
      yield {
        mapName: this.name,
        key: table.key(index),
        value: view.value,
        contentType: view.contentType,
        creationTimeMs: view.creationTimeMs,
        updateTimeMs: view.updateTimeMs,
        lastAccessTimeMs: view.lastAccessTimeMs,
        version: view.version,
        hits: view.hits,
      };
    }
  }

  private write(
    key: Uint8Array,
    partitionId: number,
    value: Uint8Array,
    contentType: string | null,
    nowMs: number,
    metadata: RecordMetadata | null,
  ): void {
    let table = this.tables[partitionId];
    if (table === null || table === undefined) {
      table = new RecordTable(this.types);
      this.tables[partitionId] = table;
    }
    table.maintain();
    const hash = indexHash(key);
    let index = this.findLive(table, key, hash, nowMs);
    if (index >= 0) {
      table.overwrite(index, key, value, contentType, nowMs);
    } else {
      index = table.insert(key, hash, value, contentType, nowMs);
      this.entryCount++;
    }
    if (metadata !== null) table.restoreMetadata(index, metadata);
    this.evictOverLimit(partitionId, index, nowMs);
  }

  private evictOverLimit(keepPartitionId: number, keepIndex: number, nowMs: number): void {
    const limit = this.evictionLimit;
    if (limit === null) return;
    while (this.entryCount > limit) {
      const victim = chooseVictim({
        tables: this.tables,
        policy: this.config.eviction.policy,
        expiry: this.expiry,
        random: this.random,
        nowMs,
        keepPartitionId,
        keepIndex,
      });
      assert(victim !== null, 'a map over its limit has a record besides the one just written');
      const table = this.tables[victim.partitionId]!;
      this.deleteRecord(table, victim.index);
      if (victim.partitionId !== keepPartitionId) table.maintain();
    }
  }

  /** The index of the live record for `key`, removing it first if it has expired; -1 if none. */
  private findLive(table: RecordTable, key: Uint8Array, hash: number, nowMs: number): number {
    const index = table.find(key, hash);
    if (index < 0 || !this.expiredAt(table, index, nowMs)) return index;
    this.deleteRecord(table, index);
    return -1;
  }

  private expiredAt(table: RecordTable, index: number, nowMs: number): boolean {
    return expiryEnabled(this.expiry) && isExpired(this.expiry, table.updateTimeMs(index), table.lastAccessTimeMs(index), nowMs);
  }

  private deleteRecord(table: RecordTable, index: number): void {
    table.delete(index);
    this.entryCount--;
  }
}

function indexHash(key: Uint8Array): number {
  return murmurHash3x86(key, INDEX_HASH_SEED);
}
