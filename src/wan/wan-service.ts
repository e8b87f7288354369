// WAN replication on one member (wan.md): the publishers of every configured scheme, fed by the
// store's mutation stream; the receiving side for batches from other clusters; syncs and their
// progress records; the management calls (pause, resume, stop, clear, sync, addWanConfig); and the
// figures for metrics.
//
// Where events come from: ReplicaStore emits every applied map write (owner and backups alike, at
// the same partition version). The owner's copy goes into the primary queue of each publisher the
// map's wan-replication-ref names, the backups' into their backup queues; a write that came over
// the WAN is queued again only when the map republishes and never for its origin cluster.
//
// The cluster reaches this room only through WanHost (ClusterNode provides it); the network to
// target clusters only through the Transport each publisher gets from openTransport.
import type { Config, MapConfig, WanBatchPublisherConfig, WanReplicationConfig } from '../config/types.js';
import { resolveMapConfig } from '../config/match.js';
import { message, type Message, type MessageOf, type OpWire, type WanEventWire, type WanQueueWire } from '../cluster/messages.js';
import type { Peer, Transport, TransportHandler } from '../cluster/transport.js';
import { LEAF_DIGESTS_ANSWER, LEAF_DIGESTS_REQUEST, MERKLE_NODES_ANSWER, MERKLE_NODES_REQUEST, OP, type MapMutation, type PartitionSidecar, type ReplicaStore } from '../data/replica-store.js';
import { decodeWith, encodeWith } from '../cluster/protocol/schema-codec.js';
import { isMerkleDepth } from '../data/merkle-tree.js';
import type { MerkleEntryDigest } from '../data/map-service.js';
import { diffDigests, startCompare, type CompareResult } from './merkle-compare.js';
import { MERGE_POLICY_CODES } from '../data/merge-policy.js';
import type { LocalResult } from '../invocation/invoker.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import { EVENT_CLEAR, EVENT_PUT, EVENT_REMOVE, EVENT_SYNC_PUT } from './event-queue.js';
import type { MapEntryExport } from '../data/map-service.js';
import { ENTRY_EXPIRY_MAP } from '../data/expiry.js';
import { WanPublisher, type PublisherState } from './publisher.js';
import { ended, progressOf, SyncRecords, type SyncRecord, type SyncStage } from './sync-records.js';
import { WanTarget } from './target.js';
import { mergeWanConfig, parseWanConfigJson, wanConfigToJson } from './config-json.js';

const EMPTY = Buffer.alloc(0);
/** Backup prunes and sync reports are sent at most this often. */
const FLUSH_INTERVAL_MS = 100;
/** Sync stall checks (and the gossip of sync records) run this often. */
const STALL_CHECK_MS = 5000;
/** addWanConfig: resend to members that have not confirmed this often, for at most this long. */
const CONFIG_RESEND_MS = 500;
const CONFIG_ACK_WAIT_MS = 10_000;
/** Records are gossiped while they run and this long after they end. */
const GOSSIP_AFTER_END_MS = 2 * 60 * 1000;
const SYNC_KIND_FULL = 1;
const SYNC_KIND_CHECK = 2;

/**
 * Where an incarnation's call ids start: a 32-bit FNV-1a hash of a fresh uuid times 2^20, so two
 * incarnations' ranges overlap only if their hashes collide (and a member makes 2^20 calls first).
 */
function callIdStart(uuid: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uuid.length; i++) h = Math.imul(h ^ uuid.charCodeAt(i), 0x01000193) >>> 0;
  return 1 + h * 2 ** 20;
}

export interface WanHost {
  readonly store: ReplicaStore;
  readonly clusterName: string;
  clusterId(): string;
  joined(): boolean;
  isOwner(partitionId: number): boolean;
  /** The member owning a partition in this cluster (uuid), or null when unknown. */
  ownerOf(partitionId: number): string | null;
  /** Backup replicas of a partition (member uuids, this member excluded). */
  backupsOf(partitionId: number): string[];
  /** Every member of the cluster, this one included. */
  memberUuids(): string[];
  /** Sends to a member of this cluster (to itself: delivered asynchronously). */
  sendTo(uuid: string, m: Message): void;
  /** Runs a data call on its partition's owner in this cluster. */
  invoke(partitionId: number, op: OpWire, callback: (r: LocalResult) => void): void;
  /** Why this cluster takes no WAN writes now, or null. */
  targetRefusal(): string | null;
}

export interface WanServiceOptions {
  readonly config: Config;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: ComponentLogger;
  readonly newUuid: () => string;
  /** A connection to a target cluster for one publisher (its cluster name, this member's identity). */
  readonly openTransport: (publisher: WanBatchPublisherConfig, handler: TransportHandler) => Transport;
  readonly keyBytesMax: number;
  readonly valueBytesMax: number;
}

export interface WanPublisherFigures {
  state: PublisherState;
  queued: number;
  backupQueued: number;
  sent: number;
  acked: number;
  dropped: number;
  resent: number;
  lagMs: number;
  syncsRunning: number;
  /** Frame bytes this member sent to and received from the publisher's target (batches, Merkle reads, answers). */
  bytesSent: number;
  bytesReceived: number;
}

export interface SyncProgress {
  stage: SyncStage;
  progress: number;
  wanReplicationName: string;
  wanPublisherId: string;
  creationTime: number;
}

interface PendingReport {
  readonly started: Set<number>;
  readonly done: Set<number>;
  readonly released: Set<number>;
  failure: string;
  readonly record: SyncRecord;
  diffPartitions: number;
  checkedLeaves: number;
  diffLeaves: number;
  entriesToSync: number;
}

/** Entries a full sync takes from this member's partitions per turn of the event loop (snapshotPartitions). */
const SYNC_SLICE_ENTRIES = 20_000;
/** A full sync takes no more slices while this many of its publisher's sync entries wait here unacknowledged. */
const SYNC_AHEAD_ENTRIES = 60_000;
const SYNC_AHEAD_RECHECK_MS = 10;

/** Partitions one member compares with the target at once (consistency checks, delta syncs). */
const COMPARE_CONCURRENCY = 16;

interface Route {
  readonly publisher: WanPublisher;
  readonly policy: number;
  readonly republish: boolean;
  readonly targetCluster: string;
}

export class WanService implements PartitionSidecar {
  private readonly publishers = new Map<string, WanPublisher>();
  /** Publisher key → the transport of its target cluster (shared, see linkTo). */
  private readonly transports = new Map<string, Transport>();
  private readonly links = new Map<string, { transport: Transport; publishers: Set<WanPublisher> }>();
  /**
   * Call ids of batches and Merkle reads, unique across this member's publishers. They start at a
   * random point per incarnation: a target may still answer a batch of this member's previous
   * process (same address) after a restart, and that answer must not match a batch of this one.
   */
  private nextCallId: number;
  private schemes: WanReplicationConfig[];
  /** Schemes or publishers added at run time (addWanConfig), shipped to joiners. */
  private readonly added: WanReplicationConfig[] = [];
  private readonly routes = new Map<string, readonly Route[]>();
  private readonly target: WanTarget;
  readonly records: SyncRecords;
  private readonly pendingAcks = new Map<string, Map<number, number>>();
  /**
   * Per publisher key, per partition: the highest version this member (as owner) told backups was
   * acknowledged. Sent again to the current backups every STALL_CHECK_MS: a backup that received the
   * partition's queue (migration, resync) after the prune went out would otherwise keep those events
   * until the partition's next acknowledgement.
   */
  private readonly ackedTo = new Map<string, number[]>();
  private readonly pendingReports = new Map<string, PendingReport>();
  private flushTimer: TimerHandle | null = null;
  private stallTimer: TimerHandle | null = null;
  private host: WanHost | null = null;
  private stopped = false;
  private readonly partitionCount: number;

  constructor(private readonly o: WanServiceOptions) {
    this.partitionCount = o.config.properties.partitionCount;
    this.schemes = o.config.wanReplications.map((w) => ({ name: w.name, publishers: [...w.publishers] }));
    this.target = new WanTarget({ partitionCount: this.partitionCount, keyBytesMax: o.keyBytesMax, valueBytesMax: o.valueBytesMax, log: o.log });
    this.records = new SyncRecords(() => o.clock.monotonicMs());
    this.nextCallId = callIdStart(o.newUuid());
  }

  /** True when this member has anything to publish (the store then emits its mutations here). */
  get publishing(): boolean {
    return this.publishers.size > 0;
  }

  attach(host: WanHost): void {
    this.host = host;
    for (const scheme of this.schemes) for (const p of scheme.publishers) this.createPublisher(scheme.name, p);
    host.store.sidecar = this;
    this.updateListener();
    this.stallTimer = this.o.timers.setTimeout(() => this.checkStalls(), STALL_CHECK_MS);
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.publishers.values()) p.close();
    for (const l of this.links.values()) (l.transport as Transport & { close?: () => void }).close?.();
    if (this.flushTimer !== null) this.o.timers.clearTimeout(this.flushTimer);
    if (this.stallTimer !== null) this.o.timers.clearTimeout(this.stallTimer);
  }

  private get h(): WanHost {
    if (this.host === null) throw new Error('WanService used before attach()');
    return this.host;
  }

  /**
   * The connection to a target cluster, shared by every publisher of this member that sends there:
   * the target keeps one connection per member, so two transports from one member would fight over
   * it. Answers are told apart by call id (unique across publishers, nextCallId).
   */
  private linkTo(config: WanBatchPublisherConfig): { transport: Transport; publishers: Set<WanPublisher> } {
    let link = this.links.get(config.clusterName);
    if (link !== undefined) return link;
    const publishers = new Set<WanPublisher>();
    const handler: TransportHandler = {
      onMessage: (from, m) => {
        if (m.kind === 'wanBatchAck') for (const p of publishers) p.onAck(from, m);
        else if (m.kind === 'wanMerkleAnswer') for (const p of publishers) p.onAnswer(m);
      },
      onRefused: (address, reason) => {
        this.o.log.warning(`WAN: target ${address} (cluster ${config.clusterName}) refused the connection: ${reason}`);
        for (const p of publishers) p.onEndpointDown(address, `handshake refused: ${reason}`);
      },
      onUnreachable: (address) => {
        for (const p of publishers) p.onEndpointDown(address, 'unreachable');
      },
      onDisconnected: (peer) => {
        for (const p of publishers) p.onDisconnected(peer);
      },
    };
    link = { transport: this.o.openTransport(config, handler), publishers };
    this.links.set(config.clusterName, link);
    return link;
  }

  private createPublisher(replication: string, config: WanBatchPublisherConfig): WanPublisher {
    const key = `${replication}/${config.publisherId}`;
    const existing = this.publishers.get(key);
    if (existing !== undefined) return existing;
    const link = this.linkTo(config);
    this.transports.set(key, link.transport);
    const host = this.h;
    const publisher = new WanPublisher(replication, config, {
      partitionCount: this.partitionCount,
      clusterName: host.clusterName,
      clusterId: () => host.clusterId(),
      isOwner: (p) => host.isOwner(p),
      onAcked: (p, version) => this.noteAcked(key, p, version),
      onSyncPartitionDone: (syncId, p) => this.reportDone(syncId, p),
      nextCallId: () => this.nextCallId++,
      clock: this.o.clock,
      timers: this.o.timers,
      log: this.o.log,
    }, link.transport);
    link.publishers.add(publisher);
    this.publishers.set(key, publisher);
    this.routes.clear();
    this.o.log.info(`WAN ${key}: publisher to cluster ${config.clusterName} at ${config.targetEndpoints.join(', ')} (${publisher.state})`);
    return publisher;
  }

  private updateListener(): void {
    this.assignMaskBits();
    this.h.store.setMutationListener('wan', this.publishers.size > 0 ? (m) => (m.kind === 'put' || m.kind === 'remove' || m.kind === 'clear' ? this.onMutation(m) : 0) : null);
  }

  // ── events ───────────────────────────────────────────────────────────────────────────────────

  private routesOf(mapName: string): readonly Route[] {
    let r = this.routes.get(mapName);
    if (r !== undefined) return r;
    const ref = this.mapConfig(mapName).wanReplicationRef;
    const list: Route[] = [];
    if (ref !== null) {
      const scheme = this.schemes.find((s) => s.name === ref.name);
      for (const pc of scheme?.publishers ?? []) {
        const publisher = this.publishers.get(`${ref.name}/${pc.publisherId}`);
        if (publisher !== undefined) list.push({ publisher, policy: MERGE_POLICY_CODES[ref.mergePolicy as keyof typeof MERGE_POLICY_CODES] ?? 0, republish: ref.republishingEnabled, targetCluster: pc.clusterName });
      }
    }
    if (this.routes.size > 10_000) this.routes.clear();
    this.routes.set(mapName, list);
    return list;
  }

  private mapConfig(name: string): MapConfig {
    return resolveMapConfig(this.o.config.maps, name);
  }

  /**
   * Before a map write runs on its owner: refuses it (503, nothing written) when a publisher of the
   * map must throw on a full queue (wan.md "Events and queues"). Clears are never refused.
   */
  checkWrite(mapName: string): void {
    for (const route of this.routesOf(mapName)) {
      const p = route.publisher;
      if (p.refusesWrites(p.primaryCount)) throw new GridError('ERR_WAN_QUEUE_FULL', 'WAN queue is full', { retryAfterSeconds: 1 });
    }
  }

  /**
   * Queues a write's event for each publisher of its map. On the owner, returns the drop mask its
   * backups get with the write: bit i set = publisher i (maskBits order) did not queue it (full
   * queue, STOPPED, or not republished), so a backup skips it too and backup queues hold exactly
   * what their owner's queue holds. Publishers past bit 30 have no bit: their backups keep all.
   */
  private onMutation(m: MapMutation): number {
    const routes = this.routesOf(m.mapName);
    if (routes.length === 0) return 0;
    let first: WanEventWire | null = null;
    let mask = 0;
    for (const route of routes) {
      const pub = route.publisher;
      const bit = pub.maskBit >= 0 ? 1 << pub.maskBit : 0;
      if (!m.owner && (m.dropMask & bit) !== 0) continue;
      let queued = false;
      if ((m.origin === null || (route.republish && route.targetCluster !== m.origin)) && pub.state !== 'STOPPED') {
        if (first === null) first = this.eventOf(m, route.policy);
        const wire: WanEventWire = first.policy === route.policy ? first : { ...first, policy: route.policy };
        queued = pub.enqueue(m.partitionId, wire, m.owner, pub.primaryCount);
        if (queued && m.owner) pub.primaryCount++;
      }
      if (!queued) mask |= bit;
    }
    return m.owner ? mask : 0;
  }

  /** Gives every publisher its drop-mask bit: its place among all publisher keys, sorted (the same on every member). */
  private assignMaskBits(): void {
    const keys = [...this.publishers.keys()].sort();
    for (const [key, p] of this.publishers) {
      const i = keys.indexOf(key);
      p.maskBit = i <= 30 ? i : -1;
    }
  }

  private eventOf(m: MapMutation, policy: number): WanEventWire {
    const origin = m.origin ?? this.h.clusterName;
    const key = m.key.length === 0 ? EMPTY : Buffer.from(m.key);
    if (m.kind === 'put') {
      const r = this.h.store.maps.peekWritten(m.mapName, m.key, m.partitionId, m.timeMs);
      if (r !== null) {
        return { partitionId: m.partitionId, version: m.version, kind: EVENT_PUT, map: m.mapName, key, value: r.value, contentType: r.contentType, creationTimeMs: r.creationTimeMs, updateTimeMs: r.updateTimeMs, lastAccessTimeMs: r.lastAccessTimeMs, entryVersion: r.version, hits: r.hits, ttlMs: r.ttlMs, maxIdleMs: r.maxIdleMs, policy, origin };
      }
    }
    const kind = m.kind === 'clear' ? EVENT_CLEAR : EVENT_REMOVE;
    return { partitionId: m.partitionId, version: m.version, kind, map: m.mapName, key, value: EMPTY, contentType: null, creationTimeMs: m.timeMs, updateTimeMs: m.timeMs, lastAccessTimeMs: m.timeMs, entryVersion: 0, hits: 0, ttlMs: ENTRY_EXPIRY_MAP, maxIdleMs: ENTRY_EXPIRY_MAP, policy, origin };
  }

  // ── partitions (sidecar of the replica store) ────────────────────────────────────────────────

  exportPartition(partitionId: number): WanQueueWire[] {
    const out: WanQueueWire[] = [];
    for (const p of this.publishers.values()) {
      const q = p.queues[partitionId];
      if (q !== undefined && q.eventCount > 0) out.push({ publisher: p.key, events: q.writeEvents() });
    }
    return out;
  }

  importPartition(partitionId: number, queues: readonly WanQueueWire[]): void {
    const now = this.o.clock.monotonicMs();
    for (const p of this.publishers.values()) {
      const events: WanEventWire[] = [];
      for (const q of queues) if (q.publisher === p.key) events.push(...q.events);
      const existing = p.queues[partitionId];
      if (existing === undefined && events.length === 0) continue;
      const dropped = p.queue(partitionId).replace(events, now);
      for (const syncId of dropped) this.reportReleased(syncId, partitionId);
      p.recount();
      if (this.h.isOwner(partitionId)) p.schedule(0);
    }
  }

  dropPartition(partitionId: number): void {
    for (const p of this.publishers.values()) {
      const q = p.queues[partitionId];
      if (q === undefined) continue;
      for (const syncId of q.clearAll()) this.reportReleased(syncId, partitionId);
      p.recount();
    }
  }

  /**
   * The partition table changed: owners count their queues anew and send from new partitions. A
   * running sync's share moves with its partitions: the member that lost one drops its segment and
   * says so (released); the new owner starts that partition again (takeOverSyncs).
   */
  onTableApplied(changed: readonly number[]): void {
    for (const p of this.publishers.values()) {
      for (const pid of changed) {
        const q = p.queues[pid];
        if (q === undefined || this.h.isOwner(pid)) continue;
        for (const item of [...q.all()]) {
          if (item.type === 'sync' && q.dropSync(item.syncId)) this.reportReleased(item.syncId, pid);
        }
      }
      p.recount();
      p.schedule(0);
    }
    const gained = changed.filter((pid) => this.h.isOwner(pid));
    if (gained.length > 0) this.takeOverSyncs(gained);
  }

  /** Starts, for partitions this member now owns, the running syncs and checks that have not finished them here. */
  private takeOverSyncs(partitions: readonly number[]): void {
    for (const r of this.records.all()) {
      if (ended(r) || r.maps === null) continue;
      const p = this.publishers.get(`${r.replication}/${r.publisherId}`);
      if (p === undefined || (r.kind === 'sync' && p.state === 'STOPPED')) continue;
      const mine = r.started.get(this.selfId);
      const todo = partitions.filter((pid) => !r.done.has(pid) && mine?.has(pid) !== true && !this.hasSegment(p, pid, r.id));
      if (todo.length > 0) this.startPartitions(r, p, todo);
    }
  }

  private hasSegment(p: WanPublisher, pid: number, syncId: string): boolean {
    const q = p.queues[pid];
    if (q === undefined) return false;
    for (const item of q.all()) if (item.type === 'sync' && item.syncId === syncId) return true;
    return false;
  }

  // ── messages ─────────────────────────────────────────────────────────────────────────────────

  /** Whether a message kind belongs to this room. */
  handles(kind: Message['kind']): boolean {
    return kind === 'wanBatch' || kind === 'wanMerkleRequest' || kind === 'wanAcked' || kind === 'wanSyncStart' || kind === 'wanSyncReport' || kind === 'wanConfigAdd' || kind === 'wanConfigAck';
  }

  /** Member-protocol messages of this room; returns false for others. */
  handle(from: Peer, m: Message): boolean {
    switch (m.kind) {
      case 'wanBatch':
        this.onBatch(from, m);
        return true;
      case 'wanMerkleRequest':
        this.onMerkleRequest(from, m);
        return true;
      case 'wanAcked':
        this.onAckedFromOwner(m);
        return true;
      case 'wanSyncStart':
        this.onSyncStart(m);
        return true;
      case 'wanSyncReport':
        this.onSyncReport(from, m);
        return true;
      case 'wanConfigAdd':
        this.onConfigAdd(from, m);
        return true;
      case 'wanConfigAck':
        this.configAcks.get(m.callId)?.(m.body.uuid);
        return true;
      default:
        return false;
    }
  }

  private onBatch(from: Peer, m: MessageOf<'wanBatch'>): void {
    const h = this.h;
    let replied = false;
    this.target.onBatch(m, {
      refusal: () => h.targetRefusal(),
      expiryPolicy: (name) => h.store.maps.expiryPolicy(name),
      invoke: (p, op, cb) => h.invoke(p, op, cb),
      isLocalOwner: (p) => h.isOwner(p),
      reply: (ok, text) => {
        if (replied) return;
        replied = true;
        this.replyTo(from, message('wanBatchAck', { ok, message: text.slice(0, 1000), owners: this.ownersElsewhere(m.body.events) }, m.callId));
      },
      log: this.o.log,
    });
  }

  /** The partitions of a batch that another member of this cluster owns, with that owner. */
  private ownersElsewhere(events: readonly WanEventWire[]): { partitionId: number; uuid: string }[] {
    const out: { partitionId: number; uuid: string }[] = [];
    let last = -1;
    const seen = new Set<number>();
    for (const e of events) {
      const pid = e.partitionId;
      if (pid === last || pid >= this.partitionCount || seen.has(pid)) continue;
      last = pid;
      seen.add(pid);
      const owner = this.h.ownerOf(pid);
      if (owner !== null && owner !== this.selfId) out.push({ partitionId: pid, uuid: owner });
    }
    return out;
  }

  /** Target side of a consistency check or delta sync: reads the Merkle data on the partition's owner here. */
  private onMerkleRequest(from: Peer, m: MessageOf<'wanMerkleRequest'>): void {
    const b = m.body;
    const answer = (ok: boolean, text: string, bytes: Uint8Array): void => this.replyTo(from, message('wanMerkleAnswer', { ok, message: text.slice(0, 1000), answer: bytes }, m.callId));
    if (b.partitionId >= this.partitionCount) return answer(false, `partition ${b.partitionId} is out of range (this cluster has ${this.partitionCount})`, EMPTY);
    if (b.map === '') return answer(false, 'no map name', EMPTY);
    const refusal = this.h.targetRefusal();
    if (refusal !== null) return answer(false, refusal, EMPTY);
    const op: OpWire = { code: b.digests ? OP.WAN_LEAF_DIGESTS : OP.WAN_MERKLE_NODES, name: b.map, key: EMPTY, value: b.request, contentType: null, timeoutMs: 0 };
    this.h.invoke(b.partitionId, op, (r) => {
      if (r.kind === 'ok' && r.outcome.kind === 'value' && r.outcome.value !== null) answer(true, '', r.outcome.value);
      else answer(false, r.kind === 'error' ? r.error.message : 'the partition owner could not be reached in time', EMPTY);
    });
  }

  /** Answers on the connection the batch came in on (the peer is another cluster's member). */
  replyTo: (peer: Peer, m: Message) => void = () => {};

  private onAckedFromOwner(m: MessageOf<'wanAcked'>): void {
    const p = this.publishers.get(m.body.publisher);
    if (p === undefined) return;
    const n = Math.min(m.body.partitionIds.length, m.body.versions.length);
    for (let i = 0; i < n; i++) {
      const pid = m.body.partitionIds[i] as number;
      if (pid >= this.partitionCount || this.h.isOwner(pid)) continue;
      p.queues[pid]?.pruneTo(m.body.versions[i] as number);
    }
  }

  private noteAcked(publisherKey: string, partitionId: number, version: number): void {
    let acked = this.ackedTo.get(publisherKey);
    if (acked === undefined) this.ackedTo.set(publisherKey, (acked = new Array<number>(this.partitionCount).fill(0)));
    if (version > (acked[partitionId] ?? 0)) acked[partitionId] = version;
    let m = this.pendingAcks.get(publisherKey);
    if (m === undefined) this.pendingAcks.set(publisherKey, (m = new Map()));
    m.set(partitionId, Math.max(version, m.get(partitionId) ?? 0));
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== null || this.stopped) return;
    this.flushTimer = this.o.timers.setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, FLUSH_INTERVAL_MS);
  }

  private flush(): void {
    const h = this.h;
    for (const [key, acks] of this.pendingAcks) {
      const perMember = new Map<string, { partitionIds: number[]; versions: number[] }>();
      for (const [pid, version] of acks) {
        for (const u of h.backupsOf(pid)) {
          let e = perMember.get(u);
          if (e === undefined) perMember.set(u, (e = { partitionIds: [], versions: [] }));
          e.partitionIds.push(pid);
          e.versions.push(version);
        }
      }
      for (const [u, e] of perMember) h.sendTo(u, message('wanAcked', { publisher: key, ...e }));
    }
    this.pendingAcks.clear();
    for (const [syncId, rep] of this.pendingReports) {
      const r = rep.record;
      const body = {
        syncId,
        kind: r.kind === 'check' ? SYNC_KIND_CHECK : SYNC_KIND_FULL,
        replication: r.replication,
        publisherId: r.publisherId,
        creationTimeMs: r.creationTimeMs,
        total: r.total,
        started: [...rep.started],
        done: [...rep.done],
        released: [...rep.released],
        failure: rep.failure,
        diffPartitions: rep.diffPartitions,
        checkedLeaves: rep.checkedLeaves,
        diffLeaves: rep.diffLeaves,
        entriesToSync: rep.entriesToSync,
        gossip: false,
      };
      for (const u of h.memberUuids()) h.sendTo(u, message('wanSyncReport', body));
    }
    this.pendingReports.clear();
  }

  // ── syncs ────────────────────────────────────────────────────────────────────────────────────

  private report(syncId: string): PendingReport | null {
    const record = this.records.get(syncId);
    if (record === undefined) return null;
    let rep = this.pendingReports.get(syncId);
    if (rep === undefined) this.pendingReports.set(syncId, (rep = { started: new Set(), done: new Set(), released: new Set(), failure: '', record, diffPartitions: 0, checkedLeaves: 0, diffLeaves: 0, entriesToSync: 0 }));
    this.scheduleFlush();
    return rep;
  }

  private reportDone(syncId: string, partitionId: number): void {
    this.report(syncId)?.done.add(partitionId);
  }

  /** This member no longer runs a partition of a sync (it moved away); its new owner takes it over. */
  private reportReleased(syncId: string, partitionId: number): void {
    const rep = this.report(syncId);
    if (rep === null) return;
    rep.started.delete(partitionId);
    rep.released.add(partitionId);
  }

  private reportFailure(syncId: string, reason: string): void {
    const rep = this.report(syncId);
    if (rep !== null && rep.failure === '') rep.failure = reason;
  }

  /** The publisher named by a management call, or 404. */
  publisher(replication: string, publisherId: string): WanPublisher {
    const scheme = this.schemes.find((s) => s.name === replication);
    if (scheme === undefined) {
      const known = this.schemes.map((s) => s.name);
      throw new GridError('ERR_WAN_UNKNOWN', `WAN replication '${replication}' is not known (${known.length === 0 ? 'no WAN replication is configured on this member' : `configured: ${known.join(', ')}`})`);
    }
    const p = this.publishers.get(`${replication}/${publisherId}`);
    if (p === undefined) {
      const ids = scheme.publishers.map((x) => x.publisherId);
      throw new GridError('ERR_WAN_UNKNOWN', `WAN replication '${replication}' has no publisher '${publisherId}' (${ids.length === 0 ? 'it has no publishers' : `publishers: ${ids.join(', ')}`})`);
    }
    return p;
  }

  pause(replication: string, publisherId: string): void {
    this.publisher(replication, publisherId).setState('PAUSED');
  }

  resume(replication: string, publisherId: string): void {
    this.publisher(replication, publisherId).setState('REPLICATING');
  }

  /** Stops enqueueing; a running sync of this publisher ends FAILED. */
  stopPublisher(replication: string, publisherId: string): void {
    const p = this.publisher(replication, publisherId);
    p.setState('STOPPED');
    for (const r of this.records.all()) {
      if (ended(r) || r.replication !== replication || r.publisherId !== publisherId || r.kind !== 'sync') continue;
      for (const q of p.queues) q?.dropSync(r.id);
      this.records.fail(r, 'the publisher was stopped');
      this.reportFailure(r.id, `the publisher was stopped on a member`);
    }
  }

  clearQueues(replication: string, publisherId: string): number {
    const p = this.publisher(replication, publisherId);
    const n = p.clearQueues();
    p.recount();
    this.o.log.info(`WAN ${p.key}: ${n} queued event(s) cleared`);
    return n;
  }

  /** sync/map (mapName) or sync/allmaps (null): this member coordinates; returns the sync's id. */
  startSync(replication: string, publisherId: string, mapName: string | null): string {
    const p = this.publisher(replication, publisherId);
    if (p.state === 'STOPPED') throw new GridError('ERR_WAN_SYNC_RUNNING', `WAN publisher ${p.key} is STOPPED: resume it before a sync`);
    const running = this.records.running(replication, publisherId, 'sync');
    if (running !== null) throw new GridError('ERR_WAN_SYNC_RUNNING', `a sync of WAN publisher ${p.key} is running (${running.id}, ${progressOf(running)}%)`);
    const id = this.o.newUuid();
    const creationTimeMs = this.o.clock.nowMs();
    this.records.open(id, 'sync', replication, publisherId, creationTimeMs, this.partitionCount);
    const body = { syncId: id, kind: SYNC_KIND_FULL, replication, publisherId, maps: mapName === null ? [] : [mapName], allMaps: mapName === null, creationTimeMs, total: this.partitionCount };
    for (const u of this.h.memberUuids()) this.h.sendTo(u, message('wanSyncStart', body));
    this.o.log.info(`WAN ${p.key}: sync ${id} of ${mapName === null ? 'all maps' : `map ${mapName}`} started`);
    return id;
  }

  progress(id: string): SyncProgress | null {
    const r = this.records.get(id);
    if (r === undefined) return null;
    return { stage: r.stage, progress: progressOf(r), wanReplicationName: r.replication, wanPublisherId: r.publisherId, creationTime: r.creationTimeMs };
  }

  private onSyncStart(m: MessageOf<'wanSyncStart'>): void {
    const b = m.body;
    if (b.total !== this.partitionCount) return;
    const check = b.kind === SYNC_KIND_CHECK;
    this.records.open(b.syncId, check ? 'check' : 'sync', b.replication, b.publisherId, b.creationTimeMs, b.total);
    const p = this.publishers.get(`${b.replication}/${b.publisherId}`);
    if (p === undefined || (!check && p.state === 'STOPPED')) {
      this.reportFailure(b.syncId, p === undefined ? `a member has no publisher ${b.replication}/${b.publisherId}` : 'the publisher is STOPPED on a member');
      return;
    }
    const record = this.records.get(b.syncId);
    if (record === undefined) return;
    this.records.describe(record, b.maps, b.allMaps);
    const owned: number[] = [];
    for (let pid = 0; pid < this.partitionCount; pid++) if (this.h.isOwner(pid)) owned.push(pid);
    this.startPartitions(record, p, owned);
  }

  /** This member's share of a sync or check: the given partitions it owns. */
  private startPartitions(r: SyncRecord, p: WanPublisher, owned: readonly number[]): void {
    const h = this.h;
    const rep = this.report(r.id);
    if (rep === null || r.maps === null) return;
    const maps = r.allMaps ? h.store.maps.mapNames().filter((n) => this.mapConfig(n).wanReplicationRef?.name === r.replication) : [...r.maps];
    for (const pid of owned) rep.started.add(pid);
    if (r.kind === 'check' || p.config.consistencyCheckStrategy === 'MERKLE_TREES') {
      void this.runCompare(r.id, p, maps, owned, r.kind === 'check' ? 'check' : 'delta');
      return;
    }
    this.snapshotPartitions(r.id, p, maps, [...owned], 0);
  }

  /**
   * Full sync: each owned partition's entries of the maps, taken partition by partition (each in one
   * step, at one version) into the partition's queue. About SYNC_SLICE_ENTRIES entries are taken per
   * turn of the event loop and the publisher sends after each slice, so the target starts applying
   * while the rest is taken, and this member keeps serving meanwhile; taking waits while more than
   * SYNC_AHEAD_ENTRIES entries are waiting to be acknowledged. A partition that moved away
   * before its turn is released to its new owner; a sync that ended stops here.
   */
  private snapshotPartitions(syncId: string, p: WanPublisher, maps: readonly string[], owned: readonly number[], from: number): void {
    const h = this.h;
    // Taking runs ahead of sending by at most SYNC_AHEAD_ENTRIES: the snapshot of a large map is
    // never all in memory at once.
    if (!this.stopped && p.syncEntriesLeft() > SYNC_AHEAD_ENTRIES) {
      const record = this.records.get(syncId);
      if (record !== undefined && !ended(record)) this.o.timers.setTimeout(() => this.snapshotPartitions(syncId, p, maps, owned, from), SYNC_AHEAD_RECHECK_MS);
      return;
    }
    const nowWall = this.o.clock.nowMs();
    const nowMono = this.o.clock.monotonicMs();
    let taken = 0;
    let i = from;
    for (; i < owned.length && taken < SYNC_SLICE_ENTRIES; i++) {
      const record = this.records.get(syncId);
      if (this.stopped || record === undefined || ended(record)) return;
      const pid = owned[i] as number;
      if (!h.isOwner(pid)) {
        this.reportReleased(syncId, pid);
        continue;
      }
      const version = h.store.version(pid);
      const entries: WanEventWire[] = [];
      for (const name of maps) {
        const policy = this.policyFor(name, p);
        for (const e of h.store.maps.exportMapPartition(name, pid, nowWall)) entries.push(this.syncEvent(pid, version, name, e, policy));
      }
      taken += entries.length;
      if (entries.length === 0) this.reportDone(syncId, pid);
      else p.queue(pid).pushSync(syncId, entries, nowMono);
    }
    p.schedule(0);
    if (i < owned.length) this.o.timers.setTimeout(() => this.snapshotPartitions(syncId, p, maps, owned, i), 0);
  }

  private policyFor(mapName: string, p: WanPublisher): number {
    return this.routesOf(mapName).find((r) => r.publisher === p)?.policy ?? MERGE_POLICY_CODES.PassThroughMergePolicy;
  }

  private syncEvent(pid: number, version: number, map: string, e: MapEntryExport, policy: number): WanEventWire {
    return { partitionId: pid, version, kind: EVENT_SYNC_PUT, map, key: e.key, value: e.value, contentType: e.contentType, creationTimeMs: e.creationTimeMs, updateTimeMs: e.updateTimeMs, lastAccessTimeMs: e.lastAccessTimeMs, entryVersion: e.version, hits: e.hits, ttlMs: e.ttlMs ?? ENTRY_EXPIRY_MAP, maxIdleMs: e.maxIdleMs ?? ENTRY_EXPIRY_MAP, policy, origin: this.h.clusterName };
  }

  /**
   * A consistency check ('check': compare and count) or a delta sync ('delta': compare, then queue
   * only the entries that differ or are missing on the target) of the partitions this member owns,
   * COMPARE_CONCURRENCY partitions at a time.
   */
  private async runCompare(syncId: string, p: WanPublisher, maps: readonly string[], owned: readonly number[], mode: 'check' | 'delta'): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < owned.length && !this.stopped) {
        const pid = owned[next++] as number;
        const counts = { diffPartitions: 0, checkedLeaves: 0, diffLeaves: 0, entriesToSync: 0 };
        const differing: { map: string; keys: Buffer[] }[] = [];
        try {
          for (const map of maps) {
            const c = await this.comparePartition(p, map, pid);
            counts.checkedLeaves += c.result.checkedLeaves;
            counts.diffLeaves += c.result.diffLeaves.length;
            counts.entriesToSync += c.toSync.length;
            if (c.result.diffLeaves.length > 0) counts.diffPartitions = 1;
            if (c.toSync.length > 0) differing.push({ map, keys: c.toSync.map((d) => Buffer.from(d.key)) });
          }
        } catch (e) {
          this.reportFailure(syncId, `partition ${pid}: ${e instanceof Error ? e.message : String(e)}`);
          return;
        }
        const record = this.records.get(syncId);
        const rep = this.report(syncId);
        if (record === undefined || ended(record) || rep === null) return;
        if (mode === 'check') {
          rep.done.add(pid);
          rep.diffPartitions += counts.diffPartitions;
          rep.checkedLeaves += counts.checkedLeaves;
          rep.diffLeaves += counts.diffLeaves;
          rep.entriesToSync += counts.entriesToSync;
          continue;
        }
        if (!this.h.isOwner(pid)) {
          this.reportReleased(syncId, pid); // its new owner runs it
          continue;
        }
        // The differing entries as they are now, at their place in the partition's stream.
        const now = this.o.clock.nowMs();
        const version = this.h.store.version(pid);
        const entries: WanEventWire[] = [];
        for (const d of differing) {
          const policy = this.policyFor(d.map, p);
          for (const e of this.h.store.maps.entriesOf(d.map, pid, d.keys, now)) entries.push(this.syncEvent(pid, version, d.map, e, policy));
        }
        if (entries.length === 0) rep.done.add(pid);
        else {
          p.queue(pid).pushSync(syncId, entries, this.o.clock.monotonicMs());
          p.schedule(0);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(COMPARE_CONCURRENCY, owned.length) }, () => worker()));
  }

  /** Compares one (map, partition) with the target top-down, then the digests of differing leaves. */
  private async comparePartition(p: WanPublisher, map: string, pid: number): Promise<{ result: CompareResult; toSync: MerkleEntryDigest[] }> {
    const ask = async (digests: boolean, request: Buffer): Promise<Uint8Array> => {
      const a = await p.request(pid, { map, partitionId: pid, digests, request });
      if (a === null) throw new Error('the target did not answer a Merkle read within response-timeout-millis');
      if (!a.body.ok) throw new Error(`the target refused a Merkle read: ${a.body.message}`);
      return a.body.answer;
    };
    const nodes = async (ids: readonly number[]): Promise<{ depth: number; hashes: readonly number[] }> => {
      const answer = decodeWith(MERKLE_NODES_ANSWER, await ask(false, encodeWith(MERKLE_NODES_REQUEST, { nodes: ids }, 16 + ids.length * 4)), 'merkle nodes answer');
      if (!isMerkleDepth(answer.depth) || answer.hashes.length !== ids.length) throw new Error('the target answered a Merkle read with the wrong shape');
      return answer;
    };
    const local = this.h.store.maps.merkleTree(map, pid, this.o.clock.nowMs()).snapshot();
    const first = await nodes([0]);
    const comparison = startCompare(local, first.depth);
    let step = comparison.next;
    while (!step.done) step = comparison.step((await nodes(step.request)).hashes);
    const result = step.result;
    if (result.diffLeaves.length === 0) return { result, toSync: [] };
    const remote = decodeWith(LEAF_DIGESTS_ANSWER, await ask(true, encodeWith(LEAF_DIGESTS_REQUEST, { depth: result.depth, leaves: result.diffLeaves }, 16 + result.diffLeaves.length * 4)), 'leaf digests answer');
    if (remote.keyHashes.length !== remote.entryHashes.length) throw new Error('the target answered a digest read with the wrong shape');
    const localDigests = this.h.store.maps.leafDigests(map, pid, result.depth, result.diffLeaves, this.o.clock.nowMs());
    const diff = diffDigests(localDigests, remote.keyHashes.map((k, i) => ({ keyHash: k, entryHash: remote.entryHashes[i] as number })));
    return { result, toSync: diff.toSync };
  }

  /** This member's uuid (set by the host). */
  selfId = '';

  private onSyncReport(from: Peer, m: MessageOf<'wanSyncReport'>): void {
    const b = m.body;
    if (b.total !== this.partitionCount) return;
    const r = this.records.open(b.syncId, b.kind === SYNC_KIND_CHECK ? 'check' : 'sync', b.replication, b.publisherId, b.creationTimeMs, b.total);
    if (b.gossip) {
      const wasEnded = ended(r);
      this.records.merge(r, b.done, b.failure, r.kind === 'check' ? { diffPartitions: b.diffPartitions, checkedLeaves: b.checkedLeaves, diffLeaves: b.diffLeaves, entriesToSync: b.entriesToSync } : null);
      if (!wasEnded && ended(r)) this.o.log.info(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} ${r.stage === 'FINISHED' ? 'finished' : `failed: ${r.failure}`} (learnt from another member)`);
      return;
    }
    this.records.started(r, from.uuid, b.started);
    this.records.released(r, from.uuid, b.released);
    this.records.done(r, from.uuid, b.done, r.kind === 'check' ? { diffPartitions: b.diffPartitions, checkedLeaves: b.checkedLeaves, diffLeaves: b.diffLeaves, entriesToSync: b.entriesToSync } : undefined);
    if (b.failure !== '') {
      if (!ended(r)) this.o.log.warning(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} failed: ${b.failure}`);
      this.records.fail(r, b.failure);
    } else if (r.stage === 'FINISHED' && from.uuid === this.selfId) {
      this.o.log.info(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} finished`);
    }
  }

  /** A member left the cluster: its unfinished sync partitions go to their new owners (takeOverSyncs). */
  onMemberRemoved(uuid: string): void {
    for (const r of this.records.memberLeft(uuid)) this.o.log.info(`WAN sync ${r.id} of ${r.replication}/${r.publisherId}: member ${uuid} left with partitions unfinished; their new owners sync them`);
  }

  /** What this member knows of a record, for gossip and joiners (counts are totals). */
  private gossipOf(r: SyncRecord): MessageOf<'wanSyncReport'>['body'] {
    return {
      syncId: r.id,
      kind: r.kind === 'check' ? SYNC_KIND_CHECK : SYNC_KIND_FULL,
      replication: r.replication,
      publisherId: r.publisherId,
      creationTimeMs: r.creationTimeMs,
      total: r.total,
      started: [],
      done: [...r.done],
      released: [],
      failure: r.stage === 'FAILED' ? r.failure || 'failed' : '',
      diffPartitions: r.check.diffPartitions,
      checkedLeaves: r.check.checkedLeaves,
      diffLeaves: r.check.diffLeaves,
      entriesToSync: r.check.entriesToSync,
      gossip: true,
    };
  }

  /** Every STALL_CHECK_MS: the acknowledged points of owned partitions go to their backups again (see ackedTo). */
  private refreshAcks(): void {
    for (const [key, acked] of this.ackedTo) {
      if (!this.publishers.has(key)) continue;
      let m: Map<number, number> | undefined;
      for (let pid = 0; pid < acked.length; pid++) {
        const v = acked[pid] as number;
        if (v === 0 || !this.h.isOwner(pid)) continue;
        if (m === undefined) {
          m = this.pendingAcks.get(key);
          if (m === undefined) this.pendingAcks.set(key, (m = new Map()));
        }
        m.set(pid, Math.max(v, m.get(pid) ?? 0));
      }
    }
    if (this.pendingAcks.size > 0) this.scheduleFlush();
  }

  /** Every STALL_CHECK_MS: records running or ended lately go to every other member, so a lost report heals. */
  private gossip(): void {
    const recent = this.records.recent(GOSSIP_AFTER_END_MS);
    if (recent.length === 0 || !this.h.joined()) return;
    for (const u of this.h.memberUuids()) {
      if (u === this.selfId) continue;
      for (const r of recent) this.h.sendTo(u, message('wanSyncReport', this.gossipOf(r)));
    }
  }

  private checkStalls(): void {
    this.stallTimer = null;
    if (this.stopped) return;
    for (const r of this.records.checkStalls()) this.o.log.warning(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} failed: ${r.failure}`);
    this.gossip();
    this.refreshAcks();
    this.stallTimer = this.o.timers.setTimeout(() => this.checkStalls(), STALL_CHECK_MS);
  }

  // ── dynamic configuration ────────────────────────────────────────────────────────────────────

  /** Merges schemes (addWanConfig, or shipped by another member); returns which publisher ids were new. */
  addSchemes(incoming: readonly WanReplicationConfig[]): { added: string[]; ignored: string[] } {
    const added: string[] = [];
    const ignored: string[] = [];
    for (const scheme of incoming) {
      let mine = this.schemes.find((s) => s.name === scheme.name);
      if (mine === undefined) this.schemes.push((mine = { name: scheme.name, publishers: [] }));
      let rec = this.added.find((s) => s.name === scheme.name);
      if (rec === undefined) this.added.push((rec = { name: scheme.name, publishers: [] }));
      for (const pc of scheme.publishers) {
        if (mine.publishers.some((x) => x.publisherId === pc.publisherId)) {
          ignored.push(pc.publisherId);
          continue;
        }
        (mine.publishers as WanBatchPublisherConfig[]).push(pc);
        (rec.publishers as WanBatchPublisherConfig[]).push(pc);
        this.createPublisher(scheme.name, pc);
        added.push(pc.publisherId);
      }
    }
    this.routes.clear();
    this.updateListener();
    return { added, ignored };
  }

  /**
   * A member joined: it gets the schemes added at run time, and the syncs and checks still running
   * (announcement, then what is done so far), so it answers their progress and takes over the
   * partitions that migrate to it.
   */
  shipAddedTo(uuid: string): void {
    if (this.added.length > 0) this.h.sendTo(uuid, message('wanConfigAdd', { schemes: this.added.map((s) => this.encodeScheme(s)) }));
    // Running ones with their announcement (the joiner takes over partitions that migrate to it),
    // every one still kept with what is known of it, so the joiner answers their progress.
    for (const r of this.records.all()) {
      if (!ended(r) && r.maps !== null) {
        const kind = r.kind === 'check' ? SYNC_KIND_CHECK : SYNC_KIND_FULL;
        this.h.sendTo(uuid, message('wanSyncStart', { syncId: r.id, kind, replication: r.replication, publisherId: r.publisherId, maps: [...r.maps], allMaps: r.allMaps, creationTimeMs: r.creationTimeMs, total: r.total }));
      }
      this.h.sendTo(uuid, message('wanSyncReport', this.gossipOf(r)));
    }
  }

  private encodeScheme(scheme: WanReplicationConfig): string {
    return wanConfigToJson(scheme);
  }

  /** A scheme shipped by another member; a bad one is logged and skipped (members run the same code). */
  private decodeScheme(json: string): WanReplicationConfig | null {
    try {
      return parseWanConfigJson(json, { bytesMax: this.o.config.properties.memberFrameBytesMax });
    } catch (e) {
      this.o.log.warning(`WAN configuration from another member not taken: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  private onConfigAdd(from: Peer, m: MessageOf<'wanConfigAdd'>): void {
    const schemes: WanReplicationConfig[] = [];
    for (const json of m.body.schemes) {
      const s = this.decodeScheme(json);
      if (s !== null) schemes.push(s);
    }
    const r = this.addSchemes(schemes);
    if (r.added.length > 0) this.o.log.info(`WAN configuration added by another member: publisher(s) ${r.added.join(', ')}`);
    if (m.callId !== 0) this.h.sendTo(from.uuid, message('wanConfigAck', { uuid: this.selfId }, m.callId));
  }

  /**
   * addWanConfig: one scheme as JSON (the reference's field names), merged here, then on every other
   * member: sent again every 500 ms to those that have not confirmed, for at most 10 s. Resolves once
   * every member has it; otherwise rejects with 503 naming the members that did not confirm (the
   * members that have it keep it; repeating the call is harmless).
   */
  addConfigJson(json: string): Promise<{ addedPublisherIds: string[]; ignoredPublisherIds: string[] }> {
    const scheme = parseWanConfigJson(json);
    mergeWanConfig(this.schemes, scheme); // refuses (400) a merge that would pass the limits, before anything changes
    const r = this.addSchemes([scheme]);
    if (r.added.length > 0) this.o.log.info(`WAN configuration added: scheme ${scheme.name}, publisher(s) ${r.added.join(', ')}${r.ignored.length > 0 ? `; already present: ${r.ignored.join(', ')}` : ''}`);
    const result = { addedPublisherIds: r.added, ignoredPublisherIds: r.ignored };
    const waiting = new Set(this.h.memberUuids().filter((u) => u !== this.selfId));
    if (waiting.size === 0) return Promise.resolve(result);
    const callId = this.nextCallId++;
    const body = { schemes: [this.encodeScheme(scheme)] };
    return new Promise((resolve, reject) => {
      const startedMs = this.o.clock.monotonicMs();
      let timer: TimerHandle | null = null;
      const finish = (): void => {
        this.configAcks.delete(callId);
        if (timer !== null) this.o.timers.clearTimeout(timer);
      };
      this.configAcks.set(callId, (uuid) => {
        waiting.delete(uuid);
        if (waiting.size > 0) return;
        finish();
        resolve(result);
      });
      const send = (): void => {
        for (const u of [...waiting]) {
          if (!this.h.memberUuids().includes(u)) waiting.delete(u); // left: it gets no config; a rejoin is a joiner
          else this.h.sendTo(u, message('wanConfigAdd', body, callId));
        }
        if (waiting.size === 0) {
          finish();
          resolve(result);
          return;
        }
        if (this.o.clock.monotonicMs() - startedMs >= CONFIG_ACK_WAIT_MS) {
          finish();
          reject(new GridError('ERR_CLUSTER_UNAVAILABLE', `WAN configuration ${scheme.name} is in place here, but ${waiting.size} member(s) did not confirm it within ${CONFIG_ACK_WAIT_MS / 1000} s; call again (it is idempotent)`, { retryAfterSeconds: 1 }));
          return;
        }
        timer = this.o.timers.setTimeout(send, CONFIG_RESEND_MS);
      };
      send();
    });
  }

  private readonly configAcks = new Map<number, (uuid: string) => void>();

  startConsistencyCheck(replication: string, publisherId: string, mapName: string): string {
    const p = this.publisher(replication, publisherId);
    if (p.config.consistencyCheckStrategy !== 'MERKLE_TREES') throw new GridError('ERR_WAN_NOT_MERKLE', `WAN publisher ${p.key} has consistency-check-strategy ${p.config.consistencyCheckStrategy}; a consistency check needs MERKLE_TREES`);
    const id = this.o.newUuid();
    const creationTimeMs = this.o.clock.nowMs();
    this.records.open(id, 'check', replication, publisherId, creationTimeMs, this.partitionCount);
    const body = { syncId: id, kind: SYNC_KIND_CHECK, replication, publisherId, maps: [mapName], allMaps: false, creationTimeMs, total: this.partitionCount };
    for (const u of this.h.memberUuids()) this.h.sendTo(u, message('wanSyncStart', body));
    this.o.log.info(`WAN ${p.key}: consistency check ${id} of map ${mapName} started`);
    return id;
  }

  checkResult(id: string): { stage: SyncStage; checkedPartitions: number; diffPartitions: number; checkedLeaves: number; diffLeaves: number; entriesToSync: number } | null {
    const r = this.records.get(id);
    if (r === undefined || r.kind !== 'check') return null;
    return { stage: r.stage, ...r.check };
  }

  replicationNames(): string[] {
    return this.schemes.map((s) => s.name);
  }

  // ── figures ──────────────────────────────────────────────────────────────────────────────────

  figures(): Record<string, WanPublisherFigures> {
    const out: Record<string, WanPublisherFigures> = {};
    for (const p of this.publishers.values()) {
      let syncsRunning = 0;
      for (const r of this.records.all()) if (!ended(r) && r.replication === p.replication && r.publisherId === p.config.publisherId) syncsRunning++;
      out[p.key] = {
        state: p.state,
        queued: p.primaryQueued(),
        backupQueued: p.backupQueued(),
        sent: p.counters.sent,
        acked: p.counters.acked,
        dropped: p.counters.dropped,
        resent: p.counters.resent,
        lagMs: p.lagMs(),
        syncsRunning,
        bytesSent: this.transports.get(p.key)?.traffic?.().sent ?? 0,
        bytesReceived: this.transports.get(p.key)?.traffic?.().received ?? 0,
      };
    }
    return out;
  }
}
