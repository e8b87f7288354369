// The maps of this member: a MapStore per map name (created on first write, configured once from
// resolveConfig), one content-type table shared by all, and the cursor of the incremental expiry
// sweep. The caller routes: it computes the partition id from the key (src/partition/partition-id.ts)
// and only calls here for partitions this member holds.
// Invariants: partition ids are in [0, partitionCount); keys are at most keyBytesMax and values at
// most valueBytesMax bytes (larger ones are refused with ERR_DATA_ENTRY_TOO_LARGE before anything
// changes). Record views are read-only snapshots: their `value` never changes, even after the entry
// is overwritten, removed or compacted.
import type { MapConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import { assert } from '../util/assert.js';
import { GridError } from '../util/errors.js';
import { ContentTypes } from './content-types.js';
import { type MapEntryExport, type MerkleEntryDigest, MapStore, merkleDepthOf, type RecordMetadata } from './map-store.js';
import { ENTRY_EXPIRY_MAP, type EntryExpiry, type ExpiryPolicy, entryPolicy, expirationTimeMs, expiryPolicyOf } from './expiry.js';
import { MerkleTree } from './merkle-tree.js';

export type { MapEntryExport, MerkleEntryDigest } from './map-store.js';
export type { MapRecordView } from './record-table.js';
import type { MapRecordView, StoredRecord } from './record-table.js';

export const MAP_KEY_BYTES_MAX_DEFAULT = 64 * 1024;
export const MAP_VALUE_BYTES_MAX_DEFAULT = 256 * 1024 * 1024;
/** Offsets and lengths are 32-bit in the record columns; Buffers stay below 2^31 bytes here. */
const ENTRY_BYTES_LIMIT = 0x7fffffff;

export interface MapServiceOptions {
  readonly partitionCount: number;
  readonly resolveConfig: (mapName: string) => MapConfig;
  readonly random: Random;
  readonly keyBytesMax?: number;
  readonly valueBytesMax?: number;
}

export class MapService {
  private readonly partitionCount: number;
  private readonly resolveConfig: (mapName: string) => MapConfig;
  private readonly random: Random;
  private readonly keyBytesMax: number;
  private readonly valueBytesMax: number;
  private readonly types = new ContentTypes();
  private readonly storesByName = new Map<string, MapStore>();
  /** In creation order; maps are never dropped, so the sweep cursor can hold an index. */
  private readonly stores: MapStore[] = [];
  private sweepStore = 0;
  private sweepPartition = 0;
  private sweepRecord = 0;

  constructor(options: MapServiceOptions) {
    assert(Number.isInteger(options.partitionCount) && options.partitionCount >= 1, 'partitionCount must be a positive integer');
    this.partitionCount = options.partitionCount;
    this.resolveConfig = options.resolveConfig;
    this.random = options.random;
    this.keyBytesMax = options.keyBytesMax ?? MAP_KEY_BYTES_MAX_DEFAULT;
    this.valueBytesMax = options.valueBytesMax ?? MAP_VALUE_BYTES_MAX_DEFAULT;
    assert(this.keyBytesMax + this.valueBytesMax <= ENTRY_BYTES_LIMIT, 'key and value limits must add up to less than 2 GiB');
  }

  get(mapName: string, key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined || key.length > this.keyBytesMax) return null;
    return store.get(key, partitionId, nowMs);
  }

  /** Like get, for an answer: the value and content type only. */
  getStored(mapName: string, key: Uint8Array, partitionId: number, nowMs: number): StoredRecord | null {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined || key.length > this.keyBytesMax) return null;
    return store.getStored(key, partitionId, nowMs);
  }

  /** The record a write just stored (as `peek`, without a second lookup when it was the last write). */
  peekWritten(mapName: string, key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    const store = this.storesByName.get(mapName);
    return store === undefined ? null : store.peekWritten(key, partitionId, nowMs);
  }

  /** The live record without counting a read (no hit, last access unchanged). */
  peek(mapName: string, key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined || key.length > this.keyBytesMax) return null;
    return store.peek(key, partitionId, nowMs);
  }

  /** The map's TTL and max-idle, from its config (the map need not hold anything yet). */
  expiryPolicy(mapName: string): ExpiryPolicy {
    return this.storesByName.get(mapName)?.expiryPolicy ?? expiryPolicyOf(this.resolveConfig(mapName));
  }

  /** `expiry`: the record's own time-to-live and max-idle (a client write naming them); absent, the map's. */
  put(mapName: string, key: Uint8Array, partitionId: number, value: Uint8Array, contentType: string | null, nowMs: number, expiry: EntryExpiry | null = null): void {
    this.checkPartition(partitionId);
    this.checkSizes(key, value);
    this.storeFor(mapName).put(key, partitionId, value, contentType, nowMs, expiry);
  }

  /**
   * When a record expires (wall-clock ms), Infinity when never: the map's policy with the record's
   * own settings over it. Merge policies, persistence and WAN compare or keep it.
   */
  expirationOf(mapName: string, record: { readonly updateTimeMs: number; readonly lastAccessTimeMs: number; readonly ttlMs?: number; readonly maxIdleMs?: number }): number {
    const policy = entryPolicy(this.expiryPolicy(mapName), record.ttlMs ?? ENTRY_EXPIRY_MAP, record.maxIdleMs ?? ENTRY_EXPIRY_MAP);
    return expirationTimeMs(policy, record.updateTimeMs, record.lastAccessTimeMs);
  }

  remove(mapName: string, key: Uint8Array, partitionId: number, nowMs: number): boolean {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined || key.length > this.keyBytesMax) return false;
    return store.remove(key, partitionId, nowMs);
  }

  /** Removes every entry of the map on this member; returns how many were held. */
  clear(mapName: string): number {
    return this.storesByName.get(mapName)?.clear() ?? 0;
  }

  /** Removes the map's entries in one partition; returns how many were held. */
  clearInPartition(mapName: string, partitionId: number): number {
    this.checkPartition(partitionId);
    return this.storesByName.get(mapName)?.clearPartition(partitionId) ?? 0;
  }

  /** Exact count of live entries: for a map with expiry this first sweeps the whole map (O(entries)). */
  size(mapName: string, nowMs: number): number {
    const store = this.storesByName.get(mapName);
    if (store === undefined) return 0;
    if (store.expires) {
      for (let partitionId = 0; partitionId < this.partitionCount; partitionId++) {
        store.sweepRange(partitionId, 0, store.table(partitionId)?.highWater ?? 0, nowMs);
        store.maintainPartition(partitionId);
      }
    }
    return store.entries;
  }

  /** Live entries of the map in one partition (expired ones removed first, as size() does). */
  sizeInPartition(mapName: string, partitionId: number, nowMs: number): number {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined) return 0;
    if (store.expires) {
      store.sweepRange(partitionId, 0, store.table(partitionId)?.highWater ?? 0, nowMs);
      store.maintainPartition(partitionId);
    }
    return store.table(partitionId)?.count ?? 0;
  }

  mapNames(): string[] {
    return this.stores.map((store) => store.name);
  }

  /** Reads an owner served of the map since the member started (the console's rates). */
  readsOf(mapName: string): number {
    return this.storesByName.get(mapName)?.reads ?? 0;
  }

  /** What the console shows of a map held here: memory held, WAN and persistence on (null: not held). */
  figuresOf(mapName: string): { readonly heldBytes: number; readonly wan: boolean; readonly persistence: boolean } | null {
    const store = this.storesByName.get(mapName);
    if (store === undefined) return null;
    return { heldBytes: store.heldBytes(), wan: store.config.wanReplicationRef !== null, persistence: store.config.dataPersistence.enabled };
  }

  /** Entries held by all maps, counting expired ones the sweep has not reached yet. */
  totalEntries(): number {
    let total = 0;
    for (const store of this.stores) total += store.entries;
    return total;
  }

  /**
   * Entries of each map split by partition: `owned[p]` says whether this member owns partition p.
   * Like totalEntries, expired entries the sweep has not reached yet are counted.
   */
  entriesBySide(owned: readonly boolean[]): { name: string; owned: number; backup: number }[] {
    const out: { name: string; owned: number; backup: number }[] = [];
    for (const store of this.stores) {
      let mine = 0;
      let others = 0;
      for (let p = 0; p < this.partitionCount; p++) {
        const n = store.table(p)?.count ?? 0;
        if (owned[p] === true) mine += n;
        else others += n;
      }
      out.push({ name: store.name, owned: mine, backup: others });
    }
    return out;
  }

  /** Distinct content types held now (bounded by the entries that use them). */
  contentTypeCount(): number {
    return this.types.distinctCount;
  }

  /**
   * Removes expired entries, examining at most about `budgetRecords` record slots (a skipped map or
   * partition costs one), resuming where the previous call stopped. Returns how many it removed.
   * Calling it with a fixed budget until it has gone round once visits every record.
   */
  sweepExpired(nowMs: number, budgetRecords: number): number {
    let budget = budgetRecords;
    let removed = 0;
    let storesPassed = 0;
    while (budget > 0 && storesPassed <= this.stores.length) {
      if (this.sweepStore >= this.stores.length) this.moveSweepTo(0);
      const store = this.stores[this.sweepStore];
      if (store === undefined) break;
      const table = store.expires ? store.table(this.sweepPartition) : null;
      if (table === null || this.sweepRecord >= table.highWater) {
        store.maintainPartition(this.sweepPartition);
        budget--;
        if (!store.expires || this.sweepPartition + 1 >= this.partitionCount) {
          this.moveSweepTo(this.sweepStore + 1);
          storesPassed++;
        } else {
          this.sweepPartition++;
          this.sweepRecord = 0;
        }
        continue;
      }
      const end = Math.min(table.highWater, this.sweepRecord + budget);
      removed += store.sweepRange(this.sweepPartition, this.sweepRecord, end, nowMs);
      budget -= end - this.sweepRecord;
      this.sweepRecord = end;
    }
    return removed;
  }

  /** The live entries of one partition across every map, for migration and backup copies. */
  *exportPartition(partitionId: number, nowMs: number): Generator<MapEntryExport> {
    this.checkPartition(partitionId);
    for (const store of this.stores) yield* store.exportPartition(partitionId, nowMs);
  }

  /** The live entries of one map in one partition (WAN sync snapshots). */
  *exportMapPartition(mapName: string, partitionId: number, nowMs: number): Generator<MapEntryExport> {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store !== undefined) yield* store.exportPartition(partitionId, nowMs);
  }

  /** Stores an exported entry with its history, overwriting any entry of that key. */
  importEntry(partitionId: number, entry: MapEntryExport, nowMs: number): void {
    this.checkPartition(partitionId);
    this.checkSizes(entry.key, entry.value);
    this.storeFor(entry.mapName).importEntry(partitionId, entry, nowMs);
  }

  /** importEntry from a record's parts (merges: no export object per entry). */
  importRecord(partitionId: number, mapName: string, key: Uint8Array, value: Uint8Array, contentType: string | null, metadata: RecordMetadata, nowMs: number): void {
    this.checkPartition(partitionId);
    this.checkSizes(key, value);
    this.storeFor(mapName).importRecord(partitionId, key, value, contentType, metadata, nowMs);
  }

  /** The depth of the map's Merkle trees (its `merkle-tree` depth, capped at MERKLE_DEPTH_MAX); the map need not exist. */
  merkleDepth(mapName: string): number {
    return this.storesByName.get(mapName)?.merkleDepth ?? merkleDepthOf(this.resolveConfig(mapName));
  }

  /**
   * The Merkle tree of the map's entries in one partition (map-store.ts "Merkle trees"): built on
   * first request, then maintained by every write, so from then on that partition's writes pay for
   * it. For a map with expiry, the partition's expired entries are removed first (one pass over the
   * partition), so the tree reflects the live entries at `nowMs`. For a map this member does not
   * hold, a fresh empty tree of the map's depth that is not kept (a read creates no map). The
   * caller only reads the tree; it keeps changing with the map (take a snapshot() for a fixed view).
   */
  merkleTree(mapName: string, partitionId: number, nowMs: number): MerkleTree {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined) return new MerkleTree(merkleDepthOf(this.resolveConfig(mapName)));
    return store.merkleTree(partitionId, nowMs);
  }

  /**
   * Per-entry digests (leaf, key hash, entry hash, key) of the map's live entries in one partition
   * whose key hash lies under `leaves`, numbered as the leaves of a tree of `leafDepth` (the depth a
   * comparison ran at: src/wan/merkle-compare.ts). Reads only; one pass over the partition.
   */
  leafDigests(mapName: string, partitionId: number, leafDepth: number, leaves: readonly number[], nowMs: number): MerkleEntryDigest[] {
    this.checkPartition(partitionId);
    return this.storesByName.get(mapName)?.leafDigests(partitionId, leafDepth, leaves, nowMs) ?? [];
  }

  /** The map's live entries in one partition under `leaves` (as leafDigests), exported with their history. Reads only. */
  entriesUnderLeaves(mapName: string, partitionId: number, leafDepth: number, leaves: readonly number[], nowMs: number): MapEntryExport[] {
    this.checkPartition(partitionId);
    return this.storesByName.get(mapName)?.entriesUnderLeaves(partitionId, leafDepth, leaves, nowMs) ?? [];
  }

  /** The live entries of the map for `keys` (all in one partition), exported; absent keys are left out. Reads only. */
  entriesOf(mapName: string, partitionId: number, keys: readonly Uint8Array[], nowMs: number): MapEntryExport[] {
    this.checkPartition(partitionId);
    const store = this.storesByName.get(mapName);
    if (store === undefined) return [];
    return store.entriesOf(partitionId, keys.filter((key) => key.length <= this.keyBytesMax), nowMs);
  }

  /** The map's live entries in one partition (reads only: no hit, last access unchanged). */
  entriesInPartition(mapName: string, partitionId: number, nowMs: number): Iterable<MapEntryExport> {
    this.checkPartition(partitionId);
    return this.storesByName.get(mapName)?.exportPartition(partitionId, nowMs) ?? [];
  }

  /** Drops one partition's entries of every map (after it migrated away); returns how many. */
  clearPartition(partitionId: number): number {
    this.checkPartition(partitionId);
    let removed = 0;
    for (const store of this.stores) removed += store.clearPartition(partitionId);
    return removed;
  }

  private storeFor(mapName: string): MapStore {
    let store = this.storesByName.get(mapName);
    if (store === undefined) {
      store = new MapStore(mapName, this.resolveConfig(mapName), this.partitionCount, this.types, this.random);
      this.storesByName.set(mapName, store);
      this.stores.push(store);
    }
    return store;
  }

  private moveSweepTo(storeIndex: number): void {
    this.sweepStore = storeIndex >= this.stores.length ? 0 : storeIndex;
    this.sweepPartition = 0;
    this.sweepRecord = 0;
  }

  private checkPartition(partitionId: number): void {
    assert(Number.isInteger(partitionId) && partitionId >= 0 && partitionId < this.partitionCount, 'partition id out of range');
  }

  /** Throws ERR_DATA_ENTRY_TOO_LARGE for a key or value this service would refuse. */
  checkSizes(key: Uint8Array, value: Uint8Array): void {
    if (key.length > this.keyBytesMax) {
      throw new GridError('ERR_DATA_ENTRY_TOO_LARGE', `key of ${key.length} bytes is larger than ${this.keyBytesMax}`);
    }
    if (value.length > this.valueBytesMax) {
      throw new GridError('ERR_DATA_ENTRY_TOO_LARGE', `value of ${value.length} bytes is larger than ${this.valueBytesMax}`);
    }
  }
}
