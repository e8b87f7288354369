// The receiving side of WAN replication (wan.md "Transport"): a batch from another cluster's member
// is checked whole, then applied on the owners of its keys with the merge policy each event carries,
// partition by partition in the order the events came, and acknowledged (after applying, or on
// receipt).
//
// Invariants:
// - A batch that is malformed in any event (partition out of range or not the key's partition,
//   unknown kind or policy, a key or value over the store's limits, a bad time) is refused whole
//   before anything is applied.
// - One partition's events from one publisher of one source cluster are applied strictly one after
//   another, across batches (a chain per partition), so they take effect in source order.
// - Ordering across members and resends: each call carries the source stream and version of its
//   events, and the partition's owner in this cluster skips a call older than what it applied from
//   that stream (replica-store.ts wanGuard; the marks are kept by backups and carried by
//   migrations). Sync entries are checked against the mark but never raise it.
// - Applied events carry their origin cluster, so this cluster republishes them only when the map's
//   wan-replication-ref allows it and never back to their origin (wan-service.ts).
import type { MessageOf, OpWire, WanEventWire } from '../cluster/messages.js';
import { OP, wanGuard } from '../data/replica-store.js';
import { encodeMapMerge, localMapMerge, MERGE_BATCH_ENTRIES_MAX, type MapMergeBatch, type MergingEntry } from '../data/merge-batch.js';
import { mergePolicyOfCode, type MergePolicyName } from '../data/merge-policy.js';
import { entryPolicy, expirationTimeMs, type ExpiryPolicy } from '../data/expiry.js';
import type { LocalResult } from '../invocation/invoker.js';
import type { ComponentLogger } from '../util/logger.js';
import { EVENT_CLEAR, EVENT_PUT, EVENT_REMOVE, EVENT_SYNC_PUT } from './event-queue.js';
import { partitionIdOfKey } from '../partition/partition-id.js';

const EMPTY = Buffer.alloc(0);

/** Bytes of one merge call the target sends to a key owner. */
const MERGE_CALL_BYTES_MAX = 1024 * 1024;

export interface TargetHost {
  /** Why this cluster takes no WAN writes now (PASSIVE, not joined), or null. */
  refusal(): string | null;
  expiryPolicy(mapName: string): ExpiryPolicy;
  invoke(partitionId: number, op: OpWire, callback: (r: LocalResult) => void): void;
  /** Whether this member owns the partition now (its merge calls then skip encoding, localMapMerge). */
  isLocalOwner(partitionId: number): boolean;
  reply(ok: boolean, message: string): void;
  readonly log: ComponentLogger;
}

export interface TargetCounters {
  batchesReceived: number;
  batchesRefused: number;
  eventsApplied: number;
  applyFailures: number;
}

/** One call of a partition's apply: an operation, or a merge whose value is made when it is invoked. */
type Step = { partitionId: number; op: OpWire; merge: MapMergeBatch | null; version: number; sync: boolean; events: number };

export class WanTarget {
  readonly counters: TargetCounters = { batchesReceived: 0, batchesRefused: 0, eventsApplied: 0, applyFailures: 0 };
  /** `${sourceClusterId}/${replication}/${publisherId}/${partitionId}` → the tail of that partition's apply chain. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly opts: { readonly partitionCount: number; readonly keyBytesMax: number; readonly valueBytesMax: number; readonly log: ComponentLogger }) {}

  /** Checks and applies one batch; `host.reply` is called exactly once. */
  onBatch(m: MessageOf<'wanBatch'>, host: TargetHost): void {
    this.counters.batchesReceived++;
    const b = m.body;
    const problem = this.check(b.events) ?? (b.sourceClusterId === '' ? 'no source cluster id' : null);
    if (problem !== null) {
      this.counters.batchesRefused++;
      this.opts.log.warning(`WAN batch from cluster ${b.sourceCluster} (${b.replication}/${b.publisherId}) refused: ${problem}`);
      host.reply(false, problem);
      return;
    }
    const refusal = host.refusal();
    if (refusal !== null) {
      this.counters.batchesRefused++;
      host.reply(false, refusal);
      return;
    }
    if (b.ackOnReceipt) host.reply(true, '');
    const byPartition = new Map<number, WanEventWire[]>();
    for (const e of b.events) {
      let list = byPartition.get(e.partitionId);
      if (list === undefined) byPartition.set(e.partitionId, (list = []));
      list.push(e);
    }
    const done: Promise<string | null>[] = [];
    for (const [p, events] of byPartition) {
      const key = `${b.sourceClusterId}/${b.replication}/${b.publisherId}/${p}`;
      const previous = this.chains.get(key) ?? Promise.resolve();
      const run = previous.then(() => this.applyPartition(`${b.sourceClusterId}/${b.replication}/${b.publisherId}`, p, events, host));
      const tail = run.then(() => undefined);
      this.chains.set(key, tail);
      void tail.then(() => {
        if (this.chains.get(key) === tail) this.chains.delete(key);
      });
      done.push(run);
    }
    void Promise.all(done).then((results) => {
      const failure = results.find((r) => r !== null) ?? null;
      if (failure !== null) this.counters.applyFailures++;
      if (!b.ackOnReceipt) host.reply(failure === null, failure ?? '');
    });
  }

  /** Applies one partition's events in order; resolves with a failure message or null. */
  private async applyPartition(source: string, partitionId: number, events: readonly WanEventWire[], host: TargetHost): Promise<string | null> {
    const steps = this.plan(source, partitionId, events, host);
    for (const step of steps) {
      // A merge on this member's own partition is handed over without encoding (localMapMerge).
      const op = step.merge === null ? step.op : { ...step.op, value: host.isLocalOwner(step.partitionId) ? localMapMerge(step.merge) : encodeMapMerge(step.merge, true) };
      const r = await new Promise<LocalResult>((resolve) => host.invoke(step.partitionId, op, resolve));
      if (r.kind !== 'ok') return r.kind === 'error' ? r.error.message : 'the key owner could not be reached in time';
      this.counters.eventsApplied += step.events;
    }
    return null;
  }

  /**
   * Turns a partition's events into calls: runs of puts become merge calls; removes and clears go
   * one by one. Each call carries its ordering guard (replica-store.ts wanGuard): the owner skips a
   * call whose newest event is older than what the partition applied from this source stream, so a
   * late batch (received by another member of this cluster, or resent from an older point) never
   * takes a key back. A call that overlaps what was applied is applied whole: it replays a
   * contiguous slice of the stream, and the calls after it bring the partition to its end.
   */
  private plan(source: string, partitionId: number, events: readonly WanEventWire[], host: TargetHost): Step[] {
    const steps: Step[] = [];
    let run: { map: string; policy: MergePolicyName; origin: string; entries: MergingEntry[]; bytes: number; version: number; sync: boolean } | null = null;
    const flush = (): void => {
      if (run === null) return;
      const op: OpWire = { code: OP.WAN_MAP_MERGE, name: run.map, key: Buffer.from(run.origin, 'utf8'), value: EMPTY, contentType: wanGuard(run.sync, run.version, source), timeoutMs: 0 };
      steps.push({ partitionId, op, merge: { policy: run.policy, entries: run.entries }, version: run.version, sync: run.sync, events: run.entries.length });
      run = null;
    };
    for (const e of events) {
      const sync = e.kind === EVENT_SYNC_PUT;
      if (e.kind === EVENT_PUT || sync) {
        const policy = mergePolicyOfCode(e.policy) as MergePolicyName;
        const bytes = 64 + e.key.length + e.value.length;
        if (run !== null && (run.map !== e.map || run.policy !== policy || run.origin !== e.origin || run.sync !== sync || run.entries.length >= MERGE_BATCH_ENTRIES_MAX || run.bytes + bytes > MERGE_CALL_BYTES_MAX)) flush();
        if (run === null) run = { map: e.map, policy, origin: e.origin, entries: [], bytes: 0, version: e.version, sync };
        run.entries.push({
          key: e.key,
          value: e.value,
          contentType: e.contentType,
          creationTimeMs: e.creationTimeMs,
          updateTimeMs: e.updateTimeMs,
          lastAccessTimeMs: e.lastAccessTimeMs,
          expirationTimeMs: expirationTimeMs(entryPolicy(host.expiryPolicy(e.map), e.ttlMs, e.maxIdleMs), e.updateTimeMs, e.lastAccessTimeMs),
          hits: e.hits,
          version: e.entryVersion,
          ttlMs: e.ttlMs,
          maxIdleMs: e.maxIdleMs,
        });
        run.bytes += bytes;
        run.version = Math.max(run.version, e.version);
        continue;
      }
      flush();
      const origin = Buffer.from(e.origin, 'utf8');
      const op: OpWire =
        e.kind === EVENT_REMOVE
          ? { code: OP.WAN_MAP_REMOVE, name: e.map, key: e.key, value: origin, contentType: wanGuard(false, e.version, source), timeoutMs: 0 }
          : { code: OP.WAN_MAP_CLEAR, name: e.map, key: Buffer.alloc(0), value: origin, contentType: wanGuard(false, e.version, source), timeoutMs: 0 };
      steps.push({ partitionId, op, merge: null, version: e.version, sync: false, events: 1 });
    }
    flush();
    return steps;
  }

  /** The first thing wrong with a batch's events, or null. */
  private check(events: readonly WanEventWire[]): string | null {
    for (let i = 0; i < events.length; i++) {
      const e = events[i] as WanEventWire;
      const at = `event ${i}`;
      if (e.partitionId >= this.opts.partitionCount) return `${at}: partition ${e.partitionId} is out of range (this cluster has ${this.opts.partitionCount})`;
      if (e.kind !== EVENT_PUT && e.kind !== EVENT_REMOVE && e.kind !== EVENT_CLEAR && e.kind !== EVENT_SYNC_PUT) return `${at}: unknown event kind ${e.kind}`;
      if (e.map === '') return `${at}: no map name`;
      if (e.kind !== EVENT_CLEAR && e.key.length === 0) return `${at}: empty key`;
      if (e.key.length > this.opts.keyBytesMax) return `${at}: key of ${e.key.length} bytes is larger than ${this.opts.keyBytesMax}`;
      if (e.value.length > this.opts.valueBytesMax) return `${at}: value of ${e.value.length} bytes is larger than ${this.opts.valueBytesMax}`;
      if ((e.kind === EVENT_PUT || e.kind === EVENT_SYNC_PUT) && mergePolicyOfCode(e.policy) === null) return `${at}: unknown merge policy code ${e.policy}`;
      // Both clusters place a key by the same hash (the handshake checks the partition count): an
      // event filed under another partition would be stored where no read finds it.
      if (e.kind !== EVENT_CLEAR && partitionIdOfKey(e.key, this.opts.partitionCount) !== e.partitionId) return `${at}: partition ${e.partitionId} is not the partition of its key`;
      if (!Number.isFinite(e.creationTimeMs) || !Number.isFinite(e.updateTimeMs) || !Number.isFinite(e.lastAccessTimeMs)) return `${at}: a time that is not finite`;
    }
    return null;
  }
}
