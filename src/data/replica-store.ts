// The data this member holds for the partitions it is a replica of, with one data version per
// partition. The owner runs operations (runOwnerOp) and gets back the backup operation to send, if
// the data changed; backups apply those in version order (applyBackup); whole partitions move as
// snapshots (exportPartition / importPartition) for migration and resync.
//
// Invariants: a partition's data version counts the writes applied to it (owner and backups agree
// on what version N means: the same N writes, in the same order); a backup applies version v only
// on top of v - 1; a queue item keeps its id on every replica, so a promoted backup serves exactly
// the items the old owner had stored and backed up.
import { OpCounts } from './op-counts.js';
import type { BackupOpWire, EntryWire, OpWire, QueueWire, WanQueueWire } from '../cluster/messages.js';
import type { MapConfig, QueueConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import { decodeWith, encodeWith } from '../cluster/protocol/schema-codec.js';
import { isMerkleDepth } from './merkle-tree.js';
import { partitionIdOfKey } from '../partition/partition-id.js';
import { MapService, type MapEntryExport } from './map-service.js';
import { ENTRY_EXPIRY_MAP, type EntryExpiry, entryPolicy, expirationTimeMs, isMapExpiry } from './expiry.js';
import { decodeMapMerge, decodeMergedRecords, encodeMergedRecords, type MapMergeBatch, type MergedRecord } from './merge-batch.js';
import { mergeWinner } from './merge-policy.js';
import { MergedItemLog } from './merged-items.js';
import { sameValue } from './value-kind.js';
import { QueueService, type PollWaiter, type QueueItem, queuePartitionKey } from './queue-service.js';

export { OP, PUT_MODE, PUT_EXPIRY_PAYLOAD, BACKUP_PUT_EXPIRY, IF_SAME_PAYLOAD, ENTRIES_READ, ENTRIES_ANSWER, QUEUE_ITEMS_ANSWER, REMOVED_ITEMS, MERKLE_NODES_REQUEST, MERKLE_NODES_ANSWER, LEAF_DIGESTS_REQUEST, LEAF_DIGESTS_ANSWER, BACKUP } from './ops.js';
import { OP, PUT_MODE, PUT_EXPIRY_PAYLOAD, BACKUP_PUT_EXPIRY, IF_SAME_PAYLOAD, ENTRIES_READ, ENTRIES_ANSWER, QUEUE_ITEMS_ANSWER, REMOVED_ITEMS, MERKLE_NODES_REQUEST, MERKLE_NODES_ANSWER, LEAF_DIGESTS_REQUEST, LEAF_DIGESTS_ANSWER, BACKUP } from './ops.js';

/**
 * Bytes one entries read or drain may answer with from one partition: half the smallest member-protocol
 * frame a member may be configured with would be too little for real maps, so the bound is the default
 * frame's half; the caller bounds the whole answer (grid.client.frame.bytes.max for a client).
 */
const PARTITION_ANSWER_BYTES_MAX = 32 * 1024 * 1024;
/** Node ids and leaves one Merkle read may name. */
const MERKLE_READ_ITEMS_MAX = 1 << 21;

/**
 * One applied map write, as the store emits it to its mutation listeners: on the owner when it runs
 * the write and on every backup when it applies it, at the same partition data version. WAN and
 * persistence consume this stream; nothing else derives changes of the data.
 * Expiry and eviction are not mutations (see docs/wan.md); migration imports and drops of whole
 * partitions are PartitionMutations.
 */
export interface MapMutation {
  readonly partitionId: number;
  /** The partition's data version after the write (owner and backups agree). */
  readonly version: number;
  readonly mapName: string;
  readonly kind: 'put' | 'remove' | 'clear';
  /** Key bytes (empty for clear); only valid during the call: copy to keep. */
  readonly key: Uint8Array;
  /** Write time, to read the stored record back with `maps.peek`. */
  readonly timeMs: number;
  /** The cluster a WAN event came from, or null for a write made in this cluster. */
  readonly origin: string | null;
  /** Emitted by the partition's owner (true) or by a backup applying the owner's write. */
  readonly owner: boolean;
  /**
   * Backups: what the owner's listeners returned for this write (carried in the backup write's
   * itemId, unused by map writes), so backups keep the WAN events their owner kept. 0 on owners.
   */
  readonly dropMask: number;
}

/** A queue item stored (offer) or removed (poll) on a replica, owner or backup. */
export interface QueueMutation {
  readonly partitionId: number;
  readonly version: number;
  readonly queueName: string;
  readonly kind: 'queueStore' | 'queueRemove' | 'queueClear';
  /** The stored item (queueStore; its value is immutable), or the removed item's id (0 for a clear). */
  readonly item: QueueItem | null;
  readonly itemId: number;
  readonly owner: boolean;
}

/**
 * A whole partition changed hands on this member: its data was replaced by a snapshot (migration,
 * resync; read it back from the store) or dropped (this member holds no replica of it any more).
 */
export interface PartitionMutation {
  readonly partitionId: number;
  readonly version: number;
  readonly kind: 'partitionImported' | 'partitionDropped';
}

export type Mutation = MapMutation | QueueMutation | PartitionMutation;

/** Returns a mask the owner's backups get with a map write (WAN: the publishers that did not queue it); 0 otherwise. */
export type MutationListener = (m: Mutation) => number;

/**
 * Per-partition state kept beside the data by another room (the WAN event queues) that must travel
 * with the partition: exported into its snapshots, replaced on import, dropped with it.
 */
export interface PartitionSidecar {
  exportPartition(partitionId: number): WanQueueWire[];
  importPartition(partitionId: number, queues: readonly WanQueueWire[]): void;
  dropPartition(partitionId: number): void;
}

export type OpOutcome =
  | { readonly kind: 'value'; readonly value: Buffer | null; readonly contentType: string | null }
  | { readonly kind: 'flag'; readonly flag: boolean }
  | { readonly kind: 'count'; readonly count: number }
  | { readonly kind: 'done' };

// Outcomes without data are shared (frozen, never mutated): a write allocates none.
const FLAG_TRUE: OpOutcome = Object.freeze({ kind: 'flag', flag: true });
const FLAG_FALSE: OpOutcome = Object.freeze({ kind: 'flag', flag: false });
const DONE: OpOutcome = Object.freeze({ kind: 'done' });

export interface OwnerResult {
  readonly outcome: OpOutcome;
  /** What the backups must apply, or null when nothing changed. */
  readonly backup: BackupOpWire | null;
  /** The kind and name of the structure written (whose backup count applies). */
  readonly kind: 'map' | 'queue';
  readonly name: string;
}

export interface ReplicaStoreOptions {
  readonly partitionCount: number;
  readonly resolveMapConfig: (name: string) => MapConfig;
  readonly resolveQueueConfig: (name: string) => QueueConfig;
  readonly random: Random;
  readonly waitersMax: number;
}

const EMPTY = Buffer.alloc(0);
const VERSION_JUMP = 2 ** 20;

export class ReplicaStore {
  readonly maps: MapService;
  readonly queues: QueueService;
  private readonly versions: number[];
  /**
   * Per partition, the highest data version its copy here has had since this member started,
   * including copies since dropped or replaced. An owner's stream never reuses a version (see
   * jumpVersion).
   */
  private readonly highest: number[];
  readonly partitionCount: number;
  /** Queue name → partition, so a partition's queues can be listed without hashing every name again. */
  private readonly queuePartitions = new Map<string, number>();
  /** Owner writes per map and queue, for the console's rates. */
  readonly ops = new OpCounts();
  /** Queue items handed back by a merging side, so a second replica's copy is not stored again. */
  private readonly mergedItems = new MergedItemLog();
  /** Receives every applied change (see Mutation); null = nobody listens (no cost). */
  private mutationListener: MutationListener | null = null;
  private readonly listeners = new Map<string, MutationListener>();
  /**
   * WAN target, per partition: the highest source partition version applied from each source
   * stream ("clusterId/replication/publisherId"). A WAN write older than it is skipped (see
   * wanGuard). Kept by backups from the writes they apply and carried by snapshots, so it holds
   * whichever member of this cluster received the batch, and after promotions and migrations.
   */
  private readonly wanApplied: (Map<string, number> | undefined)[] = [];
  /** State that travels with each partition (the WAN queues), or null. */
  sidecar: PartitionSidecar | null = null;

  constructor(options: ReplicaStoreOptions) {
    this.partitionCount = options.partitionCount;
    this.maps = new MapService({ partitionCount: options.partitionCount, resolveConfig: options.resolveMapConfig, random: options.random });
    this.queues = new QueueService({ resolveConfig: options.resolveQueueConfig, waitersMax: options.waitersMax });
    this.versions = new Array<number>(options.partitionCount).fill(0);
    this.highest = new Array<number>(options.partitionCount).fill(0);
  }

  /** Remembers the version a copy had before it is dropped or replaced. */
  private noteHighest(partitionId: number): void {
    const v = this.versions[partitionId] ?? 0;
    if (v > (this.highest[partitionId] ?? 0)) this.highest[partitionId] = v;
  }

  version(partitionId: number): number {
    return this.versions[partitionId] ?? 0;
  }

  /**
   * Sets (or with null removes) the listener of one consumer of the mutation stream ('wan',
   * 'persistence'). Every listener sees every mutation, in the order they were set; the drop masks
   * they return are combined.
   */
  setMutationListener(consumer: string, listener: MutationListener | null): void {
    if (listener === null) this.listeners.delete(consumer);
    else this.listeners.set(consumer, listener);
    const all = [...this.listeners.values()];
    this.mutationListener = all.length === 0 ? null : all.length === 1 ? (all[0] as MutationListener) : (m) => {
      let mask = 0;
      for (const l of all) mask |= l(m);
      return mask;
    };
  }

  queuePartition(name: string): number {
    let p = this.queuePartitions.get(name);
    if (p === undefined) {
      p = partitionIdOfKey(Buffer.from(queuePartitionKey(name), 'utf8'), this.partitionCount);
      if (this.queuePartitions.size > 100_000) this.queuePartitions.clear();
      this.queuePartitions.set(name, p);
    }
    return p;
  }

  /**
   * Runs an operation as the partition's owner. Queue polls that must wait are not handled here:
   * the caller uses pollOrWait with its waiter. Throws GridError for refused input.
   */
  runOwnerOp(partitionId: number, op: OpWire, nowMs: number): OwnerResult {
    const key = op.key;
    switch (op.code) {
      case OP.MAP_GET: {
        const v = this.maps.get(op.name, key, partitionId, nowMs);
        return { outcome: { kind: 'value', value: v === null ? null : v.value, contentType: v?.contentType ?? null }, backup: null, kind: 'map', name: op.name };
      }
      case OP.MAP_PUT:
      case OP.MAP_PUT_IF_ABSENT: {
        if (op.code === OP.MAP_PUT_IF_ABSENT && this.maps.get(op.name, key, partitionId, nowMs) !== null) {
          return { outcome: FLAG_FALSE, backup: null, kind: 'map', name: op.name };
        }
        this.maps.put(op.name, key, partitionId, op.value, op.contentType, nowMs);
        const r = this.changed(partitionId, FLAG_TRUE, 'map', op.name, BACKUP.MAP_PUT, key, op.value, op.contentType, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'put', key, nowMs, null, true));
        return r;
      }
      case OP.MAP_GET_AND_PUT:
      case OP.MAP_PUT_IF_ABSENT_GET: {
        // The old value's bytes stay valid after the write: a slab never writes bytes twice.
        const old = this.maps.peek(op.name, key, partitionId, nowMs);
        const previous: OpOutcome = { kind: 'value', value: old === null ? null : old.value, contentType: old === null ? null : old.contentType };
        if (op.code === OP.MAP_PUT_IF_ABSENT_GET && old !== null) return { outcome: previous, backup: null, kind: 'map', name: op.name };
        this.maps.put(op.name, key, partitionId, op.value, op.contentType, nowMs);
        const r = this.changed(partitionId, previous, 'map', op.name, BACKUP.MAP_PUT, key, op.value, op.contentType, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'put', key, nowMs, null, true));
        return r;
      }
      case OP.MAP_PUT_EXPIRY: {
        const p = decodeWith(PUT_EXPIRY_PAYLOAD, op.value, 'put with expiry');
        if (p.mode < PUT_MODE.SET || p.mode > PUT_MODE.PUT_IF_ABSENT || !isEntryExpiryMs(p.ttlMs) || !isEntryExpiryMs(p.maxIdleMs)) {
          throw new GridError('ERR_PROTOCOL_MALFORMED', `put with expiry: mode ${p.mode}, time-to-live ${p.ttlMs} ms, max-idle ${p.maxIdleMs} ms`);
        }
        const old = p.mode === PUT_MODE.SET ? null : this.maps.peek(op.name, key, partitionId, nowMs);
        const previous: OpOutcome = { kind: 'value', value: old === null ? null : old.value, contentType: old === null ? null : old.contentType };
        if (p.mode === PUT_MODE.PUT_IF_ABSENT && old !== null) return { outcome: previous, backup: null, kind: 'map', name: op.name };
        const expiry: EntryExpiry = { ttlMs: p.ttlMs, maxIdleMs: p.maxIdleMs };
        this.maps.put(op.name, key, partitionId, p.value, op.contentType, nowMs, expiry);
        const own = !isMapExpiry(expiry);
        const backupValue = own ? encodeWith(BACKUP_PUT_EXPIRY, { ttlMs: p.ttlMs, maxIdleMs: p.maxIdleMs, value: p.value }, 64 + p.value.length) : p.value;
        const r = this.changed(partitionId, previous, 'map', op.name, own ? BACKUP.MAP_PUT_EXPIRY : BACKUP.MAP_PUT, key, backupValue, op.contentType, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'put', key, nowMs, null, true));
        return r;
      }
      case OP.MAP_REPLACE_GET: {
        const old = this.maps.peek(op.name, key, partitionId, nowMs);
        if (old === null) return { outcome: { kind: 'value', value: null, contentType: null }, backup: null, kind: 'map', name: op.name };
        return this.putAnswering(partitionId, op.name, key, op.value, op.contentType, { kind: 'value', value: old.value, contentType: old.contentType }, nowMs);
      }
      case OP.MAP_REPLACE_IF_SAME: {
        const p = decodeWith(IF_SAME_PAYLOAD, op.value, 'replaceIfSame payload');
        const old = this.maps.peek(op.name, key, partitionId, nowMs);
        if (old === null || !sameValue(old.value, old.contentType, p.expected, p.expectedType)) return { outcome: FLAG_FALSE, backup: null, kind: 'map', name: op.name };
        return this.putAnswering(partitionId, op.name, key, p.value, op.contentType, FLAG_TRUE, nowMs);
      }
      case OP.MAP_REMOVE_IF_SAME: {
        const old = this.maps.peek(op.name, key, partitionId, nowMs);
        if (old === null || !sameValue(old.value, old.contentType, op.value, op.contentType) || !this.maps.remove(op.name, key, partitionId, nowMs)) {
          return { outcome: FLAG_FALSE, backup: null, kind: 'map', name: op.name };
        }
        const r = this.changed(partitionId, FLAG_TRUE, 'map', op.name, BACKUP.MAP_REMOVE, key, EMPTY, null, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'remove', key, nowMs, null, true));
        return r;
      }
      case OP.MAP_ENTRIES_PARTITION: {
        const what = op.value.length === 1 ? (op.value[0] as number) : 0;
        if (what !== ENTRIES_READ.KEYS && what !== ENTRIES_READ.VALUES && what !== ENTRIES_READ.ENTRIES) {
          throw new GridError('ERR_PROTOCOL_MALFORMED', `entries read: unknown selection ${what}`);
        }
        const entries: { key: Uint8Array; value: Uint8Array; contentType: string | null }[] = [];
        let bytes = 0;
        for (const e of this.maps.entriesInPartition(op.name, partitionId, nowMs)) {
          const k = what === ENTRIES_READ.VALUES ? EMPTY : e.key;
          const v = what === ENTRIES_READ.KEYS ? EMPTY : e.value;
          bytes += k.length + v.length + 16 + (e.contentType?.length ?? 0);
          if (bytes > PARTITION_ANSWER_BYTES_MAX) {
            throw new GridError('ERR_DATA_ANSWER_TOO_LARGE', `map '${op.name}' holds more than ${PARTITION_ANSWER_BYTES_MAX} bytes in partition ${partitionId}: too much to read in one answer`);
          }
          entries.push({ key: k, value: v, contentType: what === ENTRIES_READ.KEYS ? null : e.contentType });
        }
        return { outcome: { kind: 'value', value: encodeWith(ENTRIES_ANSWER, { entries }, 64 + bytes), contentType: null }, backup: null, kind: 'map', name: op.name };
      }
      case OP.QUEUE_DRAIN: {
        const max = op.timeoutMs === 0 ? Infinity : op.timeoutMs;
        const taken: QueueItem[] = [];
        let bytes = 0;
        while (taken.length < max) {
          const head = this.queues.peek(op.name);
          if (head === null) break;
          bytes += head.value.length + 16 + (head.contentType?.length ?? 0);
          // At least one item always goes, so a drain makes progress whatever the items' sizes.
          if (taken.length > 0 && bytes > PARTITION_ANSWER_BYTES_MAX) break;
          taken.push(this.queues.poll(op.name) as QueueItem);
        }
        const value = encodeWith(QUEUE_ITEMS_ANSWER, { items: taken.map((i) => ({ value: i.value, contentType: i.contentType })) }, 64 + bytes);
        if (taken.length === 0) return { outcome: { kind: 'value', value, contentType: null }, backup: null, kind: 'queue', name: op.name };
        const removed = encodeWith(REMOVED_ITEMS, { items: taken.map((i) => ({ id: i.id, value: i.value })) }, 64 + bytes);
        const r = this.changed(partitionId, { kind: 'value', value, contentType: null }, 'queue', op.name, BACKUP.QUEUE_REMOVE_MANY, EMPTY, removed, null, 0, nowMs);
        for (const i of taken) this.emitQueue(partitionId, op.name, 'queueRemove', null, i.id, true);
        return r;
      }
      case OP.QUEUE_CLEAR: {
        const held = this.queues.size(op.name);
        if (held === 0) return { outcome: { kind: 'count', count: 0 }, backup: null, kind: 'queue', name: op.name };
        this.queues.dropItems(op.name);
        const r = this.changed(partitionId, { kind: 'count', count: held }, 'queue', op.name, BACKUP.QUEUE_CLEAR, EMPTY, EMPTY, null, 0, nowMs);
        this.emitQueue(partitionId, op.name, 'queueClear', null, 0, true);
        return r;
      }
      case OP.MAP_SIZE_PARTITION:
        return { outcome: { kind: 'count', count: this.maps.sizeInPartition(op.name, partitionId, nowMs) }, backup: null, kind: 'map', name: op.name };
      case OP.MAP_GET_AND_REMOVE: {
        const old = this.maps.peek(op.name, key, partitionId, nowMs);
        if (old === null || !this.maps.remove(op.name, key, partitionId, nowMs)) return { outcome: { kind: 'value', value: null, contentType: null }, backup: null, kind: 'map', name: op.name };
        const r = this.changed(partitionId, { kind: 'value', value: old.value, contentType: old.contentType }, 'map', op.name, BACKUP.MAP_REMOVE, key, EMPTY, null, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'remove', key, nowMs, null, true));
        return r;
      }
      case OP.MAP_REMOVE:
      case OP.WAN_MAP_REMOVE: {
        const wan = op.code === OP.WAN_MAP_REMOVE;
        if (wan && this.staleWan(partitionId, op.contentType)) return { outcome: DONE, backup: null, kind: 'map', name: op.name };
        const removed = this.maps.remove(op.name, key, partitionId, nowMs);
        if (wan) this.noteWan(partitionId, op.contentType);
        if (!removed) return { outcome: DONE, backup: null, kind: 'map', name: op.name };
        const r = this.changed(partitionId, DONE, 'map', op.name, wan ? BACKUP.WAN_MAP_REMOVE : BACKUP.MAP_REMOVE, key, wan ? op.value : EMPTY, wan ? op.contentType : null, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'remove', key, nowMs, wan ? originOf(op.value) : null, true));
        return r;
      }
      case OP.MAP_CLEAR_PARTITION:
      case OP.WAN_MAP_CLEAR: {
        // A clear is a write even when the partition held nothing of the map: WAN replicates it (the
        // target may hold entries this cluster never had), so it needs a version and its backups.
        const wan = op.code === OP.WAN_MAP_CLEAR;
        if (wan && this.staleWan(partitionId, op.contentType)) return { outcome: DONE, backup: null, kind: 'map', name: op.name };
        this.maps.clearInPartition(op.name, partitionId);
        if (wan) this.noteWan(partitionId, op.contentType);
        const r = this.changed(partitionId, DONE, 'map', op.name, wan ? BACKUP.WAN_MAP_CLEAR : BACKUP.MAP_CLEAR, EMPTY, wan ? op.value : EMPTY, wan ? op.contentType : null, 0, nowMs);
        if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, op.name, 'clear', EMPTY, nowMs, wan ? originOf(op.value) : null, true));
        return r;
      }
      case OP.QUEUE_OFFER: {
        const r = this.queues.offerItem(op.name, op.value, op.contentType);
        if (r === 'full') return { outcome: FLAG_FALSE, backup: null, kind: 'queue', name: op.name };
        if (r === 'delivered') return { outcome: FLAG_TRUE, backup: null, kind: 'queue', name: op.name };
        const stored = this.changed(partitionId, FLAG_TRUE, 'queue', op.name, BACKUP.QUEUE_STORE, EMPTY, r.value, r.contentType, r.id, nowMs);
        this.emitQueue(partitionId, op.name, 'queueStore', r, r.id, true);
        return stored;
      }
      case OP.QUEUE_POLL: {
        const item = this.queues.poll(op.name);
        if (item === null) return { outcome: { kind: 'value', value: null, contentType: null }, backup: null, kind: 'queue', name: op.name };
        return this.polled(partitionId, op.name, item, nowMs);
      }
      case OP.QUEUE_PEEK: {
        const head = this.queues.peek(op.name);
        return { outcome: { kind: 'value', value: head === null ? null : head.value, contentType: head === null ? null : head.contentType }, backup: null, kind: 'queue', name: op.name };
      }
      case OP.QUEUE_SIZE:
        return { outcome: { kind: 'count', count: this.queues.size(op.name) }, backup: null, kind: 'queue', name: op.name };
      case OP.QUEUE_MERGE_ADD: {
        this.queuePartitions.set(op.name, partitionId);
        const id = mergeItemId(op.key);
        // Already here by that id, or handed back a moment ago by another replica of the merging side.
        if (this.queues.hasItem(op.name, id, op.value) || (id >= 0 && this.mergedItems.storedAs(op.name, id, op.value, nowMs) !== null)) {
          return { outcome: FLAG_FALSE, backup: null, kind: 'queue', name: op.name };
        }
        const r = this.queues.offerItem(op.name, op.value, op.contentType);
        if (r === 'full') return { outcome: FLAG_FALSE, backup: null, kind: 'queue', name: op.name };
        if (id >= 0) this.mergedItems.remember(op.name, id, op.value, r === 'delivered' ? -1 : r.id, nowMs);
        if (r === 'delivered') return { outcome: FLAG_TRUE, backup: null, kind: 'queue', name: op.name };
        const stored = this.changed(partitionId, FLAG_TRUE, 'queue', op.name, BACKUP.QUEUE_STORE, EMPTY, r.value, r.contentType, r.id, nowMs);
        this.emitQueue(partitionId, op.name, 'queueStore', r, r.id, true);
        return stored;
      }
      case OP.QUEUE_MERGE_REMOVE: {
        let id = mergeItemId(op.key);
        if (!this.queues.hasItem(op.name, id, op.value) && id >= 0) {
          // A poll the merging side made of an item another of its replicas handed back first: that
          // copy was stored here under a new id.
          const stored = this.mergedItems.storedAs(op.name, id, op.value, nowMs);
          if (stored !== null && stored >= 0) id = stored;
        }
        if (!this.queues.hasItem(op.name, id, op.value)) return { outcome: FLAG_FALSE, backup: null, kind: 'queue', name: op.name };
        this.queues.removeReplica(op.name, id);
        const removed = this.changed(partitionId, FLAG_TRUE, 'queue', op.name, BACKUP.QUEUE_REMOVE, EMPTY, op.value, null, id, nowMs);
        this.emitQueue(partitionId, op.name, 'queueRemove', null, id, true);
        return removed;
      }
      case OP.MAP_MERGE:
        return this.mergeEntries(partitionId, op.name, decodeMapMerge(op.value), nowMs, null);
      case OP.WAN_MAP_MERGE: {
        if (this.staleWan(partitionId, op.contentType)) return { outcome: { kind: 'count', count: 0 }, backup: null, kind: 'map', name: op.name };
        const r = this.mergeEntries(partitionId, op.name, decodeMapMerge(op.value), nowMs, originOf(op.key), op.contentType);
        this.noteWan(partitionId, op.contentType);
        return r;
      }
      case OP.WAN_MERKLE_NODES: {
        const req = decodeWith(MERKLE_NODES_REQUEST, op.value, 'merkle nodes request');
        if (req.nodes.length > MERKLE_READ_ITEMS_MAX) throw new GridError('ERR_PROTOCOL_MALFORMED', `merkle nodes request: ${req.nodes.length} nodes`);
        const tree = this.maps.merkleTree(op.name, partitionId, nowMs);
        const hashes: number[] = [];
        for (const n of req.nodes) {
          if (n >= tree.nodeCount) throw new GridError('ERR_PROTOCOL_MALFORMED', `merkle nodes request: node ${n} is not in a tree of depth ${tree.depth}`);
          hashes.push(tree.node(n));
        }
        const value = encodeWith(MERKLE_NODES_ANSWER, { depth: tree.depth, hashes }, 64 + hashes.length * 4);
        return { outcome: { kind: 'value', value, contentType: null }, backup: null, kind: 'map', name: op.name };
      }
      case OP.WAN_LEAF_DIGESTS: {
        const req = decodeWith(LEAF_DIGESTS_REQUEST, op.value, 'leaf digests request');
        if (!isMerkleDepth(req.depth) || req.leaves.length > MERKLE_READ_ITEMS_MAX || req.leaves.some((l) => l >= 2 ** req.depth)) {
          throw new GridError('ERR_PROTOCOL_MALFORMED', `leaf digests request: bad depth ${req.depth} or leaves`);
        }
        const digests = this.maps.leafDigests(op.name, partitionId, req.depth, req.leaves, nowMs);
        const value = encodeWith(LEAF_DIGESTS_ANSWER, { keyHashes: digests.map((d) => d.keyHash | 0), entryHashes: digests.map((d) => d.entryHash | 0) }, 64 + digests.length * 8);
        return { outcome: { kind: 'value', value, contentType: null }, backup: null, kind: 'map', name: op.name };
      }
      default:
        throw new GridError('ERR_PROTOCOL_MALFORMED', `unknown operation code ${op.code}`);
    }
  }

  /**
   * Applies a merge policy to each merging entry against the entry held here, one entry at a time
   * with nothing in between. A stored entry keeps the merging entry's history (creation, last
   * update, last access, hits); its version is one above the entry it replaced, or the merging
   * entry's if that is higher. Answers how many entries were stored; the backups get those records
   * in one write. Sizes are checked first, so a refused batch changes nothing.
   */
  private mergeEntries(partitionId: number, name: string, batch: MapMergeBatch, nowMs: number, origin: string | null, guard: string | null = null): OwnerResult {
    for (const e of batch.entries) this.maps.checkSizes(e.key, e.value);
    const expiry = this.maps.expiryPolicy(name);
    const stored: MergedRecord[] = [];
    for (const e of batch.entries) {
      const existing = this.maps.peek(name, e.key, partitionId, nowMs);
      const existingStats =
        existing === null
          ? null
          : { updateTimeMs: existing.updateTimeMs, lastAccessTimeMs: existing.lastAccessTimeMs, hits: existing.hits, expirationTimeMs: expirationTimeMs(entryPolicy(expiry, existing.ttlMs, existing.maxIdleMs), existing.updateTimeMs, existing.lastAccessTimeMs) };
      if (mergeWinner(batch.policy, e, existingStats) === 'existing') continue;
      const record: MergedRecord = {
        key: e.key,
        value: e.value,
        contentType: e.contentType,
        creationTimeMs: e.creationTimeMs,
        updateTimeMs: e.updateTimeMs,
        lastAccessTimeMs: e.lastAccessTimeMs,
        hits: e.hits,
        version: existing === null ? e.version : Math.max(existing.version + 1, e.version),
        ttlMs: e.ttlMs,
        maxIdleMs: e.maxIdleMs,
      };
      this.maps.importRecord(partitionId, name, record.key, record.value, record.contentType, record, nowMs);
      stored.push(record);
    }
    if (stored.length === 0) return { outcome: { kind: 'count', count: 0 }, backup: null, kind: 'map', name };
    const originBytes = origin === null ? EMPTY : Buffer.from(origin, 'utf8');
    const r = this.changed(partitionId, { kind: 'count', count: stored.length }, 'map', name, origin === null ? BACKUP.MAP_MERGE : BACKUP.WAN_MAP_MERGE, originBytes, encodeMergedRecords(stored), origin === null ? null : guard, 0, nowMs);
    if (this.mutationListener !== null) {
      // One backup write carries every record: a publisher counts as dropping only if it dropped them all.
      let mask = -1;
      for (const rec of stored) mask &= this.emit(partitionId, name, 'put', rec.key, nowMs, origin, true);
      withDropMask(r, mask);
    }
    return r;
  }

  /** Emits a queue mutation (nothing when nobody listens). */
  private emitQueue(partitionId: number, queueName: string, kind: QueueMutation['kind'], item: QueueItem | null, itemId: number, owner: boolean): void {
    this.mutationListener?.({ partitionId, version: this.version(partitionId), queueName, kind, item, itemId, owner });
  }

  /** Emits one map mutation; returns the listener's drop mask (owner writes; 0 when nobody listens). */
  private emit(partitionId: number, mapName: string, kind: MapMutation['kind'], key: Uint8Array, timeMs: number, origin: string | null, owner: boolean, dropMask = 0): number {
    return this.mutationListener?.({ partitionId, version: this.version(partitionId), mapName, kind, key, timeMs, origin, owner, dropMask }) ?? 0;
  }

  /** A poll took `item` (now, or handed to a waiter later): bump the version and describe the backup. */
  polled(partitionId: number, name: string, item: QueueItem, nowMs: number): OwnerResult {
    // The value travels too: a split-brain merge replays an unconfirmed poll by id and value.
    const r = this.changed(partitionId, { kind: 'value', value: item.value, contentType: item.contentType }, 'queue', name, BACKUP.QUEUE_REMOVE, EMPTY, item.value, null, item.id, nowMs);
    this.emitQueue(partitionId, name, 'queueRemove', null, item.id, true);
    return r;
  }

  /** Whether a WAN write (its guard, see wanGuard) is older than what this partition applied from its stream. */
  private staleWan(partitionId: number, guard: string | null): boolean {
    const g = parseWanGuard(guard);
    if (g === null) return false;
    const applied = this.wanApplied[partitionId]?.get(g.source);
    return applied !== undefined && g.version < applied;
  }

  private noteWan(partitionId: number, guard: string | null): void {
    const g = parseWanGuard(guard);
    if (g === null || g.sync) return; // sync entries are checked, never raise the mark
    let m = this.wanApplied[partitionId];
    if (m === undefined) this.wanApplied[partitionId] = m = new Map();
    if (g.version > (m.get(g.source) ?? -1)) {
      if (!m.has(g.source) && m.size >= WAN_SOURCES_MAX) m.clear();
      m.set(g.source, g.version);
    }
  }

  /** The partition's WAN marks, for snapshots. */
  wanMarks(partitionId: number): { source: string; version: number }[] {
    return [...(this.wanApplied[partitionId] ?? new Map<string, number>())].map(([source, version]) => ({ source, version }));
  }

  /** Registers a waiting poll on the owner; returns an item at once if one is there. */
  pollOrWait(name: string, waiter: PollWaiter): QueueItem | null {
    return this.queues.pollOrWait(name, waiter);
  }

  /** A map put whose answer is `outcome` (the old value, or a flag), backed up like every put. */
  private putAnswering(partitionId: number, name: string, key: Uint8Array, value: Uint8Array, contentType: string | null, outcome: OpOutcome, nowMs: number): OwnerResult {
    this.maps.put(name, key, partitionId, value, contentType, nowMs);
    const r = this.changed(partitionId, outcome, 'map', name, BACKUP.MAP_PUT, key, value, contentType, 0, nowMs);
    if (this.mutationListener !== null) withDropMask(r, this.emit(partitionId, name, 'put', key, nowMs, null, true));
    return r;
  }

  private changed(
    partitionId: number,
    outcome: OpOutcome,
    kind: 'map' | 'queue',
    name: string,
    code: number,
    key: Uint8Array,
    value: Uint8Array,
    contentType: string | null,
    itemId: number,
    nowMs: number,
  ): OwnerResult {
    this.versions[partitionId] = (this.versions[partitionId] ?? 0) + 1;
    this.ops.count(kind, name, code);
    return { outcome, backup: { code, name, key, value, contentType, itemId, timeMs: nowMs }, kind, name };
  }

  /**
   * Backup side. Returns 'applied' (now at `version`), 'duplicate' (already had it), or 'gap'
   * (missed a write: the caller asks the owner for a resync and does not ack).
   */
  applyBackup(partitionId: number, version: number, op: BackupOpWire): 'applied' | 'duplicate' | 'gap' {
    const current = this.version(partitionId);
    if (version <= current) return 'duplicate';
    if (version !== current + 1) return 'gap';
    this.applyBackupOp(partitionId, op);
    this.versions[partitionId] = version;
    if (this.mutationListener !== null) this.emitBackup(partitionId, op);
    return 'applied';
  }

  /** The mutations a backup write stands for (the same ones its owner emitted). */
  private emitBackup(partitionId: number, op: BackupOpWire): void {
    switch (op.code) {
      case BACKUP.MAP_PUT:
      case BACKUP.MAP_PUT_EXPIRY:
        return void this.emit(partitionId, op.name, 'put', op.key, op.timeMs, null, false, op.itemId);
      case BACKUP.MAP_REMOVE:
        return void this.emit(partitionId, op.name, 'remove', op.key, op.timeMs, null, false, op.itemId);
      case BACKUP.WAN_MAP_REMOVE:
        return void this.emit(partitionId, op.name, 'remove', op.key, op.timeMs, originOf(op.value), false, op.itemId);
      case BACKUP.MAP_CLEAR:
        return void this.emit(partitionId, op.name, 'clear', EMPTY, op.timeMs, null, false, op.itemId);
      case BACKUP.WAN_MAP_CLEAR:
        return void this.emit(partitionId, op.name, 'clear', EMPTY, op.timeMs, originOf(op.value), false, op.itemId);
      case BACKUP.MAP_MERGE:
      case BACKUP.WAN_MAP_MERGE: {
        const origin = op.code === BACKUP.WAN_MAP_MERGE ? originOf(op.key) : null;
        for (const r of decodeMergedRecords(op.value)) this.emit(partitionId, op.name, 'put', r.key, op.timeMs, origin, false, op.itemId);
        return;
      }
      case BACKUP.QUEUE_STORE:
        return this.emitQueue(partitionId, op.name, 'queueStore', { id: op.itemId, value: Buffer.from(op.value.buffer, op.value.byteOffset, op.value.length), contentType: op.contentType }, op.itemId, false);
      case BACKUP.QUEUE_REMOVE:
        return this.emitQueue(partitionId, op.name, 'queueRemove', null, op.itemId, false);
      case BACKUP.QUEUE_REMOVE_MANY:
        for (const i of removedItems(op.value)) this.emitQueue(partitionId, op.name, 'queueRemove', null, i.id, false);
        return;
      case BACKUP.QUEUE_CLEAR:
        return this.emitQueue(partitionId, op.name, 'queueClear', null, 0, false);
      default:
        return;
    }
  }

  private applyBackupOp(partitionId: number, op: BackupOpWire): void {
    switch (op.code) {
      case BACKUP.MAP_PUT:
        this.maps.put(op.name, op.key, partitionId, op.value, op.contentType, op.timeMs);
        return;
      case BACKUP.MAP_PUT_EXPIRY: {
        // Views of the write's bytes: the store copies what it keeps.
        const p = decodeWith(BACKUP_PUT_EXPIRY, op.value, 'backup put with expiry', { views: true });
        this.maps.put(op.name, op.key, partitionId, p.value, op.contentType, op.timeMs, { ttlMs: p.ttlMs, maxIdleMs: p.maxIdleMs });
        return;
      }
      case BACKUP.MAP_REMOVE:
      case BACKUP.WAN_MAP_REMOVE:
        this.maps.remove(op.name, op.key, partitionId, op.timeMs);
        if (op.code === BACKUP.WAN_MAP_REMOVE) this.noteWan(partitionId, op.contentType);
        return;
      case BACKUP.MAP_CLEAR:
      case BACKUP.WAN_MAP_CLEAR:
        this.maps.clearInPartition(op.name, partitionId);
        if (op.code === BACKUP.WAN_MAP_CLEAR) this.noteWan(partitionId, op.contentType);
        return;
      case BACKUP.QUEUE_STORE:
        this.queues.storeReplica(op.name, { id: op.itemId, value: Buffer.from(op.value), contentType: op.contentType });
        this.queuePartitions.set(op.name, partitionId);
        return;
      case BACKUP.QUEUE_REMOVE:
        this.queues.removeReplica(op.name, op.itemId);
        return;
      case BACKUP.QUEUE_REMOVE_MANY:
        for (const i of removedItems(op.value)) this.queues.removeReplica(op.name, i.id);
        return;
      case BACKUP.QUEUE_CLEAR:
        this.queues.dropItems(op.name);
        return;
      case BACKUP.MAP_MERGE:
      case BACKUP.WAN_MAP_MERGE:
        for (const r of decodeMergedRecords(op.value)) this.maps.importRecord(partitionId, op.name, r.key, r.value, r.contentType, r, op.timeMs);
        if (op.code === BACKUP.WAN_MAP_MERGE) this.noteWan(partitionId, op.contentType);
        return;
      default:
        throw new GridError('ERR_PROTOCOL_MALFORMED', `unknown backup operation code ${op.code}`);
    }
  }

  /** Names of the queues held in a partition. */
  queuesIn(partitionId: number): string[] {
    return this.queues.queueNames().filter((name) => this.queuePartition(name) === partitionId);
  }

  /** A consistent copy of one partition, taken now (the entries' buffers are immutable views). */
  exportPartition(partitionId: number, nowMs: number): { version: number; entries: EntryWire[]; queues: QueueWire[]; wan: WanQueueWire[]; wanMarks: { source: string; version: number }[] } {
    const entries: EntryWire[] = [];
    for (const e of this.maps.exportPartition(partitionId, nowMs)) entries.push(toEntryWire(e));
    const queues: QueueWire[] = [];
    for (const name of this.queuesIn(partitionId)) {
      const q = this.queues.exportQueue(name);
      if (q !== null && q.items.length > 0) queues.push({ name, nextItemId: q.nextItemId, items: q.items.map((i) => ({ id: i.id, value: i.value, contentType: i.contentType })) });
    }
    return { version: this.version(partitionId), entries, queues, wan: this.sidecar?.exportPartition(partitionId) ?? [], wanMarks: this.wanMarks(partitionId) };
  }

  /** Replaces a partition's data (and its WAN queues) with a snapshot at `version`. */
  importPartition(partitionId: number, version: number, entries: readonly EntryWire[], queues: readonly QueueWire[], nowMs: number, wan: readonly WanQueueWire[] = [], wanMarks: readonly { source: string; version: number }[] = []): void {
    this.maps.clearPartition(partitionId);
    for (const name of this.queuesIn(partitionId)) {
      this.queues.dropItems(name);
      this.mergedItems.forgetQueue(name);
    }
    for (const e of entries) this.maps.importEntry(partitionId, fromEntryWire(e), nowMs);
    for (const q of queues) {
      this.queuePartitions.set(q.name, partitionId);
      this.queues.restoreQueue(q.name, q.items.map((i) => ({ id: i.id, value: Buffer.from(i.value), contentType: i.contentType })), q.nextItemId);
    }
    this.noteHighest(partitionId);
    this.versions[partitionId] = version;
    this.wanApplied[partitionId] = wanMarks.length === 0 ? undefined : new Map(wanMarks.map((m) => [m.source, m.version]));
    this.sidecar?.importPartition(partitionId, wan);
    this.mutationListener?.({ partitionId, version, kind: 'partitionImported' });
  }

  /** Forgets a partition this member no longer holds a replica of. Waiting polls are returned to the caller. */
  dropPartition(partitionId: number): PollWaiter[] {
    this.maps.clearPartition(partitionId);
    const waiters: PollWaiter[] = [];
    for (const name of this.queuesIn(partitionId)) {
      waiters.push(...this.queues.takeWaiters(name));
      this.queues.dropItems(name);
      this.mergedItems.forgetQueue(name);
    }
    this.noteHighest(partitionId);
    this.versions[partitionId] = 0;
    this.wanApplied[partitionId] = undefined;
    this.sidecar?.dropPartition(partitionId);
    this.mutationListener?.({ partitionId, version: 0, kind: 'partitionDropped' });
    return waiters;
  }

  /** Sets a partition's data version as a persisted log says it was (recovery only). */
  restoreVersion(partitionId: number, version: number): void {
    this.noteHighest(partitionId);
    this.versions[partitionId] = version;
  }

  /**
   * A member that just became a partition's owner jumps its data version far ahead, so every
   * backup sees a gap on the next write and resyncs from it: a backup that had writes this member
   * missed can never mistake new writes for ones it already holds. It jumps from the highest version
   * the partition ever had here, not only the current copy's: a copy this member dropped (not
   * listed) or replaced can live on in a backup that followed its stream, and a new stream that
   * started again from a lower version would look older than that copy to it, which kept the old
   * copy and never confirmed a migration (seed 3012292: an acknowledged write lost when the owner
   * then crashed).
   */
  jumpVersion(partitionId: number): void {
    this.versions[partitionId] = Math.max(this.version(partitionId), this.highest[partitionId] ?? 0) + VERSION_JUMP;
  }
}

/** Source streams a partition remembers WAN marks for (a bound; over it the marks start again). */
const WAN_SOURCES_MAX = 256;

/**
 * The ordering guard a WAN write carries (OpWire.contentType, unused by WAN writes): `e<version>|<source>`
 * for events (version = the highest source partition version among them), `s<version>|<source>`
 * for sync entries (the version of the snapshot), source = "clusterId/replication/publisherId".
 */
export function wanGuard(sync: boolean, version: number, source: string): string {
  return `${sync ? 's' : 'e'}${version}|${source}`;
}

function parseWanGuard(guard: string | null): { sync: boolean; version: number; source: string } | null {
  if (guard === null || guard.length < 3) return null;
  const bar = guard.indexOf('|');
  const kind = guard[0];
  const version = Number(guard.slice(1, bar));
  if (bar < 2 || (kind !== 'e' && kind !== 's') || !Number.isSafeInteger(version) || version < 0) return null;
  return { sync: kind === 's', version, source: guard.slice(bar + 1) };
}

/** Puts the owner's drop mask into the backup write (map writes leave itemId unused). */
function withDropMask(r: OwnerResult, mask: number): void {
  if (r.backup !== null && mask !== 0) (r.backup as { itemId: number }).itemId = mask >>> 0;
}

/** The items a QUEUE_REMOVE_MANY backup write names (values as views of its bytes). */
function removedItems(value: Uint8Array): readonly { readonly id: number; readonly value: Uint8Array }[] {
  return decodeWith(REMOVED_ITEMS, value, 'removed items', { views: true }).items;
}

/** An entry's own time-to-live or max-idle as the wire may carry it: -1 (the map's), 0 (never) or a whole positive number of ms. */
function isEntryExpiryMs(ms: number): boolean {
  return ms === ENTRY_EXPIRY_MAP || (Number.isSafeInteger(ms) && ms >= 0);
}

/** The origin cluster name a WAN write carries (UTF-8 bytes). */
function originOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}

/** The item id a merge operation names in its key (decimal text); -1 when malformed. */
function mergeItemId(key: Uint8Array): number {
  const text = Buffer.from(key).toString('latin1');
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : -1;
}

function toEntryWire(e: MapEntryExport): EntryWire {
  return {
    map: e.mapName,
    key: e.key,
    value: e.value,
    contentType: e.contentType,
    creationTimeMs: e.creationTimeMs,
    updateTimeMs: e.updateTimeMs,
    lastAccessTimeMs: e.lastAccessTimeMs,
    version: e.version,
    hits: e.hits,
    ttlMs: e.ttlMs ?? ENTRY_EXPIRY_MAP,
    maxIdleMs: e.maxIdleMs ?? ENTRY_EXPIRY_MAP,
  };
}

function fromEntryWire(e: EntryWire): MapEntryExport {
  return {
    mapName: e.map,
    key: Buffer.from(e.key),
    value: Buffer.from(e.value),
    contentType: e.contentType,
    creationTimeMs: e.creationTimeMs,
    updateTimeMs: e.updateTimeMs,
    lastAccessTimeMs: e.lastAccessTimeMs,
    version: e.version,
    hits: e.hits,
    ttlMs: e.ttlMs,
    maxIdleMs: e.maxIdleMs,
  };
}
