// What a member that was cut off from its cluster hands back when it joins again (cluster.md,
// "Split brain"). Two cases:
//   - removed: the master dropped this member (it was unreachable for longer than the suspicion
//     timeout) while it still answered callers. Its backups never confirmed some writes (they stood
//     after the backup timeout); those, and only those, are replayed. Everything else it held the
//     cluster already has (the promoted backups).
//   - merging: this member's cluster was the smaller side of a split brain. Everything it owned is
//     replayed into the larger cluster, plus the unconfirmed writes.
// In both cases the structure's `merge-policy` decides, as the reference applies the merge policy to
// everything the smaller side holds: a removed member is the smaller side of a split too.
//   - Map entries travel with their statistics (hits, last access, last update, expiration) in
//     MAP_MERGE calls of at most `batch-size` entries of one map and one partition (and at most
//     `batchBytesMax` bytes); the owner applies the policy to each (replica-store.ts). An unconfirmed
//     put carries the history of the record it made when this member still holds that record, else
//     its write time as creation, update and access time and 0 hits. DiscardMergePolicy entries are
//     dropped here, without a call: the policy would keep the larger side's entry in every case.
//   - Queue items: PutIfAbsentMergePolicy stores an item unless the larger side holds an item with
//     the same id and bytes (one QUEUE_MERGE_ADD call per item, at most `batch-size` of one queue in
//     flight); DiscardMergePolicy drops them here and counts them. An unconfirmed poll removes the
//     item with that id and bytes on the other side whatever the policy (it was delivered already).
// Removals and clears made on the cut-off side are not replayed.
// Copies this member held as a backup (not the owner in its table) are handed back only where the
// cluster has no entry (PutIfAbsentMergePolicy, unless the policy is Discard): the owner's copy, on
// either side, is the partition's authority, and a backup may be behind it. Under a policy where the
// handing side wins (PassThrough), a stale backup's value arriving after the owner's hand-back put
// an old value over every newer one (nemesis seed 101: r-7=46 over 48 to 56).
import type { BackupOpWire, OpWire } from '../cluster/messages.js';
import type { MergePolicyConfig, QueueMergePolicyName } from '../config/types.js';
import { BACKUP, BACKUP_PUT_EXPIRY, OP, REMOVED_ITEMS, type OpOutcome, type ReplicaStore } from '../data/replica-store.js';
import { decodeWith } from '../cluster/protocol/schema-codec.js';
import { ENTRY_EXPIRY_MAP } from '../data/expiry.js';
import { decodeMergedRecords, encodeMapMerge, mergingEntryBytes, type MergingEntry } from '../data/merge-batch.js';

/** The merge policy of each structure, as this member's config resolves it. */
export interface ReplayPolicies {
  map(name: string): MergePolicyConfig;
  queue(name: string): MergePolicyConfig<QueueMergePolicyName>;
}

/** One call of the replay. */
export interface ReplayCall {
  readonly partitionId: number;
  readonly op: OpWire;
  /** Map entries, queue items or polls it hands back (a queue call carries one). */
  readonly entries: number;
  /** About the bytes it puts on the wire, for the in-flight bound. */
  readonly bytes: number;
  /** A queue call's queue and that queue's batch-size (its calls in flight at most); null for a map batch. */
  readonly queue: { readonly name: string; readonly inFlightMax: number } | null;
}

export interface ReplayPlan {
  readonly calls: ReplayCall[];
  /** Map entries and queue items the calls hand back. */
  readonly entries: number;
  readonly items: number;
  /** Entries and items DiscardMergePolicy dropped (no call made). */
  readonly discarded: number;
  /** Removals and clears made while cut off: not merged. */
  readonly skipped: number;
  /** "map m: LatestUpdateMergePolicy", one per structure that had something to hand back, for the log. */
  readonly policies: readonly string[];
  /** Map entries from copies this member held as a backup, handed back only where the cluster has none. */
  readonly fromBackups?: number;
  /**
   * Map entries handed back from writes no backup confirmed alone, for partitions whose copy this
   * member does not hand back (it is not listed for them): said in the log line, to tell such
   * hand-backs apart when a run is read afterwards.
   */
  readonly unconfirmedOnly?: number;
}

function itemKey(id: number): Buffer {
  return Buffer.from(String(id), 'latin1');
}

interface PendingEntry {
  readonly partitionId: number;
  readonly map: string;
  readonly entry: MergingEntry;
  /** From a copy this member held as a backup: stored only where the cluster has no entry. */
  readonly fillOnly: boolean;
}

/**
 * The calls that hand back unconfirmed writes (in the order they were made, each key once) and the
 * whole of every partition `owned` says this member owned, under each structure's merge policy, and
 * of every partition `backedUp` says it held as a backup, where the cluster has no entry.
 * `batchBytesMax` bounds a map batch (an entry larger than that goes alone).
 */
export function collectReplay(
  store: ReplicaStore,
  unconfirmed: readonly { partitionId: number; op: BackupOpWire }[],
  owned: readonly number[],
  nowMs: number,
  policies: ReplayPolicies,
  batchBytesMax: number,
  backedUp: readonly number[] = [],
): ReplayPlan {
  const entries = new Map<string, PendingEntry>();
  const items = new Map<string, { partitionId: number; op: OpWire } | null>();
  let skipped = 0;
  const fromUnconfirmed = new Set<string>();
  const putEntry = (partitionId: number, map: string, e: Omit<MergingEntry, 'expirationTimeMs'>, unconfirmedWrite = false, fillOnly = false): void => {
    const entry: MergingEntry = { ...e, expirationTimeMs: store.maps.expirationOf(map, e) };
    const k = `${map}\u0000${Buffer.from(e.key).toString('latin1')}`;
    // A write this member made as owner stays what it hands back for its key.
    if (fillOnly && fromUnconfirmed.has(k)) return;
    entries.set(k, { partitionId, map, entry, fillOnly });
    if (unconfirmedWrite) fromUnconfirmed.add(k);
    else fromUnconfirmed.delete(k);
  };
  for (const { partitionId, op } of unconfirmed) {
    const itemId = `${op.name}\u0000${op.itemId}`;
    switch (op.code) {
      case BACKUP.MAP_PUT:
        putEntry(partitionId, op.name, unconfirmedPut(store, partitionId, op, nowMs), true);
        break;
      case BACKUP.MAP_PUT_EXPIRY: {
        const p = decodeWith(BACKUP_PUT_EXPIRY, op.value, 'backup put with expiry');
        putEntry(partitionId, op.name, { ...unconfirmedPut(store, partitionId, { ...op, value: p.value }, nowMs), ttlMs: p.ttlMs, maxIdleMs: p.maxIdleMs }, true);
        break;
      }
      case BACKUP.MAP_MERGE:
      case BACKUP.WAN_MAP_MERGE:
        for (const r of decodeMergedRecords(op.value)) putEntry(partitionId, op.name, r, true);
        break;
      case BACKUP.QUEUE_STORE:
        items.set(itemId, { partitionId, op: { code: OP.QUEUE_MERGE_ADD, name: op.name, key: itemKey(op.itemId), value: op.value, contentType: op.contentType, timeoutMs: 0 } });
        break;
      case BACKUP.QUEUE_REMOVE:
        unconfirmedTake(items, partitionId, op.name, op.itemId, op.value);
        break;
      case BACKUP.QUEUE_REMOVE_MANY:
        for (const i of decodeWith(REMOVED_ITEMS, op.value, 'removed items').items) unconfirmedTake(items, partitionId, op.name, i.id, i.value);
        break;
      default:
        skipped++; // removals and clears are not merged
    }
  }
  const asBackup = new Set(backedUp);
  for (const p of [...owned, ...backedUp]) {
    const snap = store.exportPartition(p, nowMs);
    for (const e of snap.entries) putEntry(p, e.map, e, false, asBackup.has(p));
    for (const q of snap.queues) {
      for (const i of q.items) {
        const id = `${q.name}\u0000${i.id}`;
        if (items.get(id) === null) continue;
        items.set(id, { partitionId: p, op: { code: OP.QUEUE_MERGE_ADD, name: q.name, key: itemKey(i.id), value: i.value, contentType: i.contentType, timeoutMs: 0 } });
      }
    }
  }
  const plan = { calls: [] as ReplayCall[], entries: 0, items: 0, discarded: 0, skipped, policies: [] as string[], unconfirmedOnly: fromUnconfirmed.size, fromBackups: 0 };
  batchEntries(entries, policies, batchBytesMax, plan);
  queueCalls(items, policies, plan);
  return plan;
}

/** An unconfirmed poll or drain of one item: stored and taken while cut off, nothing to hand back; else taken on the other side too. */
function unconfirmedTake(items: Map<string, { partitionId: number; op: OpWire } | null>, partitionId: number, name: string, id: number, value: Uint8Array): void {
  const itemId = `${name}\u0000${id}`;
  if (items.has(itemId)) items.set(itemId, null);
  else items.set(itemId, { partitionId, op: { code: OP.QUEUE_MERGE_REMOVE, name, key: itemKey(id), value, contentType: null, timeoutMs: 0 } });
}

/** An unconfirmed put with the history of the record it made, when this member still holds that record. */
function unconfirmedPut(store: ReplicaStore, partitionId: number, op: BackupOpWire, nowMs: number): Omit<MergingEntry, 'expirationTimeMs'> {
  const held = store.maps.peek(op.name, op.key, partitionId, nowMs);
  const same = held !== null && held.updateTimeMs === op.timeMs && Buffer.from(op.value).equals(held.value);
  return {
    key: op.key,
    value: op.value,
    contentType: op.contentType,
    creationTimeMs: same ? held.creationTimeMs : op.timeMs,
    updateTimeMs: op.timeMs,
    lastAccessTimeMs: same ? held.lastAccessTimeMs : op.timeMs,
    hits: same ? held.hits : 0,
    version: same ? held.version : 0,
    ttlMs: same ? held.ttlMs : ENTRY_EXPIRY_MAP,
    maxIdleMs: same ? held.maxIdleMs : ENTRY_EXPIRY_MAP,
  };
}

/** Map entries → MAP_MERGE calls: per map and partition, at most batch-size entries and batchBytesMax bytes each. */
function batchEntries(entries: ReadonlyMap<string, PendingEntry>, policies: ReplayPolicies, batchBytesMax: number, plan: { calls: ReplayCall[]; entries: number; discarded: number; policies: string[]; fromBackups: number }): void {
  const groups = new Map<string, PendingEntry[]>();
  for (const e of entries.values()) {
    const k = `${e.partitionId}\u0000${e.map}\u0000${e.fillOnly ? 'b' : 'o'}`;
    let g = groups.get(k);
    if (g === undefined) groups.set(k, (g = []));
    g.push(e);
  }
  const named = new Set<string>();
  for (const group of groups.values()) {
    const { partitionId, map, fillOnly } = group[0] as PendingEntry;
    const { policy: configured, batchSize } = policies.map(map);
    const policy = fillOnly && configured !== 'DiscardMergePolicy' ? 'PutIfAbsentMergePolicy' : configured;
    if (!named.has(map)) {
      named.add(map);
      plan.policies.push(`map ${map}: ${configured}`);
    }
    if (fillOnly && policy !== 'DiscardMergePolicy') plan.fromBackups += group.length;
    if (policy === 'DiscardMergePolicy') {
      plan.discarded += group.length;
      continue;
    }
    let batch: MergingEntry[] = [];
    let bytes = 0;
    const flush = (): void => {
      if (batch.length === 0) return;
      plan.calls.push({ partitionId, op: { code: OP.MAP_MERGE, name: map, key: Buffer.alloc(0), value: encodeMapMerge({ policy, entries: batch }), contentType: null, timeoutMs: 0 }, entries: batch.length, bytes, queue: null });
      plan.entries += batch.length;
      batch = [];
      bytes = 0;
    };
    for (const { entry } of group) {
      const size = mergingEntryBytes(entry);
      if (batch.length >= batchSize || (batch.length > 0 && bytes + size > batchBytesMax)) flush();
      batch.push(entry);
      bytes += size;
    }
    flush();
  }
}

function queueCalls(items: ReadonlyMap<string, { partitionId: number; op: OpWire } | null>, policies: ReplayPolicies, plan: { calls: ReplayCall[]; items: number; discarded: number; policies: string[] }): void {
  const named = new Set<string>();
  for (const r of items.values()) {
    if (r === null) continue;
    const { policy, batchSize } = policies.queue(r.op.name);
    const adds = r.op.code === OP.QUEUE_MERGE_ADD;
    if (adds && !named.has(r.op.name)) {
      named.add(r.op.name);
      plan.policies.push(`queue ${r.op.name}: ${policy}`);
    }
    if (adds && policy === 'DiscardMergePolicy') {
      plan.discarded++;
      continue;
    }
    if (adds) plan.items++;
    plan.calls.push({ partitionId: r.partitionId, op: r.op, entries: 1, bytes: 64 + r.op.value.length, queue: { name: r.op.name, inFlightMax: batchSize } });
  }
}

/** Structures named in the log line at most; the rest are counted. */
const LOGGED_POLICIES_MAX = 8;

/** The WARNING a member logs when it was cut off, or null when it has nothing to hand back. */
export function replayLogLine(reason: string, plan: ReplayPlan): string | null {
  if (plan.calls.length === 0 && plan.skipped === 0 && plan.discarded === 0) return null;
  const polls = plan.calls.filter((c) => c.op.code === OP.QUEUE_MERGE_REMOVE).length;
  const batches = plan.calls.filter((c) => c.op.code === OP.MAP_MERGE).length;
  const shown = plan.policies.slice(0, LOGGED_POLICIES_MAX).join(', ');
  const more = plan.policies.length > LOGGED_POLICIES_MAX ? ` and ${plan.policies.length - LOGGED_POLICIES_MAX} more` : '';
  let line = `${reason}: ${plan.entries} map entr(ies) in ${batches} batch(es), ${plan.items} queue item(s) and ${polls} poll(s) will be handed back to the cluster after joining`;
  if (shown !== '') line += ` (merge policies: ${shown}${more})`;
  if (plan.discarded > 0) line += `; ${plan.discarded} entr(ies)/item(s) dropped by DiscardMergePolicy`;
  if (plan.skipped > 0) line += `; ${plan.skipped} removal(s) made meanwhile are not merged`;
  if ((plan.fromBackups ?? 0) > 0) line += `; ${plan.fromBackups} of the entries are from backup copies, stored only where the cluster has none`;
  if ((plan.unconfirmedOnly ?? 0) > 0) line += `; ${plan.unconfirmedOnly} of the entries are writes no backup confirmed, of partitions this member holds no listed copy of`;
  return line;
}

/**
 * How a call's answer splits its entries: stored (the policy took the merging entry, or the item was
 * appended) or kept (the larger side's entry stays, or it already held the item).
 */
export function replayOutcome(call: ReplayCall, outcome: OpOutcome): { stored: number; kept: number } {
  if (call.op.code === OP.MAP_MERGE && outcome.kind === 'count') return { stored: outcome.count, kept: call.entries - outcome.count };
  if (call.op.code === OP.QUEUE_MERGE_ADD && outcome.kind === 'flag') return outcome.flag ? { stored: 1, kept: 0 } : { stored: 0, kept: 1 };
  return { stored: 0, kept: 0 };
}

/**
 * The calls still to send, in order, and the bounds on what is in flight: at most `callsMax` calls
 * and `bytesMax` bytes (one call always may go), and for a queue at most its batch-size calls. A
 * call that must wait holds back the ones behind it, so a queue's items keep their order.
 */
export class ReplayBacklog {
  private waiting: ReplayCall[] = [];
  private head = 0;
  private inFlightCalls = 0;
  private inFlightBytes = 0;
  private readonly inFlightByQueue = new Map<string, number>();
  /** Calls waiting or in flight: what this member still has to hand back. */
  private readonly outstandingCalls = new Set<ReplayCall>();

  constructor(
    private readonly callsMax: number,
    private readonly bytesMax: number,
  ) {}

  get pending(): number {
    return this.waiting.length - this.head;
  }

  get inFlight(): number {
    return this.inFlightCalls;
  }

  add(calls: readonly ReplayCall[]): void {
    if (this.head > 0) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    this.waiting.push(...calls);
    for (const c of calls) this.outstandingCalls.add(c);
  }

  /** The calls waiting or in flight (what this member still has to hand back). */
  get outstanding(): ReadonlySet<ReplayCall> {
    return this.outstandingCalls;
  }

  /** The next call to send now (counted in flight), or null when none may go yet. */
  take(): ReplayCall | null {
    const call = this.waiting[this.head];
    if (call === undefined || this.inFlightCalls >= this.callsMax) return null;
    if (this.inFlightCalls > 0 && this.inFlightBytes + call.bytes > this.bytesMax) return null;
    if (call.queue !== null && (this.inFlightByQueue.get(call.queue.name) ?? 0) >= call.queue.inFlightMax) return null;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    this.inFlightCalls++;
    this.inFlightBytes += call.bytes;
    if (call.queue !== null) this.inFlightByQueue.set(call.queue.name, (this.inFlightByQueue.get(call.queue.name) ?? 0) + 1);
    return call;
  }

  /** A call taken earlier ended; `again` puts it back at the end (this member was cut off again meanwhile). */
  finish(call: ReplayCall, again: boolean): void {
    this.inFlightCalls--;
    this.inFlightBytes -= call.bytes;
    if (call.queue !== null) {
      const n = (this.inFlightByQueue.get(call.queue.name) ?? 1) - 1;
      if (n === 0) this.inFlightByQueue.delete(call.queue.name);
      else this.inFlightByQueue.set(call.queue.name, n);
    }
    if (again) this.waiting.push(call);
    else this.outstandingCalls.delete(call);
  }
}
