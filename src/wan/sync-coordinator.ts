// WAN syncs and consistency checks on one member (wan.md "Sync"): the member a call reaches opens a
// record and tells every member (wanSyncStart); each member takes its share, the partitions it
// owns, into its publisher's queues (a full sync: every entry, a slice per turn of the event loop;
// a delta sync or a check: the Merkle comparison with the target first), and reports what it
// started, finished or released (a partition that moved away goes to its new owner, who takes it
// over) in wanSyncReport. Every member keeps the records, gossips those running or ended lately so
// a lost report heals, and answers progress calls from them.
import type { EventSink } from '../util/timeline.js';
import { message, type MessageOf, type WanEventWire } from '../cluster/messages.js';
import type { Peer } from '../cluster/transport.js';
import type { MapConfig } from '../config/types.js';
import { LEAF_DIGESTS_ANSWER, LEAF_DIGESTS_REQUEST, MERKLE_NODES_ANSWER, MERKLE_NODES_REQUEST } from '../data/replica-store.js';
import { decodeWith, encodeWith } from '../cluster/protocol/schema-codec.js';
import { isMerkleDepth } from '../data/merkle-tree.js';
import type { MapEntryExport, MerkleEntryDigest } from '../data/map-service.js';
import { ENTRY_EXPIRY_MAP } from '../data/expiry.js';
import { GridError } from '../util/errors.js';
import type { Clock, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';
import { diffDigests, startCompare, type CompareResult } from './merkle-compare.js';
import { EVENT_SYNC_PUT } from './event-queue.js';
import type { WanPublisher } from './publisher.js';
import { ended, progressOf, SyncRecords, type SyncRecord, type SyncStage } from './sync-records.js';
import type { WanHost } from './host.js';

const SYNC_KIND_FULL = 1;
const SYNC_KIND_CHECK = 2;
/** Records ended this long ago are still gossiped (a member that missed the end learns it). */
const GOSSIP_AFTER_END_MS = 2 * 60 * 1000;
/** Entries a full sync takes from this member's partitions per turn of the event loop (snapshotPartitions). */
const SYNC_SLICE_ENTRIES = 20_000;
/** A full sync takes no more slices while this many of its publisher's sync entries wait here unacknowledged. */
const SYNC_AHEAD_ENTRIES = 60_000;
const SYNC_AHEAD_RECHECK_MS = 10;
/** Partitions one member compares with the target at once (consistency checks, delta syncs). */
const COMPARE_CONCURRENCY = 16;

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

/** What syncs need of the WAN room (wan-service.ts passes it in). */
export interface SyncsHost {
  host(): WanHost;
  selfId(): string;
  stopped(): boolean;
  publisherByKey(key: string): WanPublisher | undefined;
  /** The publisher a management call names, or 404 (ERR_WAN_UNKNOWN). */
  publisherNamed(replication: string, publisherId: string): WanPublisher;
  /** The merge-policy code the publisher's events of a map carry. */
  policyFor(mapName: string, p: WanPublisher): number;
  mapConfig(name: string): MapConfig;
  /** Reports go out with the next flush (FLUSH_INTERVAL_MS). */
  scheduleFlush(): void;
}

export class WanSyncs {
  readonly records: SyncRecords;
  private readonly pendingReports = new Map<string, PendingReport>();

  constructor(
    private readonly x: SyncsHost,
    private readonly partitionCount: number,
    private readonly o: { readonly clock: Clock; readonly timers: Timers; readonly log: ComponentLogger; readonly newUuid: () => string; readonly events?: EventSink },
  ) {
    this.records = new SyncRecords(() => o.clock.monotonicMs());
  }

  private get h(): WanHost {
    return this.x.host();
  }

  /** Sends the reports gathered since the last flush to every member. */
  flushReports(): void {
    const h = this.h;
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

  /** The publisher was stopped: its running syncs end FAILED. */
  failSyncsOf(p: WanPublisher): void {
    for (const r of this.records.all()) {
      if (ended(r) || r.replication !== p.replication || r.publisherId !== p.config.publisherId || r.kind !== 'sync') continue;
      for (const q of p.queues) q?.dropSync(r.id);
      this.records.fail(r, 'the publisher was stopped');
      this.reportFailure(r.id, `the publisher was stopped on a member`);
    }
  }

  /** Syncs and checks of a publisher still running. */
  runningCount(p: WanPublisher): number {
    let n = 0;
    for (const r of this.records.all()) if (!ended(r) && r.replication === p.replication && r.publisherId === p.config.publisherId) n++;
    return n;
  }

  /** A member left the cluster: its unfinished sync partitions go to their new owners (takeOverSyncs). */
  memberLeft(uuid: string): void {
    for (const r of this.records.memberLeft(uuid)) this.o.log.info(`WAN sync ${r.id} of ${r.replication}/${r.publisherId}: member ${uuid} left with partitions unfinished; their new owners sync them`);
  }

  /**
   * A member joined: the syncs and checks still running (announcement, then what is done so far),
   * so it answers their progress and takes over the partitions that migrate to it; every record
   * still kept with what is known of it.
   */
  shipTo(uuid: string): void {
    for (const r of this.records.all()) {
      if (!ended(r) && r.maps !== null) {
        const kind = r.kind === 'check' ? SYNC_KIND_CHECK : SYNC_KIND_FULL;
        this.h.sendTo(uuid, message('wanSyncStart', { syncId: r.id, kind, replication: r.replication, publisherId: r.publisherId, maps: [...r.maps], allMaps: r.allMaps, creationTimeMs: r.creationTimeMs, total: r.total }));
      }
      this.h.sendTo(uuid, message('wanSyncReport', this.gossipOf(r)));
    }
  }

  /** Every stall check: records whose members went silent fail; lately running or ended ones are gossiped. */
  checkStalls(): void {
    for (const r of this.records.checkStalls()) this.o.log.warning(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} failed: ${r.failure}`);
    this.gossip();
  }

  private report(syncId: string): PendingReport | null {
    const record = this.records.get(syncId);
    if (record === undefined) return null;
    let rep = this.pendingReports.get(syncId);
    if (rep === undefined) this.pendingReports.set(syncId, (rep = { started: new Set(), done: new Set(), released: new Set(), failure: '', record, diffPartitions: 0, checkedLeaves: 0, diffLeaves: 0, entriesToSync: 0 }));
    this.x.scheduleFlush();
    return rep;
  }

  reportDone(syncId: string, partitionId: number): void {
    this.report(syncId)?.done.add(partitionId);
  }

  /** This member no longer runs a partition of a sync (it moved away); its new owner takes it over. */
  reportReleased(syncId: string, partitionId: number): void {
    const rep = this.report(syncId);
    if (rep === null) return;
    rep.started.delete(partitionId);
    rep.released.add(partitionId);
  }

  reportFailure(syncId: string, reason: string): void {
    const rep = this.report(syncId);
    if (rep !== null && rep.failure === '') rep.failure = reason;
  }

  /** sync/map (mapName) or sync/allmaps (null): this member coordinates; returns the sync's id. */
  startSync(replication: string, publisherId: string, mapName: string | null): string {
    const p = this.x.publisherNamed(replication, publisherId);
    if (p.state === 'STOPPED') throw new GridError('ERR_WAN_SYNC_RUNNING', `WAN publisher ${p.key} is STOPPED: resume it before a sync`);
    const running = this.records.running(replication, publisherId, 'sync');
    if (running !== null) throw new GridError('ERR_WAN_SYNC_RUNNING', `a sync of WAN publisher ${p.key} is running (${running.id}, ${progressOf(running)}%)`);
    const id = this.o.newUuid();
    const creationTimeMs = this.o.clock.nowMs();
    this.records.open(id, 'sync', replication, publisherId, creationTimeMs, this.partitionCount);
    const body = { syncId: id, kind: SYNC_KIND_FULL, replication, publisherId, maps: mapName === null ? [] : [mapName], allMaps: mapName === null, creationTimeMs, total: this.partitionCount };
    for (const u of this.h.memberUuids()) this.h.sendTo(u, message('wanSyncStart', body));
    this.o.log.info(`WAN ${p.key}: sync ${id} of ${mapName === null ? 'all maps' : `map ${mapName}`} started`);
    this.o.events?.record('wan-sync', `WAN ${p.key}: sync ${id} of ${mapName === null ? 'all maps' : `map ${mapName}`} started`);
    return id;
  }

  progress(id: string): SyncProgress | null {
    const r = this.records.get(id);
    if (r === undefined) return null;
    return { stage: r.stage, progress: progressOf(r), wanReplicationName: r.replication, wanPublisherId: r.publisherId, creationTime: r.creationTimeMs };
  }

  onSyncStart(m: MessageOf<'wanSyncStart'>): void {
    const b = m.body;
    if (b.total !== this.partitionCount) return;
    const check = b.kind === SYNC_KIND_CHECK;
    this.records.open(b.syncId, check ? 'check' : 'sync', b.replication, b.publisherId, b.creationTimeMs, b.total);
    const p = this.x.publisherByKey(`${b.replication}/${b.publisherId}`);
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
    const maps = r.allMaps ? h.store.maps.mapNames().filter((n) => this.x.mapConfig(n).wanReplicationRef?.name === r.replication) : [...r.maps];
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
    if (!this.x.stopped() && p.syncEntriesLeft() > SYNC_AHEAD_ENTRIES) {
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
      if (this.x.stopped() || record === undefined || ended(record)) return;
      const pid = owned[i] as number;
      if (!h.isOwner(pid)) {
        this.reportReleased(syncId, pid);
        continue;
      }
      const version = h.store.version(pid);
      const entries: WanEventWire[] = [];
      for (const name of maps) {
        const policy = this.x.policyFor(name, p);
        for (const e of h.store.maps.exportMapPartition(name, pid, nowWall)) entries.push(this.syncEvent(pid, version, name, e, policy));
      }
      taken += entries.length;
      if (entries.length === 0) this.reportDone(syncId, pid);
      else p.queue(pid).pushSync(syncId, entries, nowMono);
    }
    p.schedule(0);
    if (i < owned.length) this.o.timers.setTimeout(() => this.snapshotPartitions(syncId, p, maps, owned, i), 0);
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
      while (next < owned.length && !this.x.stopped()) {
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
          const policy = this.x.policyFor(d.map, p);
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

  onSyncReport(from: Peer, m: MessageOf<'wanSyncReport'>): void {
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
      if (!ended(r)) this.o.events?.record(r.kind === 'check' ? 'wan-consistency-check' : 'wan-sync', `WAN ${r.replication}/${r.publisherId}: ${r.kind === 'check' ? 'consistency check' : 'sync'} ${r.id} failed: ${b.failure}`);
      this.records.fail(r, b.failure);
    } else if (r.stage === 'FINISHED' && from.uuid === this.x.selfId()) {
      this.o.log.info(`WAN sync ${r.id} of ${r.replication}/${r.publisherId} finished`);
      this.o.events?.record(r.kind === 'check' ? 'wan-consistency-check' : 'wan-sync', `WAN ${r.replication}/${r.publisherId}: ${r.kind === 'check' ? 'consistency check' : 'sync'} ${r.id} finished`);
    }
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

  /** Every STALL_CHECK_MS: records running or ended lately go to every other member, so a lost report heals. */
  gossip(): void {
    const recent = this.records.recent(GOSSIP_AFTER_END_MS);
    if (recent.length === 0 || !this.h.joined()) return;
    for (const u of this.h.memberUuids()) {
      if (u === this.x.selfId()) continue;
      for (const r of recent) this.h.sendTo(u, message('wanSyncReport', this.gossipOf(r)));
    }
  }

  /** Starts, for partitions this member now owns, the running syncs and checks that have not finished them here. */
  takeOverSyncs(partitions: readonly number[]): void {
    for (const r of this.records.all()) {
      if (ended(r) || r.maps === null) continue;
      const p = this.x.publisherByKey(`${r.replication}/${r.publisherId}`);
      if (p === undefined || (r.kind === 'sync' && p.state === 'STOPPED')) continue;
      const mine = r.started.get(this.x.selfId());
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

  startConsistencyCheck(replication: string, publisherId: string, mapName: string): string {
    const p = this.x.publisherNamed(replication, publisherId);
    if (p.config.consistencyCheckStrategy !== 'MERKLE_TREES') throw new GridError('ERR_WAN_NOT_MERKLE', `WAN publisher ${p.key} has consistency-check-strategy ${p.config.consistencyCheckStrategy}; a consistency check needs MERKLE_TREES`);
    const id = this.o.newUuid();
    const creationTimeMs = this.o.clock.nowMs();
    this.records.open(id, 'check', replication, publisherId, creationTimeMs, this.partitionCount);
    const body = { syncId: id, kind: SYNC_KIND_CHECK, replication, publisherId, maps: [mapName], allMaps: false, creationTimeMs, total: this.partitionCount };
    for (const u of this.h.memberUuids()) this.h.sendTo(u, message('wanSyncStart', body));
    this.o.log.info(`WAN ${p.key}: consistency check ${id} of map ${mapName} started`);
    this.o.events?.record('wan-consistency-check', `WAN ${p.key}: consistency check ${id} of map ${mapName} started`);
    return id;
  }

  checkResult(id: string): { stage: SyncStage; checkedPartitions: number; diffPartitions: number; checkedLeaves: number; diffLeaves: number; entriesToSync: number } | null {
    const r = this.records.get(id);
    if (r === undefined || r.kind !== 'check') return null;
    return { stage: r.stage, ...r.check };
  }
}
