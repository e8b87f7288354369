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
import type { EventSink } from '../util/timeline.js';
import type { Config, MapConfig, WanBatchPublisherConfig, WanReplicationConfig } from '../config/types.js';
import { resolveMapConfig } from '../config/match.js';
import type { MemberService } from '../cluster/service.js';
import { message, type Message, type MessageKind, type MessageOf, type OpWire, type WanEventWire, type WanQueueWire } from '../cluster/messages.js';
import type { Peer, Transport, TransportHandler } from '../cluster/transport.js';
import { OP, type MapMutation, type PartitionSidecar, type ReplicaStore } from '../data/replica-store.js';
import { MERGE_POLICY_CODES } from '../data/merge-policy.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import { EVENT_CLEAR, EVENT_PUT, EVENT_REMOVE } from './event-queue.js';
import { ENTRY_EXPIRY_MAP } from '../data/expiry.js';
import { WanPublisher, type PublisherState } from './publisher.js';
import { WanSyncs } from './sync-coordinator.js';
import type { WanHost } from './host.js';

export type { WanHost } from './host.js';

export type { SyncProgress } from './sync-coordinator.js';
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

/**
 * Where an incarnation's call ids start: a 32-bit FNV-1a hash of a fresh uuid times 2^20, so two
 * incarnations' ranges overlap only if their hashes collide (and a member makes 2^20 calls first).
 */
function callIdStart(uuid: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uuid.length; i++) h = Math.imul(h ^ uuid.charCodeAt(i), 0x01000193) >>> 0;
  return 1 + h * 2 ** 20;
}

export interface WanServiceOptions {
  readonly config: Config;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: ComponentLogger;
  readonly newUuid: () => string;
  /** The cluster's timeline: syncs and consistency checks started and ended here. */
  readonly events?: EventSink;
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

interface Route {
  readonly publisher: WanPublisher;
  readonly policy: number;
  readonly republish: boolean;
  readonly targetCluster: string;
}

export class WanService implements PartitionSidecar, MemberService {
  readonly name = 'wan';
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
  /** Syncs and consistency checks (sync-coordinator.ts). */
  readonly syncs: WanSyncs;
  private readonly pendingAcks = new Map<string, Map<number, number>>();
  /**
   * Per publisher key, per partition: the highest version this member (as owner) told backups was
   * acknowledged. Sent again to the current backups every STALL_CHECK_MS: a backup that received the
   * partition's queue (migration, resync) after the prune went out would otherwise keep those events
   * until the partition's next acknowledgement.
   */
  private readonly ackedTo = new Map<string, number[]>();
  private flushTimer: TimerHandle | null = null;
  private stallTimer: TimerHandle | null = null;
  private host: WanHost | null = null;
  private stopped = false;
  private readonly partitionCount: number;

  constructor(private readonly o: WanServiceOptions) {
    this.partitionCount = o.config.properties.partitionCount;
    this.schemes = o.config.wanReplications.map((w) => ({ name: w.name, publishers: [...w.publishers] }));
    this.target = new WanTarget({ partitionCount: this.partitionCount, keyBytesMax: o.keyBytesMax, valueBytesMax: o.valueBytesMax, log: o.log });
    this.syncs = new WanSyncs(
      {
        host: () => this.h,
        selfId: () => this.selfId,
        stopped: () => this.stopped,
        publisherByKey: (key) => this.publishers.get(key),
        publisherNamed: (replication, publisherId) => this.publisher(replication, publisherId),
        policyFor: (mapName, p) => this.policyFor(mapName, p),
        mapConfig: (name) => this.mapConfig(name),
        scheduleFlush: () => this.scheduleFlush(),
      },
      this.partitionCount,
      o,
    );
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
      onSyncPartitionDone: (syncId, p) => this.syncs.reportDone(syncId, p),
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
      for (const syncId of dropped) this.syncs.reportReleased(syncId, partitionId);
      p.recount();
      if (this.h.isOwner(partitionId)) p.schedule(0);
    }
  }

  dropPartition(partitionId: number): void {
    for (const p of this.publishers.values()) {
      const q = p.queues[partitionId];
      if (q === undefined) continue;
      for (const syncId of q.clearAll()) this.syncs.reportReleased(syncId, partitionId);
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
          if (item.type === 'sync' && q.dropSync(item.syncId)) this.syncs.reportReleased(item.syncId, pid);
        }
      }
      p.recount();
      p.schedule(0);
    }
    const gained = changed.filter((pid) => this.h.isOwner(pid));
    if (gained.length > 0) this.syncs.takeOverSyncs(gained);
  }

  // ── messages ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The message kinds this room owns (cluster/service.ts). The answers of another cluster
   * (wanBatchAck, wanMerkleAnswer) come on a publisher's own connection (publisher.ts).
   */
  readonly kinds: readonly MessageKind[] = ['wanBatch', 'wanMerkleRequest', 'wanAcked', 'wanSyncStart', 'wanSyncReport', 'wanConfigAdd', 'wanConfigAck', 'wanBatchAck', 'wanMerkleAnswer'];

  /** Member-protocol messages of this room; returns false for others. */
  handle(from: Peer, m: Message): boolean {
    // A batch or a Merkle request may come from another cluster; everything else only from members.
    if (m.kind !== 'wanBatch' && m.kind !== 'wanMerkleRequest' && from.uuid !== this.selfId && !this.h.isMember(from.uuid)) return true;
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
        this.syncs.onSyncStart(m);
        return true;
      case 'wanSyncReport':
        this.syncs.onSyncReport(from, m);
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
    this.syncs.flushReports();
  }

  // ── syncs ────────────────────────────────────────────────────────────────────────────────────

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
    this.syncs.failSyncsOf(p);
  }

  clearQueues(replication: string, publisherId: string): number {
    const p = this.publisher(replication, publisherId);
    const n = p.clearQueues();
    p.recount();
    this.o.log.info(`WAN ${p.key}: ${n} queued event(s) cleared`);
    return n;
  }

  /** The merge-policy code the publisher's events of a map carry. */
  private policyFor(mapName: string, p: WanPublisher): number {
    return this.routesOf(mapName).find((r) => r.publisher === p)?.policy ?? MERGE_POLICY_CODES.PassThroughMergePolicy;
  }

  /** This member's uuid (set by the host). */
  selfId = '';

  /** A member left the cluster: its unfinished sync partitions go to their new owners (takeOverSyncs). */
  memberRemoved(uuid: string): void {
    this.syncs.memberLeft(uuid);
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

  private checkStalls(): void {
    this.stallTimer = null;
    if (this.stopped) return;
    this.syncs.checkStalls();
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
  memberAdded(uuid: string): void {
    if (uuid !== this.selfId) this.shipAddedTo(uuid);
  }

  private shipAddedTo(uuid: string): void {
    if (this.added.length > 0) this.h.sendTo(uuid, message('wanConfigAdd', { schemes: this.added.map((s) => this.encodeScheme(s)) }));
    this.syncs.shipTo(uuid);
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

  replicationNames(): string[] {
    return this.schemes.map((s) => s.name);
  }

  // ── figures ──────────────────────────────────────────────────────────────────────────────────

  figures(): Record<string, WanPublisherFigures> {
    const out: Record<string, WanPublisherFigures> = {};
    for (const p of this.publishers.values()) {
      const syncsRunning = this.syncs.runningCount(p);
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
