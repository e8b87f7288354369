// Between the replica store and the log: every applied change of a persistent map or queue, on the
// owner and on the backups alike, becomes a log record, taken from the store's one mutation stream
// (the same stream WAN consumes: there is no second path that could drift from what the store
// applied). At start-up the records are applied back into an empty store.
//
// - A map put is logged with the whole entry as the store holds it after the write (value, content
//   type, times, version, hits, absolute expiry), so a record never depends on an earlier one.
// - A partition replaced by a snapshot (migration, resync) is logged as "partition dropped" and then
//   every entry and queue item of its persistent structures; a partition let go as "dropped".
// - The write path takes a ticket after each operation (`takeTicket`): the caller answers its
//   client only once `whenDone` says the operation's records reached the operating system
//   (fsync="false") or the disk (fsync="true", group commit).
// - Records of one turn of the event loop go out in one append (`defer` schedules the flush).
//
// Loading (`applyRecord`): puts, removes and clears replay in sequence order; an entry whose
// expiry passed before the member stopped (`expiredBeforeMs`) is not loaded; entries of maps with
// a time-to-live or max-idle start counting again from the load (their update and access times
// become the load time); the partitions' data versions end at the last record's version.
import type { Mutation, ReplicaStore } from '../data/replica-store.js';
import { ENTRY_EXPIRY_MAP, entryPolicy } from '../data/expiry.js';
import type { LogRecord } from './log-record.js';
import { GridError } from '../util/errors.js';
import type { LogStore, NewRecord } from './log-store.js';

export interface PersistenceHost {
  readonly store: ReplicaStore;
  readonly log: LogStore;
  /** null: the map is not persistent; else whether its writes wait for fsync. */
  mapDurability(name: string): { fsync: boolean } | null;
  queueDurability(name: string): { fsync: boolean } | null;
  /** Runs `fn` once the current turn's work is done (end of the tick). */
  defer(fn: () => void): void;
  nowMs(): number;
}

/**
 * What an operation must wait for before it is answered: its last record's sequence number, twice,
 * plus 1 when it must be synced (a number, not an object: one per write). 0: nothing.
 */
export type Ticket = number;

export interface PersistenceCounters {
  recordsWritten: number;
  /** Appends that failed (the operation's caller got an error). */
  writeFailures: number;
}

export class PersistenceService {
  readonly counters: PersistenceCounters = { recordsWritten: 0, writeFailures: 0 };
  /** The last record the current operation logged, and whether any of its records must be synced. */
  private opSeq = 0;
  private opDurable = false;
  private flushScheduled = false;

  constructor(private readonly h: PersistenceHost) {}

  /** Starts listening to the store's mutation stream. */
  attach(): void {
    this.h.store.setMutationListener('persistence', (m) => {
      this.onMutation(m);
      return 0;
    });
  }

  detach(): void {
    this.h.store.setMutationListener('persistence', null);
  }

  /**
   * The ticket of the records logged since the last call, or 0 when there were none (the operation
   * touched nothing persistent). Taken by the write path right after each operation.
   */
  takeTicket(): Ticket {
    if (this.opSeq === 0) return 0;
    const t = this.opSeq * 2 + (this.opDurable ? 1 : 0);
    this.opSeq = 0;
    this.opDurable = false;
    return t;
  }

  /** Calls `ack` once the ticket's records are as durable as asked (or with why not). */
  whenDone(ticket: Ticket, ack: (error: Error | null) => void): void {
    if (ticket === 0) return ack(null);
    this.h.log.whenDone(Math.floor(ticket / 2), ticket % 2 === 1, (error) => {
      if (error !== null) this.counters.writeFailures++;
      ack(error);
    });
  }

  /** Writes what this turn logged now (also run by the deferred flush). */
  flush(): void {
    this.flushScheduled = false;
    this.h.log.flush();
  }

  onMutation(m: Mutation): void {
    switch (m.kind) {
      case 'put': {
        const d = this.h.mapDurability(m.mapName);
        if (d === null) return;
        const r = this.h.store.maps.peekWritten(m.mapName, m.key, m.partitionId, m.timeMs);
        if (r === null) return; // expired at once (a zero TTL): nothing to keep
        const expiry = this.h.store.maps.expirationOf(m.mapName, r);
        this.noteAppended(this.h.log.appendMapPut(m.partitionId, m.version, m.mapName, m.key, r, Number.isFinite(expiry) ? expiry : 0, d.fsync), d.fsync);
        return;
      }
      case 'remove': {
        const d = this.h.mapDurability(m.mapName);
        if (d === null) return;
        return this.append({ type: 'mapRemove', partitionId: m.partitionId, partitionVersion: m.version, name: m.mapName, key: m.key }, d.fsync);
      }
      case 'clear': {
        const d = this.h.mapDurability(m.mapName);
        if (d === null) return;
        return this.append({ type: 'mapClear', partitionId: m.partitionId, partitionVersion: m.version, name: m.mapName }, d.fsync);
      }
      case 'queueStore': {
        const d = this.h.queueDurability(m.queueName);
        if (d === null || m.item === null) return;
        return this.append({ type: 'queueAdd', partitionId: m.partitionId, partitionVersion: m.version, name: m.queueName, itemId: m.itemId, value: m.item.value, contentType: m.item.contentType }, d.fsync);
      }
      case 'queueRemove': {
        const d = this.h.queueDurability(m.queueName);
        if (d === null) return;
        return this.append({ type: 'queueRemove', partitionId: m.partitionId, partitionVersion: m.version, name: m.queueName, itemId: m.itemId }, d.fsync);
      }
      case 'queueClear': {
        const d = this.h.queueDurability(m.queueName);
        if (d === null) return;
        return this.append({ type: 'queueClear', partitionId: m.partitionId, partitionVersion: m.version, name: m.queueName }, d.fsync);
      }
      case 'partitionDropped':
        return this.append({ type: 'partitionDrop', partitionId: m.partitionId, partitionVersion: 0 }, false);
      case 'partitionImported':
        return this.logPartition(m.partitionId, m.version);
    }
  }

  /** A partition replaced by a snapshot: "dropped", then everything persistent it now holds. */
  private logPartition(partitionId: number, version: number): void {
    const store = this.h.store;
    const now = this.h.nowMs();
    const snapshot = store.exportPartition(partitionId, now);
    this.append({ type: 'partitionDrop', partitionId, partitionVersion: version }, false);
    for (const e of snapshot.entries) {
      const d = this.h.mapDurability(e.map);
      if (d === null) continue;
      const expiry = store.maps.expirationOf(e.map, e);
      this.append({ type: 'mapPut', partitionId, partitionVersion: version, name: e.map, key: e.key, value: e.value, contentType: e.contentType, creationTimeMs: e.creationTimeMs, updateTimeMs: e.updateTimeMs, lastAccessTimeMs: e.lastAccessTimeMs, expirationTimeMs: Number.isFinite(expiry) ? expiry : 0, version: e.version, hits: e.hits, ttlMs: e.ttlMs, maxIdleMs: e.maxIdleMs }, d.fsync);
    }
    for (const q of snapshot.queues) {
      const d = this.h.queueDurability(q.name);
      if (d === null) continue;
      for (const item of q.items) this.append({ type: 'queueAdd', partitionId, partitionVersion: version, name: q.name, itemId: item.id, value: item.value, contentType: item.contentType }, d.fsync);
    }
  }

  private append(record: NewRecord, fsync: boolean): void {
    this.noteAppended(this.h.log.append(record, fsync), fsync);
  }

  private noteAppended(seq: number, fsync: boolean): void {
    this.opSeq = seq;
    if (fsync) this.opDurable = true;
    this.counters.recordsWritten++;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.h.defer(this.flushNow);
    }
  }

  private readonly flushNow = (): void => this.flush();
}

/** What loading a log did, for the start-up log line and the recovery report. */
export interface LoadTally {
  records: number;
  entriesSkippedExpired: number;
}

/**
 * Applies one record to the store being recovered. `expiredBeforeMs`: the time the member was last
 * known alive; an entry that expired before it stays gone. `nowMs`: the load time, from which
 * time-to-live and max-idle count again.
 */
export function applyRecord(store: ReplicaStore, r: LogRecord, expiredBeforeMs: number, nowMs: number, tally: LoadTally): void {
  tally.records++;
  if (r.partitionId >= store.partitionCount) throw new GridError('ERR_PERSISTENCE_CORRUPT', `record ${r.seq} names partition ${r.partitionId}, but this cluster has ${store.partitionCount}`);
  switch (r.type) {
    case 'mapPut': {
      if (r.expirationTimeMs !== 0 && r.expirationTimeMs <= expiredBeforeMs) {
        store.maps.remove(r.name, r.key, r.partitionId, nowMs);
        tally.entriesSkippedExpired++;
        break;
      }
      const ttlMs = r.ttlMs ?? ENTRY_EXPIRY_MAP;
      const maxIdleMs = r.maxIdleMs ?? ENTRY_EXPIRY_MAP;
      const policy = entryPolicy(store.maps.expiryPolicy(r.name), ttlMs, maxIdleMs);
      const restart = policy.ttlMs > 0 || policy.maxIdleMs > 0;
      store.maps.importRecord(r.partitionId, r.name, r.key, r.value, r.contentType, {
        creationTimeMs: r.creationTimeMs,
        updateTimeMs: restart ? nowMs : r.updateTimeMs,
        lastAccessTimeMs: restart ? nowMs : r.lastAccessTimeMs,
        version: r.version,
        hits: r.hits,
        ttlMs,
        maxIdleMs,
      }, nowMs);
      break;
    }
    case 'mapRemove':
      store.maps.remove(r.name, r.key, r.partitionId, nowMs);
      break;
    case 'mapClear':
      store.maps.clearInPartition(r.name, r.partitionId);
      break;
    case 'queueAdd':
      store.queues.storeReplica(r.name, { id: r.itemId, value: Buffer.from(r.value.buffer, r.value.byteOffset, r.value.length), contentType: r.contentType });
      break;
    case 'queueRemove':
      store.queues.removeReplica(r.name, r.itemId);
      break;
    case 'queueClear':
      store.queues.dropItems(r.name);
      break;
    case 'partitionDrop':
      store.dropPartition(r.partitionId);
      break;
  }
  store.restoreVersion(r.partitionId, r.partitionVersion);
}

/**
 * Whether a map put or queue add is what the store holds now: the same entry version, content type
 * and value; the same queue item id and value (compactor.ts keeps exactly these). Other records: false.
 */
export function recordIsLive(store: ReplicaStore, r: LogRecord, nowMs: number): boolean {
  if (r.type === 'mapPut') {
    const v = store.maps.peek(r.name, r.key, r.partitionId, nowMs);
    return v !== null && v.version === r.version && v.contentType === r.contentType && Buffer.compare(v.value, r.value) === 0;
  }
  if (r.type === 'queueAdd') {
    const item = store.queues.itemWithId(r.name, r.itemId);
    return item !== null && Buffer.compare(item.value, r.value) === 0;
  }
  return false;
}
