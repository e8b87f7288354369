// The sending side of one WAN publisher on this member (wan.md "Events and queues", "Publisher
// states", "Transport"): its per-partition queues, the batches it has in flight, the target
// endpoints and their health, and its counters.
//
// Invariants:
// - A partition has at most one batch in flight (per publisher), and a batch holds a prefix of each
//   of its partitions' queues, from its head: a retry starts again at the head (its prefix may be
//   shorter or longer), so a partition's events are sent in queue order whatever fails, and the
//   target's ordering guard (replica-store.ts wanGuard) skips what it applied already.
// - A partition goes to the endpoint of its owner in the target cluster when the target told us
//   (wanBatchAck `owners`, and the endpoint that acknowledged it otherwise) and that endpoint is
//   healthy, else to the endpoint at its index among the healthy ones; so the target applies it
//   without forwarding. A failed endpoint is skipped until its backoff (100 ms doubling, capped at
//   5 s) has passed. Moving a partition between endpoints keeps its order: one batch in flight per
//   partition, and the target's ordering guard.
// - Only partitions this member owns are sent from; the queues of the others are backup queues.
// - Nothing is sent while PAUSED or STOPPED; nothing is queued while STOPPED.
import type { WanBatchPublisherConfig } from '../config/types.js';
import { message, type MessageOf, type WanEventWire } from '../cluster/messages.js';
import type { Peer, Transport } from '../cluster/transport.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';
import { PartitionEventQueue, type QueueCursor } from './event-queue.js';

export type PublisherState = 'REPLICATING' | 'PAUSED' | 'STOPPED';

/** Batches in flight per endpoint (each with its own partitions). */
export const BATCHES_IN_FLIGHT_PER_ENDPOINT = 4;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
/** A batch the target refused (it could not apply it now) is sent again after this long. */
const REFUSED_RETRY_MS = 200;
/** A batch's events are kept under this many bytes (a member-protocol frame is larger). */
const BATCH_BYTES_MAX = 8 * 1024 * 1024;

export interface PublisherHost {
  readonly partitionCount: number;
  readonly clusterName: string;
  clusterId(): string;
  isOwner(partitionId: number): boolean;
  /** The owner acknowledged events of a partition up to `version`: tell its backups. */
  onAcked(partitionId: number, version: number): void;
  /** A sync's segment of a partition was delivered. */
  onSyncPartitionDone(syncId: string, partitionId: number): void;
  /** Call ids unique across the publishers that share this publisher's transport. */
  nextCallId(): number;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: ComponentLogger;
}

interface Endpoint {
  readonly address: string;
  /** The member answering at this address (learnt from its acknowledgements). */
  peerUuid: string | null;
  failures: number;
  retryAtMs: number;
  inFlight: number;
}

interface Batch {
  readonly callId: number;
  readonly endpoint: Endpoint;
  readonly parts: { readonly partitionId: number; readonly cursor: QueueCursor; readonly writes: number; readonly events: number; readonly lastVersion: number }[];
  readonly events: number;
  timer: TimerHandle | null;
}

export interface PublisherCounters {
  /** Events (and sync entries) sent in batches, resends included. */
  sent: number;
  /** Events (and sync entries) the target acknowledged. */
  acked: number;
  /** Events not queued because the queue was full (DISCARD or a non-throwing state). */
  dropped: number;
  /** Events sent again after a timeout, a refusal or a lost connection. */
  resent: number;
  /** Events dropped by clearWanQueues. */
  cleared: number;
}

export class WanPublisher {
  readonly key: string;
  state: PublisherState;
  readonly queues: (PartitionEventQueue | undefined)[];
  readonly counters: PublisherCounters = { sent: 0, acked: 0, dropped: 0, resent: 0, cleared: 0 };
  private readonly endpoints: Endpoint[];
  private readonly batches = new Map<number, Batch>();
  /** Per partition, the member uuid owning it in the target cluster, as last reported (undefined: unknown). */
  private readonly ownerHint: (string | undefined)[];
  private readonly busy = new Set<number>();
  private lastSendMs = -Infinity;
  private timer: TimerHandle | null = null;
  private timerAtMs = Infinity;
  private stopped = false;
  private lastDropLogMs = -Infinity;
  private dropsSinceLog = 0;
  private pendingSinceSchedule = 0;

  constructor(
    readonly replication: string,
    readonly config: WanBatchPublisherConfig,
    private readonly host: PublisherHost,
    private readonly transport: Transport,
  ) {
    this.key = `${replication}/${config.publisherId}`;
    this.state = config.initialPublisherState;
    this.queues = new Array<PartitionEventQueue | undefined>(host.partitionCount);
    this.ownerHint = new Array<string | undefined>(host.partitionCount);
    this.endpoints = config.targetEndpoints.map((address) => ({ address, peerUuid: null, failures: 0, retryAtMs: 0, inFlight: 0 }));
  }

  queue(partitionId: number): PartitionEventQueue {
    let q = this.queues[partitionId];
    if (q === undefined) this.queues[partitionId] = q = new PartitionEventQueue();
    return q;
  }

  /** This publisher's bit in the drop mask owners send their backups (wan-service.ts), or -1. */
  maskBit = -1;

  /** primaryQueued(), kept up to date on the write path (recount() after ownership or queue changes). */
  primaryCount = 0;

  recount(): void {
    this.primaryCount = this.primaryQueued();
  }

  /** Write events queued in partitions this member owns (the figure queue-capacity bounds). */
  primaryQueued(): number {
    let n = 0;
    for (let p = 0; p < this.queues.length; p++) {
      const q = this.queues[p];
      if (q !== undefined && this.host.isOwner(p)) n += q.eventCount;
    }
    return n;
  }

  /** Sync entries waiting in this member's queues (owned or not), not yet acknowledged. */
  syncEntriesLeft(): number {
    let n = 0;
    for (const q of this.queues) if (q !== undefined) n += q.syncEntriesLeft();
    return n;
  }

  backupQueued(): number {
    let n = 0;
    for (let p = 0; p < this.queues.length; p++) {
      const q = this.queues[p];
      if (q !== undefined && !this.host.isOwner(p)) n += q.eventCount;
    }
    return n;
  }

  /** Age of the oldest item queued in an owned partition, 0 when none. */
  lagMs(): number {
    const now = this.host.clock.monotonicMs();
    let oldest = Infinity;
    for (let p = 0; p < this.queues.length; p++) {
      const q = this.queues[p];
      if (q === undefined || !this.host.isOwner(p)) continue;
      const t = q.oldestQueuedAtMs();
      if (t !== null && t < oldest) oldest = t;
    }
    return oldest === Infinity ? 0 : Math.max(0, Math.round(now - oldest));
  }

  /**
   * Queues one write event. `owner`: this member owns the partition (a throwing queue-full behaviour
   * was checked before the write; here a full queue drops and counts). A backup queues what its
   * owner queued (the caller skips what the owner dropped). Returns false when nothing was queued.
   */
  enqueue(partitionId: number, wire: WanEventWire, owner: boolean, primaryQueued: number): boolean {
    if (this.state === 'STOPPED') return false;
    const q = this.queue(partitionId);
    if (owner) {
      if (primaryQueued >= this.config.queueCapacity && wire.kind !== 3) {
        this.counters.dropped++;
        this.logDrop();
        return false;
      }
      q.push(wire, this.host.clock.monotonicMs());
      this.noteQueued();
      return true;
    }
    // A backup queue holds what the owner's queue holds (the owner's drop mask came with the write).
    q.push(wire, this.host.clock.monotonicMs());
    return true;
  }

  /** Whether a write may go ahead, given this publisher's queue-full behaviour (wan.md). */
  refusesWrites(primaryQueued: number): boolean {
    if (this.state === 'STOPPED' || primaryQueued < this.config.queueCapacity) return false;
    const b = this.config.queueFullBehavior;
    return b === 'THROW_EXCEPTION' || (b === 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE' && this.state === 'REPLICATING');
  }

  private logDrop(): void {
    this.dropsSinceLog++;
    const now = this.host.clock.monotonicMs();
    if (now - this.lastDropLogMs < 10_000) return;
    this.host.log.warning(`WAN ${this.key}: queue full (capacity ${this.config.queueCapacity}); ${this.dropsSinceLog} event(s) dropped since the last report (queue-full-behavior ${this.config.queueFullBehavior})`);
    this.lastDropLogMs = now;
    this.dropsSinceLog = 0;
  }

  // ── state ────────────────────────────────────────────────────────────────────────────────────

  setState(s: PublisherState): void {
    if (s === this.state) return;
    this.host.log.info(`WAN ${this.key}: publisher ${this.state} -> ${s}`);
    this.state = s;
    if (s === 'REPLICATING') this.schedule(0);
  }

  /** clearWanQueues: drops the queued write events of this publisher on this member (sync segments stay). */
  clearQueues(): number {
    let n = 0;
    for (const q of this.queues) if (q !== undefined) n += q.clearEvents();
    this.counters.cleared += n;
    return n;
  }

  close(): void {
    this.stopped = true;
    if (this.timer !== null) this.host.timers.clearTimeout(this.timer);
    this.timer = null;
    for (const b of this.batches.values()) if (b.timer !== null) this.host.timers.clearTimeout(b.timer);
    this.batches.clear();
    this.busy.clear();
    for (const r of this.requests.values()) {
      this.host.timers.clearTimeout(r.timer);
      r.resolve(null);
    }
    this.requests.clear();
  }

  // ── sending ──────────────────────────────────────────────────────────────────────────────────

  /** Asks for a pump within `delayMs` (default: when the batch delay runs out). */
  schedule(delayMs?: number): void {
    if (this.stopped || this.state !== 'REPLICATING') return;
    const now = this.host.clock.monotonicMs();
    const at = now + (delayMs ?? Math.max(0, this.lastSendMs + this.config.batchMaxDelayMs - now));
    if (this.timer !== null && this.timerAtMs <= at) return;
    if (this.timer !== null) this.host.timers.clearTimeout(this.timer);
    this.timerAtMs = at;
    this.timer = this.host.timers.setTimeout(() => {
      this.timer = null;
      this.timerAtMs = Infinity;
      this.pump();
    }, Math.max(0, at - now));
  }

  /** A new owned event arrived: a full batch goes at once, a partial one when the delay runs out. */
  noteQueued(): void {
    if (++this.pendingSinceSchedule >= this.config.batchSize) {
      this.pendingSinceSchedule = 0;
      this.schedule(0);
    } else {
      this.schedule();
    }
  }

  pump(): void {
    if (this.stopped || this.state !== 'REPLICATING' || this.endpoints.length === 0) return;
    const now = this.host.clock.monotonicMs();
    const healthy = this.endpoints.filter((e) => e.retryAtMs <= now);
    // With no endpoint healthy, the one whose backoff ends first is tried again.
    let earliest: Endpoint | null = null;
    for (const e of this.endpoints) if (earliest === null || e.retryAtMs < earliest.retryAtMs) earliest = e;
    const dueToDelay = now - this.lastSendMs >= this.config.batchMaxDelayMs;
    // Partitions ready to send, per endpoint.
    const byEndpoint = new Map<Endpoint, number[]>();
    let pendingOwned = false;
    for (let p = 0; p < this.queues.length; p++) {
      const q = this.queues[p];
      if (q === undefined || q.isEmpty || !this.host.isOwner(p)) continue;
      pendingOwned = true;
      if (this.busy.has(p)) continue;
      const ep = this.endpointFor(p, healthy);
      if (ep === null) continue;
      let list = byEndpoint.get(ep);
      if (list === undefined) byEndpoint.set(ep, (list = []));
      list.push(p);
    }
    if (healthy.length === 0 && pendingOwned && earliest !== null) {
      this.schedule(Math.max(0, earliest.retryAtMs - now));
      return;
    }
    let leftover = false;
    // The oldest event waiting in a partition that is free to send: a batch holding an event that
    // waited batch-max-delay-millis goes at once, even when another batch went out meanwhile (with
    // one batch in flight per partition, later batches rarely fill up; they must not wait again).
    let oldestWaiting = Infinity;
    for (const [ep, partitions] of byEndpoint) {
      // Partitions holding an event that waited batch-max-delay-millis go first (oldest first), then
      // the fullest: a batch carries few partitions with many events each, so the target applies
      // it in few calls; a partition left out grows until it is among the fullest or ages.
      if (partitions.length > 1) this.orderForBatches(partitions, now);
      let i = 0;
      while (i < partitions.length && ep.inFlight < BATCHES_IN_FLIGHT_PER_ENDPOINT) {
        const parts: Batch['parts'][number][] = [];
        const events: WanEventWire[] = [];
        let bytes = 0;
        let hasSync = false;
        let oldest = Infinity;
        for (; i < partitions.length && events.length < this.config.batchSize && bytes < BATCH_BYTES_MAX; i++) {
          const p = partitions[i] as number;
          const q = this.queues[p] as PartitionEventQueue;
          oldest = Math.min(oldest, q.oldestQueuedAtMs() ?? Infinity);
          const taken = q.take(this.config.batchSize - events.length);
          if (taken.events.length === 0) continue;
          let lastVersion = 0;
          for (const e of taken.events) {
            events.push(e);
            bytes += e.key.length + e.value.length + 64;
            if (e.kind === 4) hasSync = true;
            else lastVersion = Math.max(lastVersion, e.version);
          }
          parts.push({ partitionId: p, cursor: taken.cursor, writes: taken.writes, events: taken.events.length, lastVersion });
        }
        if (events.length === 0) break;
        const aged = now - oldest >= this.config.batchMaxDelayMs;
        if (events.length < this.config.batchSize && !dueToDelay && !hasSync && !aged) {
          oldestWaiting = Math.min(oldestWaiting, oldest);
          leftover = true;
          break;
        }
        this.send(ep, parts, events);
      }
      if (i < partitions.length) leftover = true;
    }
    if (leftover || pendingOwned) {
      const byAge = oldestWaiting === Infinity ? Infinity : oldestWaiting + this.config.batchMaxDelayMs;
      const byLastSend = this.lastSendMs + this.config.batchMaxDelayMs;
      this.schedule(Math.max(0, Math.min(byAge, byLastSend) - now));
    }
  }

  /** Sorts partitions for pump(): aged ones first (oldest first), then by queued items, most first. */
  private orderForBatches(partitions: number[], now: number): void {
    const delay = this.config.batchMaxDelayMs;
    const key = new Map<number, { aged: boolean; oldest: number; size: number }>();
    for (const p of partitions) {
      const q = this.queues[p] as PartitionEventQueue;
      const oldest = q.oldestQueuedAtMs() ?? Infinity;
      key.set(p, { aged: now - oldest >= delay, oldest, size: q.pendingItems() });
    }
    partitions.sort((a, b) => {
      const ka = key.get(a)!;
      const kb = key.get(b)!;
      if (ka.aged !== kb.aged) return ka.aged ? -1 : 1;
      if (ka.aged) return ka.oldest - kb.oldest || a - b;
      return kb.size - ka.size || a - b;
    });
  }

  /** The healthy endpoint a partition goes to (see the header), or null when none is healthy. */
  private endpointFor(partitionId: number, healthy: readonly Endpoint[]): Endpoint | null {
    if (healthy.length === 0) return null;
    const owner = this.ownerHint[partitionId];
    if (owner !== undefined) for (const e of healthy) if (e.peerUuid === owner) return e;
    return healthy[partitionId % healthy.length] as Endpoint;
  }

  private send(ep: Endpoint, parts: Batch['parts'][number][], events: WanEventWire[]): void {
    const callId = this.host.nextCallId();
    const batch: Batch = { callId, endpoint: ep, parts, events: events.length, timer: null };
    this.batches.set(callId, batch);
    for (const part of parts) this.busy.add(part.partitionId);
    ep.inFlight++;
    this.lastSendMs = this.host.clock.monotonicMs();
    this.counters.sent += events.length;
    const body = {
      sourceCluster: this.host.clusterName,
      sourceClusterId: this.host.clusterId(),
      replication: this.replication,
      publisherId: this.config.publisherId,
      ackOnReceipt: this.config.acknowledgeType === 'ACK_ON_RECEIPT',
      events,
    };
    batch.timer = this.host.timers.setTimeout(() => this.fail(callId, 'no acknowledgement within response-timeout-millis', true), this.config.responseTimeoutMs);
    if (!this.transport.send(ep.address, message('wanBatch', body, callId))) {
      // Dropped at once (backoff window, closed transport, write queue full): try again later.
      this.host.timers.setTimeout(() => this.fail(callId, 'not sent (endpoint unreachable)', true), 0);
    }
  }

  onAck(from: Peer, m: MessageOf<'wanBatchAck'>): void {
    const b = this.batches.get(m.callId);
    if (b === undefined) return;
    b.endpoint.peerUuid = from.uuid;
    if (!m.body.ok) {
      this.fail(m.callId, `refused by the target: ${m.body.message}`, false);
      return;
    }
    this.finish(b);
    b.endpoint.failures = 0;
    b.endpoint.retryAtMs = 0;
    this.counters.acked += b.events;
    // Where the target says these partitions live (the answering member owns those it does not list).
    for (const part of b.parts) this.ownerHint[part.partitionId] = from.uuid;
    for (const o of m.body.owners) if (o.partitionId < this.ownerHint.length) this.ownerHint[o.partitionId] = o.uuid;
    for (const part of b.parts) {
      const q = this.queues[part.partitionId];
      if (q === undefined) continue;
      const r = q.consume(part.cursor);
      if (this.host.isOwner(part.partitionId)) this.primaryCount = Math.max(0, this.primaryCount - r.writes);
      if (part.lastVersion > 0) {
        // Events of one version (a merge) may straddle batches: backups keep that version until all of it is acknowledged.
        const next = q.take(1).events[0];
        const safe = next !== undefined && next.kind !== 4 && next.version === part.lastVersion ? part.lastVersion - 1 : part.lastVersion;
        if (r.writes > 0 && safe > 0) this.host.onAcked(part.partitionId, safe);
      }
      for (const syncId of r.syncsDone) this.host.onSyncPartitionDone(syncId, part.partitionId);
    }
    this.pump();
  }

  private finish(b: Batch): void {
    this.batches.delete(b.callId);
    if (b.timer !== null) this.host.timers.clearTimeout(b.timer);
    b.timer = null;
    b.endpoint.inFlight = Math.max(0, b.endpoint.inFlight - 1);
    for (const part of b.parts) this.busy.delete(part.partitionId);
  }

  /** A batch failed: its partitions go again (to another endpoint if `endpointFault`). */
  private fail(callId: number, reason: string, endpointFault: boolean): void {
    const b = this.batches.get(callId);
    if (b === undefined) return;
    this.finish(b);
    this.counters.resent += b.events;
    const ep = b.endpoint;
    if (endpointFault) {
      ep.failures++;
      const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(10, ep.failures - 1));
      ep.retryAtMs = this.host.clock.monotonicMs() + backoff;
      if (ep.failures === 1 || ep.failures % 20 === 0) this.host.log.warning(`WAN ${this.key}: batch to ${ep.address} failed (${reason}); ${b.events} event(s) go again`);
      this.schedule(0);
    } else {
      this.host.log.info(`WAN ${this.key}: batch to ${ep.address} ${reason}; sending again`);
      this.schedule(REFUSED_RETRY_MS);
    }
  }

  /** The transport lost or could not reach an endpoint: its batches go elsewhere. */
  onEndpointDown(address: string, reason: string): void {
    for (const b of [...this.batches.values()]) if (b.endpoint.address === address) this.fail(b.callId, reason, true);
    const ep = this.endpoints.find((e) => e.address === address);
    if (ep !== undefined && ep.retryAtMs <= this.host.clock.monotonicMs()) {
      ep.failures++;
      ep.retryAtMs = this.host.clock.monotonicMs() + Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(10, ep.failures - 1));
      this.schedule(0);
    }
  }

  onDisconnected(peer: Peer): void {
    const ep = this.endpoints.find((e) => e.peerUuid === peer.uuid || e.address === peer.address);
    if (ep !== undefined) this.onEndpointDown(ep.address, 'connection closed');
  }

  // ── Merkle reads (consistency checks, delta syncs) ───────────────────────────────────────────

  private readonly requests = new Map<number, { resolve: (m: MessageOf<'wanMerkleAnswer'> | null) => void; timer: TimerHandle }>();

  /**
   * Asks the target endpoint of a partition for Merkle data; resolves with the answer, or null when
   * no endpoint answered within response-timeout-millis (or none is reachable).
   */
  request(partitionId: number, body: MessageOf<'wanMerkleRequest'>['body']): Promise<MessageOf<'wanMerkleAnswer'> | null> {
    const now = this.host.clock.monotonicMs();
    const ep = this.endpointFor(partitionId, this.endpoints.filter((e) => e.retryAtMs <= now));
    if (ep === null || this.stopped) return Promise.resolve(null);
    const callId = this.host.nextCallId();
    return new Promise((resolve) => {
      const timer = this.host.timers.setTimeout(() => {
        this.requests.delete(callId);
        resolve(null);
      }, this.config.responseTimeoutMs);
      this.requests.set(callId, { resolve, timer });
      if (!this.transport.send(ep.address, message('wanMerkleRequest', body, callId))) {
        this.host.timers.clearTimeout(timer);
        this.requests.delete(callId);
        this.onEndpointDown(ep.address, 'not sent (endpoint unreachable)');
        resolve(null);
      }
    });
  }

  onAnswer(m: MessageOf<'wanMerkleAnswer'>): void {
    const r = this.requests.get(m.callId);
    if (r === undefined) return;
    this.requests.delete(m.callId);
    this.host.timers.clearTimeout(r.timer);
    r.resolve(m);
  }

  /** Batches in flight now (for tests and metrics). */
  get inFlight(): number {
    return this.batches.size;
  }
}
