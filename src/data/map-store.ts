// The record store of one map on this member: one RecordTable per partition (created on first
// write), plus the map's expiry and eviction rules. Control flow lives here; the tables, expiry and
// eviction modules are the leaves.
// Invariants: `entryCount` is the sum of the tables' counts (expired entries not yet removed
// included); after every put or import the count is <= the eviction limit (when there is one);
// an expired record is never returned.
//
// Merkle trees (merkle-tree.ts, for WAN consistency checks and delta sync): a partition's tree, once
// it exists, holds exactly the records stored in that partition's table, expired ones not yet
// removed included: every insert, overwrite and record deletion (remove, expiry met by a read or
// write, the sweep, eviction) and every clear updates it in the same call. A map whose config
// enables `merkle-tree` gets its trees from the start (with each partition's table); any other map
// gets a partition's tree when one is first asked for, built in one pass over the table, and keeps
// it. While a map has no tree at all, `trees` is null and the write path pays that one field test.
import type { MapConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import type { MapRecordView } from './record-table.js';
import type { ContentTypes } from './content-types.js';
import { assert } from '../util/assert.js';
import { type RecordMetadata, RecordTable, type StoredRecord } from './record-table.js';

export type { RecordMetadata };
import { type EntryExpiry, type ExpiryPolicy, expiryEnabled, expiryPolicyOf, isMapExpiry } from './expiry.js';
import { chooseVictim, evictionLimitOf } from './eviction.js';
import { MERKLE_DEPTH_DEFAULT, MERKLE_DEPTH_MAX, MERKLE_DEPTH_MIN, MerkleTree, leafAtDepth, merkleKeyHash } from './merkle-tree.js';

/** A record as it leaves a partition (migration, backup copy) and enters another member. */
export interface MapEntryExport extends RecordMetadata {
  readonly mapName: string;
  readonly key: Buffer;
  readonly value: Buffer;
  readonly contentType: string | null;
}

/** The per-entry digest of a Merkle delta sync: which leaf, the key hash, the entry hash, the key. */
export interface MerkleEntryDigest {
  readonly leaf: number;
  readonly keyHash: number;
  readonly entryHash: number;
  /** Read-only: a view of the stored key bytes, valid like a record view. */
  readonly key: Buffer;
}

/**
 * The depth of a map's Merkle trees: its `merkle-tree` depth, whether or not trees are enabled from
 * the start. The config accepts 2..27 (the reference's range); a tree deeper than MERKLE_DEPTH_MAX
 * would cost more memory per partition than it could save in bytes sent, so deeper settings are
 * used as MERKLE_DEPTH_MAX.
 */
export function merkleDepthOf(config: MapConfig): number {
  const depth = config.merkleTree.depth;
  if (!Number.isInteger(depth)) return MERKLE_DEPTH_DEFAULT;
  return Math.min(MERKLE_DEPTH_MAX, Math.max(MERKLE_DEPTH_MIN, depth));
}

export class MapStore {
  private readonly tables: (RecordTable | null)[];
  /** Reads served (get, getStored: an owner's reads), for the console's rates. */
  reads = 0;
  private entryCount = 0;
  private readonly expiry: ExpiryPolicy;
  private readonly evictionLimit: number | null;
  readonly merkleDepth: number;
  /** Per partition, its tree or null (none asked for yet); null as a whole while the map keeps no tree. */
  private trees: (MerkleTree | null)[] | null = null;
  /** `merkle-tree enabled`: every partition gets its tree with its table. */
  private readonly merkleEager: boolean;
  /** Where the last write stored its record (peekWritten). */
  private lastTable: RecordTable | null = null;
  private lastIndex = -1;
  /** The record index readLive() found (valid until the next call). */
  private readIndex = -1;
  /**
   * Whether any record may expire: the map's policy expires entries, or a write gave a record an
   * expiry of its own (then it stays true: sweeps and size() check expiry from then on).
   */
  private expiring: boolean;

  constructor(
    readonly name: string,
    readonly config: MapConfig,
    partitionCount: number,
    private readonly types: ContentTypes,
    private readonly random: Random,
  ) {
    this.tables = new Array<RecordTable | null>(partitionCount).fill(null);
    this.expiry = expiryPolicyOf(config);
    this.expiring = expiryEnabled(this.expiry);
    this.evictionLimit = evictionLimitOf(config);
    this.merkleDepth = merkleDepthOf(config);
    this.merkleEager = config.merkleTree.enabled;
    if (this.merkleEager) this.trees = new Array<MerkleTree | null>(partitionCount).fill(null);
  }

  get entries(): number {
    return this.entryCount;
  }

  /** Whether records of this map may expire (its policy, or a record's own expiry ever written). */
  get expires(): boolean {
    return this.expiring;
  }

  table(partitionId: number): RecordTable | null {
    return this.tables[partitionId] ?? null;
  }

  get(key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    this.reads++;
    const table = this.readLive(key, partitionId, nowMs);
    return table === null ? null : table.view(this.readIndex);
  }

  /** Like get, for an answer: the value and content type only (no metadata to build). */
  getStored(key: Uint8Array, partitionId: number, nowMs: number): StoredRecord | null {
    this.reads++;
    const table = this.readLive(key, partitionId, nowMs);
    return table === null ? null : table.stored(this.readIndex);
  }

  /** Memory this map's partitions hold on this member (RecordTable.heldBytes summed). */
  heldBytes(): number {
    let n = 0;
    for (const t of this.tables) if (t !== null) n += t.heldBytes;
    return n;
  }

  /** A read of the key: its table with the record's index in `readIndex` (hits and access time counted), or null. */
  private readLive(key: Uint8Array, partitionId: number, nowMs: number): RecordTable | null {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return null;
    const index = this.findLive(partitionId, table, key, indexHash(key), nowMs);
    if (index < 0) return null;
    table.touch(index, nowMs);
    this.readIndex = index;
    return table;
  }

  /**
   * The record the last write stored, when it is the one of this key (the mutation listeners read
   * what a write stored right after it: no second lookup); else a lookup as `peek`.
   */
  peekWritten(key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    const table = this.tables[partitionId];
    if (table !== null && table !== undefined && table === this.lastTable && table.holdsKey(this.lastIndex, key)) return table.view(this.lastIndex);
    return this.peek(key, partitionId, nowMs);
  }

  /** Like get, but not a read: the record's hits and last access stay as they were (merge policies compare them). */
  peek(key: Uint8Array, partitionId: number, nowMs: number): MapRecordView | null {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return null;
    const index = this.findLive(partitionId, table, key, indexHash(key), nowMs);
    return index < 0 ? null : table.view(index);
  }

  get expiryPolicy(): ExpiryPolicy {
    return this.expiry;
  }

  /** `expiry`: the record's own (client writes with a TTL or max-idle); absent, the map's. */
  put(key: Uint8Array, partitionId: number, value: Uint8Array, contentType: string | null, nowMs: number, expiry: EntryExpiry | null = null): void {
    this.write(key, partitionId, value, contentType, nowMs, null, expiry);
  }

  /** Puts a record with its history (migration target, backup). Evicts like a put. */
  importEntry(partitionId: number, entry: MapEntryExport, nowMs: number): void {
    this.write(entry.key, partitionId, entry.value, entry.contentType, nowMs, entry);
  }

  importRecord(partitionId: number, key: Uint8Array, value: Uint8Array, contentType: string | null, metadata: RecordMetadata, nowMs: number): void {
    this.write(key, partitionId, value, contentType, nowMs, metadata);
  }

  remove(key: Uint8Array, partitionId: number, nowMs: number): boolean {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return false;
    table.maintain();
    const index = this.findLive(partitionId, table, key, indexHash(key), nowMs);
    if (index < 0) return false;
    this.deleteRecord(partitionId, table, index);
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
    // Cleared in place, not dropped: whoever holds the tree (a comparison) keeps seeing this partition.
    this.trees?.[partitionId]?.clear();
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
        this.deleteRecord(partitionId, table, index);
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
      yield this.exportRecord(table, index);
    }
  }

  /**
   * The partition's Merkle tree, first removing the partition's expired records (maps with expiry:
   * one pass over the partition) so that it reflects the live entries at `nowMs`. Built on the first
   * call, then kept up to date by every change. Callers read it and never write into it.
   */
  merkleTree(partitionId: number, nowMs: number): MerkleTree {
    const table = this.tables[partitionId] ?? null;
    if (table !== null && this.expires) {
      this.sweepRange(partitionId, 0, table.highWater, nowMs);
      table.maintain();
    }
    const trees = (this.trees ??= new Array<MerkleTree | null>(this.tables.length).fill(null));
    return (trees[partitionId] ??= this.buildTree(this.tables[partitionId] ?? null));
  }

  /**
   * The digests of the live records of one partition whose key hash falls under `leaves` of a tree
   * of `leafDepth` (0 .. MERKLE_DEPTH_MAX; 0 = the whole partition as leaf 0), in record order.
   * Reads only: touches no record, removes nothing. One pass over the partition.
   */
  leafDigests(partitionId: number, leafDepth: number, leaves: readonly number[], nowMs: number): MerkleEntryDigest[] {
    const out: MerkleEntryDigest[] = [];
    this.forEachUnderLeaves(partitionId, leafDepth, leaves, nowMs, (table, index, leaf) => {
      out.push({ leaf, keyHash: table.keyHash(index), entryHash: table.entryHash(index), key: table.key(index) });
    });
    return out;
  }

  /** The live records under `leaves` (as leafDigests selects them), exported with their history. */
  entriesUnderLeaves(partitionId: number, leafDepth: number, leaves: readonly number[], nowMs: number): MapEntryExport[] {
    const out: MapEntryExport[] = [];
    this.forEachUnderLeaves(partitionId, leafDepth, leaves, nowMs, (table, index) => out.push(this.exportRecord(table, index)));
    return out;
  }

  /** The live records for `keys` of one partition, exported; absent or expired keys are left out. Reads only. */
  entriesOf(partitionId: number, keys: readonly Uint8Array[], nowMs: number): MapEntryExport[] {
    const table = this.tables[partitionId];
    if (table === null || table === undefined) return [];
    const out: MapEntryExport[] = [];
    for (const key of keys) {
      const index = table.find(key, indexHash(key));
      if (index >= 0 && !this.expiredAt(table, index, nowMs)) out.push(this.exportRecord(table, index));
    }
    return out;
  }

  private forEachUnderLeaves(
    partitionId: number,
    leafDepth: number,
    leaves: readonly number[],
    nowMs: number,
    visit: (table: RecordTable, index: number, leaf: number) => void,
  ): void {
    assert(Number.isInteger(leafDepth) && leafDepth >= 0 && leafDepth <= MERKLE_DEPTH_MAX, 'leaf depth out of range');
    const table = this.tables[partitionId];
    if (table === null || table === undefined || leaves.length === 0) return;
    const wanted = new Set(leaves);
    for (let index = 0; index < table.highWater; index++) {
      if (!table.isLive(index) || this.expiredAt(table, index, nowMs)) continue;
      const leaf = leafAtDepth(table.keyHash(index), leafDepth);
      if (wanted.has(leaf)) visit(table, index, leaf);
    }
  }

  private buildTree(table: RecordTable | null): MerkleTree {
    const tree = new MerkleTree(this.merkleDepth);
    if (table === null) return tree;
    for (let index = 0; index < table.highWater; index++) {
      if (table.isLive(index)) tree.add(table.keyHash(index), table.entryHash(index));
    }
    return tree;
  }

  private exportRecord(table: RecordTable, index: number): MapEntryExport {
    const view = table.view(index);
    return {
      mapName: this.name,
      key: table.key(index),
      value: view.value,
      contentType: view.contentType,
      creationTimeMs: view.creationTimeMs,
      updateTimeMs: view.updateTimeMs,
      lastAccessTimeMs: view.lastAccessTimeMs,
      version: view.version,
      hits: view.hits,
      ttlMs: view.ttlMs,
      maxIdleMs: view.maxIdleMs,
    };
  }

  private write(
    key: Uint8Array,
    partitionId: number,
    value: Uint8Array,
    contentType: string | null,
    nowMs: number,
    metadata: RecordMetadata | null,
    expiry: EntryExpiry | null = null,
  ): void {
    let table = this.tables[partitionId];
    if (table === null || table === undefined) {
      table = new RecordTable(this.types);
      this.tables[partitionId] = table;
      if (this.merkleEager) this.trees![partitionId] ??= new MerkleTree(this.merkleDepth);
    }
    table.maintain();
    const hash = indexHash(key);
    let index = this.findLive(partitionId, table, key, hash, nowMs);
    const tree = this.trees === null ? null : this.trees[partitionId] ?? null;
    if (index >= 0) {
      // The old entry hash comes from the stored bytes, before they are replaced; the tree changes
      // only once the overwrite has succeeded.
      const oldEntryHash = tree === null ? 0 : table.entryHash(index);
      table.overwrite(index, key, value, contentType, nowMs);
      if (tree !== null) tree.replace(hash, oldEntryHash, table.entryHash(index));
    } else {
      index = table.insert(key, hash, value, contentType, nowMs);
      this.entryCount++;
      if (tree !== null) tree.add(hash, table.entryHash(index));
    }
    if (metadata !== null) table.restoreMetadata(index, metadata);
    else if (expiry !== null && !isMapExpiry(expiry)) table.setExpiry(index, expiry);
    if (!this.expiring && table.hasOwnExpiry(index)) this.expiring = true;
    this.evictOverLimit(partitionId, index, nowMs);
    this.lastTable = table;
    this.lastIndex = index;
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
      this.deleteRecord(victim.partitionId, table, victim.index);
      if (victim.partitionId !== keepPartitionId) table.maintain();
    }
  }

  /** The index of the live record for `key`, removing it first if it has expired; -1 if none. */
  private findLive(partitionId: number, table: RecordTable, key: Uint8Array, hash: number, nowMs: number): number {
    const index = table.find(key, hash);
    if (index < 0 || !this.expiredAt(table, index, nowMs)) return index;
    this.deleteRecord(partitionId, table, index);
    return -1;
  }

  private expiredAt(table: RecordTable, index: number, nowMs: number): boolean {
    return this.expiring && table.isExpiredAt(index, this.expiry, nowMs);
  }

  /** Every record deletion comes through here, so the partition's tree (if any) loses the record too. */
  private deleteRecord(partitionId: number, table: RecordTable, index: number): void {
    if (this.trees !== null) this.trees[partitionId]?.remove(table.keyHash(index), table.entryHash(index));
    table.delete(index);
    this.entryCount--;
  }
}

/**
 * The in-partition index hash, independent of the partition hash (whose bits chose the partition).
 * It is also the Merkle key hash, so it is fixed across clusters: see merkle-tree.ts.
 */
function indexHash(key: Uint8Array): number {
  return merkleKeyHash(key);
}
