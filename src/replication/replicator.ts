// Replication of partition data between replicas: the owner's backup fan-out with sync acks, the
// backup side's in-order apply with gap detection, whole-partition transfers in bounded chunks
// (used by resync and by migration), and periodic anti-entropy.
//
// Invariants:
// - An owner sends a partition's backups in data-version order on each link; a write is answered
//   only when every sync target acked it, or after backupTimeoutMs (then it stands, is logged and
//   counted).
// - A backup applies version v only on top of v - 1. A gap means it missed a write: it buffers what
//   it got, asks the owner for the whole partition, and acks the buffered writes only once they are
//   applied on top of that snapshot. So an ack always means "this replica holds the write".
// - A transfer is applied atomically on the receiver: chunks are collected and imported together
//   after the last one, so a half-received partition is never served or promoted.
import type { BackupOpWire, EntryWire, Message, MessageKind, MessageOf, QueueWire, WanQueueWire } from '../cluster/messages.js';
import { message } from '../cluster/messages.js';
import type { MemberService } from '../cluster/service.js';
import { snapshotChunks, type SnapshotChunk } from './snapshot-chunks.js';
import type { Peer, Transport } from '../cluster/transport.js';
import type { ReplicaStore } from '../data/replica-store.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

export interface ReplicatorOptions {
  readonly backupTimeoutMs: number;
  readonly transferAckTimeoutMs: number;
  readonly chunkBytesMax: number;
  readonly antiEntropyIntervalMs: number;
  /** Buffered backups per partition while a snapshot is awaited. */
  readonly bufferedBackupsMax: number;
}

export interface ReplicatorHost {
  readonly selfUuid: string;
  addressOf(uuid: string): string | null;
  /** Whether `uuid` is in this member's member list (a peer on another side of a split is not). */
  isMember(uuid: string): boolean;
  /** Replica list of a partition from the current table (index 0 = owner). */
  replicas(partitionId: number): readonly (string | null)[];
  /** Sync backup count for a structure (its config's backup-count). */
  syncBackups(kind: 'map' | 'queue', name: string): number;
  /** Called when a partition has no write waiting for backup acks any more. */
  onBackupsSettled(partitionId: number): void;
  /** A whole partition was imported here (a snapshot arrived): this member holds it again. */
  onPartitionImported(partitionId: number): void;
  /**
   * Runs `send` (an acknowledgement of applied data) once what was just applied is persisted as its
   * structures ask; absent: at once. A failure to persist withholds the acknowledgement.
   */
  whenPersisted?(send: () => void): void;
}

interface PendingAck {
  readonly partitionId: number;
  readonly op: BackupOpWire;
  readonly waiting: Set<string>;
  readonly done: () => void;
  readonly timer: TimerHandle;
}

interface Outgoing {
  readonly transferId: number;
  readonly partitionId: number;
  readonly target: string;
  readonly chunks: SnapshotChunk[];
  readonly version: number;
  next: number;
  timer: TimerHandle | null;
  readonly done: (ok: boolean) => void;
}

interface Incoming {
  readonly transferId: number;
  readonly from: string;
  readonly entries: EntryWire[];
  readonly queues: QueueWire[];
  readonly wan: WanQueueWire[];
  nextIndex: number;
  /** `bufferSeq` when the transfer's first chunk arrived: backups buffered before it were sent before the snapshot was taken. */
  readonly startSeq: number;
}

interface Buffered {
  readonly from: Peer;
  readonly callId: number;
  readonly version: number;
  readonly op: BackupOpWire;
  /** Order of arrival among buffered backups (bufferSeq). */
  readonly seq: number;
}

export class Replicator implements MemberService {
  readonly name = 'replication';
  private nextCallId = 1;
  private nextTransferId = 1;
  /** Counts backups as they are buffered, to tell those that arrived before a snapshot from those after. */
  private bufferSeq = 0;
  private readonly pendingAcks = new Map<number, PendingAck>();
  private readonly inflight: number[];
  /** Extra sync targets per partition: migration destinations receiving live writes. */
  private readonly extraTargets = new Map<number, Set<string>>();
  private readonly outgoing = new Map<number, Outgoing>();
  private readonly incoming = new Map<number, Incoming>();
  private readonly buffered = new Map<number, Buffered[]>();
  /** Partitions whose resync was requested and not yet received, with when. */
  private readonly resyncAsked = new Map<number, number>();
  /**
   * Owner side: backups that may miss writes (a sync ack timed out), per partition. A snapshot is
   * pushed to them; they count as in sync again only once one was applied there.
   */
  private readonly stale = new Map<number, Set<string>>();
  /**
   * Writes that stood without a backup's ack, per partition, until a snapshot reached every stale
   * replica. If this member is cut off from the cluster before that, they are replayed into it when
   * it joins again (ClusterNode), so a write acknowledged after the backup timeout is not lost.
   */
  private readonly unconfirmed = new Map<number, BackupOpWire[]>();
  private unconfirmedCount = 0;
  /**
   * Per partition, the owner whose stream of writes the local copy follows (the sender of the last
   * snapshot or backup applied). Versions of two owners' streams can collide (each starts at a
   * jump from a copy that may be stale), so a write at or below the local version counts as a
   * duplicate only from that owner; from another it means the copy is of another lineage: resync.
   */
  private readonly lineage = new Map<number, string>();
  /** Owner versions seen at the previous anti-entropy round, per partition. */
  private readonly lastAdvertised = new Map<number, number>();
  private antiEntropyTimer: TimerHandle | null = null;
  readonly counters = { backupsSent: 0, backupAckTimeouts: 0, resyncsRequested: 0, transfersSent: 0, transfersReceived: 0, transfersFailed: 0, unconfirmedDropped: 0, bufferedDropped: 0 };

  constructor(
    private readonly opts: ReplicatorOptions,
    private readonly host: ReplicatorHost,
    private readonly store: ReplicaStore,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {
    this.inflight = new Array<number>(store.partitionCount).fill(0);
  }

  start(): void {
    const tick = (): void => {
      this.antiEntropy();
      this.antiEntropyTimer = this.timers.setTimeout(tick, this.opts.antiEntropyIntervalMs);
    };
    this.antiEntropyTimer = this.timers.setTimeout(tick, this.opts.antiEntropyIntervalMs);
  }

  stop(): void {
    if (this.antiEntropyTimer !== null) this.timers.clearTimeout(this.antiEntropyTimer);
    for (const p of this.pendingAcks.values()) this.timers.clearTimeout(p.timer);
    for (const o of this.outgoing.values()) if (o.timer !== null) this.timers.clearTimeout(o.timer);
  }

  // ── owner side: fan-out ──────────────────────────────────────────────────────────────────────

  inflightCount(partitionId: number): number {
    return this.inflight[partitionId] ?? 0;
  }

  /** Writes waiting for backup acks, on this member. */
  get pendingAckCount(): number {
    return this.pendingAcks.size;
  }

  addExtraTarget(partitionId: number, uuid: string): void {
    let s = this.extraTargets.get(partitionId);
    if (s === undefined) this.extraTargets.set(partitionId, (s = new Set()));
    s.add(uuid);
  }

  clearExtraTargets(partitionId: number): void {
    this.extraTargets.delete(partitionId);
  }

  /** Whether a write to the partition has anyone to go to (a lone member's writes have nobody). */
  hasTargets(partitionId: number): boolean {
    if (this.extraTargets.has(partitionId)) return true;
    const replicas = this.host.replicas(partitionId);
    for (let i = 1; i < replicas.length; i++) if (replicas[i] !== null && replicas[i] !== undefined) return true;
    return false;
  }

  /**
   * Sends a write the owner applied (now at `version`) to the backups. `done` runs when every sync
   * target acked (or the backup timeout passed); at once when there is none. `op.key` may be
   * borrowed (valid only during this call): what is kept past it is a copy.
   */
  replicate(partitionId: number, version: number, op: BackupOpWire, kind: 'map' | 'queue', name: string, done: () => void): boolean {
    const replicas = this.host.replicas(partitionId);
    const syncCount = this.host.syncBackups(kind, name);
    const waiting = new Set<string>();
    const callId = this.nextCallId++;
    const body: { partitionId: number; version: number; op: BackupOpWire } = { partitionId, version, op };
    for (let i = 1; i < replicas.length; i++) {
      const u = replicas[i];
      if (u === null || u === undefined || u === this.host.selfUuid) continue;
      const address = this.host.addressOf(u);
      if (address === null) continue;
      const sync = i <= syncCount;
      this.transport.send(address, message('backup', body, sync ? callId : 0));
      this.counters.backupsSent++;
      if (sync) waiting.add(u);
    }
    for (const u of this.extraTargets.get(partitionId) ?? []) {
      if (waiting.has(u) || replicas.includes(u)) continue;
      const address = this.host.addressOf(u);
      if (address === null) continue;
      this.transport.send(address, message('backup', body, callId));
      waiting.add(u);
    }
    if (waiting.size === 0) return true;
    // Kept from here on (a resend, or the hand-back of an unconfirmed write): the key may be borrowed
    // (LocalMember's key scratch, which the next call overwrites), so the write keeps its own copy.
    // A value is the caller's own (request bodies are copies), and the first sends above were
    // encoded at once.
    if (op.key.length > 0) {
      op = { ...op, key: Buffer.from(op.key) };
      body.op = op;
    }
    this.inflight[partitionId] = (this.inflight[partitionId] ?? 0) + 1;
    // Half-way through the backup timeout, send again to the silent ones (a lost message or a
    // dropped connection); a backup that has it already just acks again.
    const resend = (): void => {
      const p = this.pendingAcks.get(callId);
      if (p === undefined) return;
      for (const u of p.waiting) {
        const address = this.host.addressOf(u);
        if (address === null) continue;
        this.transport.send(address, message('backup', body, callId));
        // It may also have missed an earlier write and be waiting for a snapshot: push one.
        if (this.host.replicas(partitionId)[0] === this.host.selfUuid && ![...this.outgoing.values()].some((o) => o.partitionId === partitionId && o.target === u)) {
          this.startTransfer(partitionId, u, () => {});
        }
      }
      const rest = this.opts.backupTimeoutMs - Math.floor(this.opts.backupTimeoutMs / 2);
      const timer2 = this.timers.setTimeout(() => {
        const q = this.pendingAcks.get(callId);
        if (q === undefined) return;
        this.counters.backupAckTimeouts++;
        this.log.warning(`write ${partitionId}/${version} stands without acks from ${[...q.waiting].join(', ')} after ${this.opts.backupTimeoutMs} ms`);
        for (const u of q.waiting) this.markStale(partitionId, u);
        this.keepUnconfirmed(partitionId, op);
        this.settle(callId);
      }, rest);
      this.pendingAcks.set(callId, { ...p, timer: timer2 });
    };
    const timer = this.timers.setTimeout(resend, Math.floor(this.opts.backupTimeoutMs / 2));
    this.pendingAcks.set(callId, { partitionId, op, waiting, done, timer });
    return false;
  }

  /** Whether some replica of the partition may miss writes (a snapshot to it is pending). */
  hasStale(partitionId: number): boolean {
    this.pruneStale(partitionId);
    return this.stale.has(partitionId);
  }

  /** Replicas known to miss writes, over all partitions this member owns. */
  get staleCount(): number {
    let n = 0;
    for (const p of [...this.stale.keys()]) {
      this.pruneStale(p);
      n += this.stale.get(p)?.size ?? 0;
    }
    return n;
  }

  /** Forgets stale marks that no longer matter: not the owner any more, or no longer a replica. */
  private pruneStale(partitionId: number): void {
    const s = this.stale.get(partitionId);
    if (s === undefined) return;
    const replicas = this.host.replicas(partitionId);
    if (replicas[0] !== this.host.selfUuid) {
      // The partition moved on by a migration, which copied everything this member held.
      this.stale.delete(partitionId);
      this.dropUnconfirmed(partitionId);
      return;
    }
    const extra = this.extraTargets.get(partitionId);
    for (const u of [...s]) if (!replicas.includes(u) && !(extra?.has(u) ?? false)) s.delete(u);
    if (s.size > 0) return;
    // No listed replica misses a write any more: the ones that replaced the stale replicas got the
    // whole partition from this member (a migration). The unconfirmed writes go too; kept, they
    // would be handed back at this member's next cut-off, old values over newer ones.
    this.stale.delete(partitionId);
    this.dropUnconfirmed(partitionId);
  }

  private markStale(partitionId: number, uuid: string): void {
    let s = this.stale.get(partitionId);
    if (s === undefined) this.stale.set(partitionId, (s = new Set()));
    s.add(uuid);
    this.pushSnapshot(partitionId, uuid);
  }

  /** Owner: sends the whole partition to a replica that may miss writes (unless one is on its way). */
  private pushSnapshot(partitionId: number, uuid: string): void {
    if (this.host.replicas(partitionId)[0] !== this.host.selfUuid) return;
    for (const o of this.outgoing.values()) if (o.partitionId === partitionId && o.target === uuid) return;
    this.startTransfer(partitionId, uuid, () => {});
  }

  private clearStale(partitionId: number, uuid: string): void {
    const s = this.stale.get(partitionId);
    if (s === undefined || !s.delete(uuid)) return;
    if (s.size > 0) return;
    this.stale.delete(partitionId);
    this.dropUnconfirmed(partitionId);
    if ((this.inflight[partitionId] ?? 0) === 0) this.host.onBackupsSettled(partitionId);
  }

  private keepUnconfirmed(partitionId: number, op: BackupOpWire): void {
    if (this.unconfirmedCount >= UNCONFIRMED_MAX) {
      this.counters.unconfirmedDropped++;
      return;
    }
    let list = this.unconfirmed.get(partitionId);
    if (list === undefined) this.unconfirmed.set(partitionId, (list = []));
    list.push(op);
    this.unconfirmedCount++;
  }

  private dropUnconfirmed(partitionId: number): void {
    const list = this.unconfirmed.get(partitionId);
    if (list === undefined) return;
    this.unconfirmedCount -= list.length;
    this.unconfirmed.delete(partitionId);
  }

  /**
   * This member left the cluster: every write still waiting for backup acks stands (its caller is
   * answered), and the writes no backup confirmed are handed over for replay; all replication state
   * is forgotten (the member holds nothing until it joins again).
   */
  reset(): { partitionId: number; op: BackupOpWire }[] {
    for (const [callId, p] of [...this.pendingAcks]) {
      this.keepUnconfirmed(p.partitionId, p.op);
      this.settle(callId);
    }
    const out: { partitionId: number; op: BackupOpWire }[] = [];
    for (const [p, list] of this.unconfirmed) for (const op of list) out.push({ partitionId: p, op });
    this.unconfirmed.clear();
    this.unconfirmedCount = 0;
    for (const o of this.outgoing.values()) if (o.timer !== null) this.timers.clearTimeout(o.timer);
    const outgoing = [...this.outgoing.values()];
    this.outgoing.clear();
    for (const o of outgoing) o.done(false);
    this.incoming.clear();
    this.buffered.clear();
    this.lineage.clear();
    this.resyncAsked.clear();
    this.lastAdvertised.clear();
    this.stale.clear();
    this.extraTargets.clear();
    this.inflight.fill(0);
    return out;
  }

  private settle(callId: number): void {
    const p = this.pendingAcks.get(callId);
    if (p === undefined) return;
    this.pendingAcks.delete(callId);
    this.timers.clearTimeout(p.timer);
    const left = (this.inflight[p.partitionId] ?? 1) - 1;
    this.inflight[p.partitionId] = left;
    p.done();
    if (left === 0) this.host.onBackupsSettled(p.partitionId);
  }

  /** A member left: stop waiting for its acks. */
  /** A member left the cluster (a membership event): forgetMember. */
  memberRemoved(uuid: string): void {
    this.forgetMember(uuid);
  }

  forgetMember(uuid: string): void {
    // A removed member's next life (it left and joined again, same uuid) is another stream: a copy
    // that followed it must not count its writes as duplicates or its snapshots as older.
    for (const [p, u] of [...this.lineage]) if (u === uuid) this.lineage.delete(p);
    for (const [callId, p] of [...this.pendingAcks]) {
      if (p.waiting.delete(uuid) && p.waiting.size === 0) this.settle(callId);
    }
    for (const [p, s] of this.extraTargets) if (s.delete(uuid) && s.size === 0) this.extraTargets.delete(p);
    for (const p of [...this.stale.keys()]) this.clearStale(p, uuid);
    for (const [id, o] of [...this.outgoing]) if (o.target === uuid) this.finishOutgoing(id, false);
    for (const [p, i] of [...this.incoming]) if (i.from === uuid) this.incoming.delete(p);
    // Backups buffered behind a gap, waiting for the member's snapshot, will never be completed by
    // it. Left in place they keep the partition "receiving", and a member promoted to its owner
    // would answer every write "retry" until retryStalled gave up on them (transferAckTimeoutMs,
    // 30 s). Those writes were never acknowledged here, so nothing acknowledged depends on them.
    for (const [p, list] of [...this.buffered]) {
      const kept = list.filter((b) => b.from.uuid !== uuid);
      if (kept.length === list.length) continue;
      if (kept.length === 0) {
        this.buffered.delete(p);
        this.resyncAsked.delete(p);
      } else {
        this.buffered.set(p, kept);
      }
    }
  }

  // ── inbound ──────────────────────────────────────────────────────────────────────────────────

  /** The message kinds replication owns (cluster/service.ts). */
  readonly kinds: readonly MessageKind[] = ['backup', 'backupAck', 'versions', 'resyncRequest', 'snapshotChunk', 'snapshotAck'];

  handle(from: Peer, m: Message): boolean {
    switch (m.kind) {
      case 'backup':
        this.onBackup(from, m);
        return true;
      case 'backupAck': {
        const p = this.pendingAcks.get(m.callId);
        if (p !== undefined && p.waiting.delete(from.uuid) && p.waiting.size === 0) this.settle(m.callId);
        return true;
      }
      case 'versions':
        this.onVersions(from, m);
        return true;
      case 'resyncRequest':
        this.onResyncRequest(from, m.body.partitionId);
        return true;
      case 'snapshotChunk':
        this.onChunk(from, m);
        return true;
      case 'snapshotAck':
        this.onChunkAck(m);
        return true;
      default:
        return false;
    }
  }

  /**
   * Whether partition data from `from` may be applied here: it must be a member of this member's
   * cluster (after a split, the other side's owner is not), and this member must not own the
   * partition itself (an owner's data changes only by its own writes; a migration that makes
   * another member the owner reaches this member as a new table first).
   */
  private acceptsDataFrom(from: Peer, partitionId: number): boolean {
    if (partitionId >= this.store.partitionCount || !this.host.isMember(from.uuid)) return false;
    const r = this.host.replicas(partitionId);
    if (r[0] === this.host.selfUuid) return false;
    // A copy this member is listed for changes only by its owner's stream: after a split the other
    // side's members can stay in this member's list for a while, and a snapshot from their own
    // restarted partition (at the same version) would replace the acknowledged writes held here.
    if (r.includes(this.host.selfUuid)) return r[0] === from.uuid;
    // A copy it is not listed for yet (a migration's destination, a backup the next table adds)
    // comes only from a member its table lists for the partition: the owner (a migration's source),
    // or a backup whose promotion this member has not heard of yet. A member of its list that
    // founded a cluster of its own and lists this member there (a split that formed while a view
    // was on its way) is neither, and its snapshot of its own copy would replace this member's,
    // which then went on to the other replicas (seed 102336).
    return r[0] === null || r[0] === undefined || r.includes(from.uuid);
  }

  private onBackup(from: Peer, m: MessageOf<'backup'>): void {
    const { partitionId, version, op } = m.body;
    if (!this.acceptsDataFrom(from, partitionId)) return;
    if (this.incoming.has(partitionId) || this.buffered.has(partitionId)) {
      this.buffer(partitionId, { from, callId: m.callId, version, op });
      return;
    }
    const r = this.store.applyBackup(partitionId, version, op);
    if (r === 'gap' || (r === 'duplicate' && this.lineage.get(partitionId) !== from.uuid)) {
      this.buffer(partitionId, { from, callId: m.callId, version, op });
      this.askResync(partitionId, from.address);
      return;
    }
    if (r === 'applied') this.lineage.set(partitionId, from.uuid);
    if (m.callId !== 0) this.ackBackup(from.address, partitionId, version, m.callId);
  }

  /**
   * Acknowledges a backup write once what it applied is persisted (ReplicatorHost.whenPersisted);
   * without persistence at once, with no closure on this hot path.
   */
  private ackBackup(address: string, partitionId: number, version: number, callId: number): void {
    if (this.host.whenPersisted === undefined) {
      this.transport.send(address, message('backupAck', { partitionId, version }, callId));
      return;
    }
    this.host.whenPersisted(() => void this.transport.send(address, message('backupAck', { partitionId, version }, callId)));
  }

  private buffer(partitionId: number, b: Omit<Buffered, 'seq'>): void {
    let list = this.buffered.get(partitionId);
    if (list === undefined) this.buffered.set(partitionId, (list = []));
    if (list.length >= this.opts.bufferedBackupsMax) {
      // Too far behind: drop the buffer; the snapshot will carry these writes (their acks time out).
      list.length = 0;
      this.askResync(partitionId, b.from.address, true);
      return;
    }
    list.push({ ...b, seq: this.bufferSeq++ });
  }

  private askResync(partitionId: number, ownerAddress: string, force = false): void {
    const now = this.clock.monotonicMs();
    const asked = this.resyncAsked.get(partitionId);
    if (!force && asked !== undefined && now - asked < this.opts.transferAckTimeoutMs) return;
    this.resyncAsked.set(partitionId, now);
    this.counters.resyncsRequested++;
    this.transport.send(ownerAddress, message('resyncRequest', { partitionId }));
  }

  private onResyncRequest(from: Peer, partitionId: number): void {
    if (this.host.replicas(partitionId)[0] !== this.host.selfUuid && !(this.extraTargets.get(partitionId)?.has(from.uuid) ?? false)) return;
    // The replica asked, so whatever transfer to it is under way did not reach it whole (a chunk or
    // its ack was lost): start over at once, handing the old transfer's completion to the new one.
    let done: (ok: boolean) => void = () => {};
    for (const [id, o] of [...this.outgoing]) {
      if (o.partitionId !== partitionId || o.target !== from.uuid) continue;
      this.outgoing.delete(id);
      if (o.timer !== null) this.timers.clearTimeout(o.timer);
      done = o.done;
    }
    let st = this.stale.get(partitionId);
    if (st === undefined) this.stale.set(partitionId, (st = new Set()));
    st.add(from.uuid);
    this.startTransfer(partitionId, from.uuid, done);
  }

  // ── transfers ────────────────────────────────────────────────────────────────────────────────

  /** Sends the whole partition to `target` in acked chunks; `done(ok)` when it was applied there. */
  startTransfer(partitionId: number, target: string, done: (ok: boolean) => void): void {
    const address = this.host.addressOf(target);
    if (address === null) {
      done(false);
      return;
    }
    const snap = this.store.exportPartition(partitionId, this.clock.nowMs());
    const chunks = snapshotChunks(snap.entries, snap.queues, snap.wan, snap.wanMarks, this.opts.chunkBytesMax);
    const o: Outgoing = { transferId: this.nextTransferId++, partitionId, target, chunks, version: snap.version, next: 0, timer: null, done };
    this.outgoing.set(o.transferId, o);
    this.counters.transfersSent++;
    this.sendChunk(o);
  }

  private sendChunk(o: Outgoing): void {
    const address = this.host.addressOf(o.target);
    const c = o.chunks[o.next];
    if (address === null || c === undefined) {
      this.finishOutgoing(o.transferId, false);
      return;
    }
    const last = o.next === o.chunks.length - 1;
    this.transport.send(address, message('snapshotChunk', { transferId: o.transferId, partitionId: o.partitionId, version: o.version, index: o.next, last, entries: c.entries, queues: c.queues, wan: c.wan, wanMarks: c.wanMarks }));
    o.timer = this.timers.setTimeout(() => this.finishOutgoing(o.transferId, false), this.opts.transferAckTimeoutMs);
  }

  private onChunkAck(m: MessageOf<'snapshotAck'>): void {
    const o = this.outgoing.get(m.body.transferId);
    if (o === undefined || m.body.index !== o.next) return;
    if (o.timer !== null) this.timers.clearTimeout(o.timer);
    o.timer = null;
    if (!m.body.ok) {
      this.finishOutgoing(o.transferId, false);
      return;
    }
    o.next++;
    if (o.next >= o.chunks.length) this.finishOutgoing(o.transferId, true);
    else this.sendChunk(o);
  }

  private finishOutgoing(transferId: number, ok: boolean): void {
    const o = this.outgoing.get(transferId);
    if (o === undefined) return;
    this.outgoing.delete(transferId);
    if (o.timer !== null) this.timers.clearTimeout(o.timer);
    if (!ok) this.counters.transfersFailed++;
    else this.clearStale(o.partitionId, o.target);
    o.done(ok);
    // A replica that may miss writes keeps getting snapshots until one lands.
    if (!ok && (this.stale.get(o.partitionId)?.has(o.target) ?? false) && this.host.addressOf(o.target) !== null) {
      this.timers.setTimeout(() => this.pushSnapshot(o.partitionId, o.target), Math.min(1000, this.opts.transferAckTimeoutMs));
    }
  }

  private onChunk(from: Peer, m: MessageOf<'snapshotChunk'>): void {
    const b = m.body;
    const ack = (ok: boolean): void => {
      const send = (): void => void this.transport.send(from.address, message('snapshotAck', { transferId: b.transferId, index: b.index, ok }));
      if (this.host.whenPersisted === undefined) send();
      else this.host.whenPersisted(send);
    };
    if (!this.acceptsDataFrom(from, b.partitionId)) return ack(false);
    let inc = this.incoming.get(b.partitionId);
    if (b.index === 0) {
      inc = { transferId: b.transferId, from: from.uuid, entries: [], queues: [], wan: [], nextIndex: 0, startSeq: this.bufferSeq };
      this.incoming.set(b.partitionId, inc);
    }
    if (inc === undefined || inc.transferId !== b.transferId || inc.from !== from.uuid || inc.nextIndex !== b.index) return ack(false);
    for (const e of b.entries) inc.entries.push(e);
    for (const q of b.queues) inc.queues.push(q);
    for (const q of b.wan) inc.wan.push(q);
    inc.nextIndex++;
    if (b.last) {
      this.incoming.delete(b.partitionId);
      if (this.lineage.get(b.partitionId) === from.uuid && this.store.version(b.partitionId) > b.version) {
        // An older snapshot of the stream this copy follows, overtaken by a write applied on top of
        // a newer one (a snapshot sent just before a write and delivered after it): it holds nothing
        // this copy lacks, and importing it would undo acknowledged writes (seed 3029718). A member
        // removed from the cluster starts a new stream when it comes back (forgetMember), so a
        // lower version from it after that is a new life of the partition and is imported.
        this.log.fine(`partition ${b.partitionId}: snapshot ${b.transferId} at version ${b.version} from ${from.address} is older than this copy (version ${this.store.version(b.partitionId)}): kept the copy`);
        ack(true);
        return;
      }
      this.store.importPartition(b.partitionId, b.version, inc.entries, inc.queues, this.clock.nowMs(), inc.wan, b.wanMarks);
      this.lineage.set(b.partitionId, from.uuid);
      this.host.onPartitionImported(b.partitionId);
      this.resyncAsked.delete(b.partitionId);
      this.counters.transfersReceived++;
      this.dropOlderLife(b.partitionId, b.version, inc.startSeq);
      this.drainBuffered(b.partitionId, from.address);
    }
    ack(true);
  }

  /**
   * After a snapshot at `version`: drops buffered backups that arrived before its first chunk with a
   * version above it. An owner sends its writes in version order and its first chunk as it takes the
   * snapshot, on the same connection, so such a write is from an earlier life of the partition (it
   * was lost and started again at a lower version, or another owner's stream). Kept, it would gap on
   * top of the snapshot for ever: the member asked for a copy, got one, found the same gap and asked
   * again, and never became safe (seed 1806 with --overlap --tcp). Nothing acknowledged depends on
   * them: they were never applied here.
   */
  private dropOlderLife(partitionId: number, version: number, startSeq: number): void {
    const list = this.buffered.get(partitionId);
    if (list === undefined) return;
    const kept = list.filter((b) => b.seq >= startSeq || b.version <= version);
    if (kept.length === list.length) return;
    this.counters.bufferedDropped += list.length - kept.length;
    this.log.fine(`partition ${partitionId}: dropped ${list.length - kept.length} buffered backup(s) from before its copy at version ${version}, of an earlier life of the partition`);
    if (kept.length === 0) this.buffered.delete(partitionId);
    else this.buffered.set(partitionId, kept);
  }

  /** Applies buffered backups on top of a snapshot, in version order, acking each applied one. */
  private drainBuffered(partitionId: number, ownerAddress: string): void {
    const list = this.buffered.get(partitionId);
    this.buffered.delete(partitionId);
    if (list === undefined) return;
    list.sort((a, b) => a.version - b.version);
    for (let i = 0; i < list.length; i++) {
      const b = list[i] as Buffered;
      const r = this.store.applyBackup(partitionId, b.version, b.op);
      if (r === 'gap') {
        this.buffered.set(partitionId, list.slice(i));
        this.askResync(partitionId, ownerAddress, true);
        return;
      }
      if (b.callId !== 0) this.ackBackup(b.from.address, partitionId, b.version, b.callId);
    }
  }

  /** Asks the partition's owner (per the local table) for a whole copy now. */
  resyncFromOwner(partitionId: number): void {
    const owner = this.host.replicas(partitionId)[0];
    if (owner === null || owner === undefined || owner === this.host.selfUuid) return;
    const address = this.host.addressOf(owner);
    if (address !== null) this.askResync(partitionId, address, true);
  }

  /** Whether a snapshot is being received for the partition (its data is not complete yet). */
  isReceiving(partitionId: number): boolean {
    return this.incoming.has(partitionId) || this.buffered.has(partitionId);
  }

  /** Partitions this member is receiving a copy of, or holds backups behind a gap for (diagnostics). */
  get receivingPartitions(): number[] {
    return [...new Set([...this.incoming.keys(), ...this.buffered.keys()])].sort((a, b) => a - b);
  }

  /** Whether this member is waiting for anything to get a partition in sync. */
  get syncing(): boolean {
    return this.incoming.size > 0 || this.buffered.size > 0;
  }

  /** The owner whose stream of writes the local copy of the partition follows, if any. */
  lineageOf(partitionId: number): string | undefined {
    return this.lineage.get(partitionId);
  }

  /**
   * This member became the partition's owner: from now on its copy follows its own stream. The
   * lineage must not keep naming the owner it last had a write from: when that member later starts
   * the partition again (it lost every replica) at versions this member's own stream used, this
   * copy would pass for a newer copy of its stream, keep itself over every snapshot it sends and
   * never confirm a move (seed 2078324 with --overlap never settled).
   */
  followOwnStream(partitionId: number): void {
    this.lineage.set(partitionId, this.host.selfUuid);
  }

  /** Forgets receive state for a partition this member does not hold any more. */
  dropPartition(partitionId: number): void {
    this.lineage.delete(partitionId);
    this.incoming.delete(partitionId);
    this.buffered.delete(partitionId);
    this.resyncAsked.delete(partitionId);
    this.lastAdvertised.delete(partitionId);
    this.stale.delete(partitionId);
    this.dropUnconfirmed(partitionId);
  }

  // ── anti-entropy ─────────────────────────────────────────────────────────────────────────────

  private antiEntropy(): void {
    this.retryStalled();
    for (const p of [...this.stale.keys()]) {
      this.pruneStale(p);
      for (const u of this.stale.get(p) ?? []) this.pushSnapshot(p, u);
    }
    const perTarget = new Map<string, { partitionIds: number[]; versions: number[] }>();
    for (let p = 0; p < this.store.partitionCount; p++) {
      const r = this.host.replicas(p);
      if (r[0] !== this.host.selfUuid) continue;
      for (let i = 1; i < r.length; i++) {
        const u = r[i];
        if (u === null || u === undefined) continue;
        let e = perTarget.get(u);
        if (e === undefined) perTarget.set(u, (e = { partitionIds: [], versions: [] }));
        e.partitionIds.push(p);
        e.versions.push(this.store.version(p));
      }
    }
    for (const [u, body] of perTarget) {
      const address = this.host.addressOf(u);
      if (address !== null) this.transport.send(address, message('versions', body));
    }
  }

  /**
   * A resync whose request or snapshot got lost would leave a partition "receiving" for ever: ask
   * the current owner again, and forget partitions this member no longer holds a replica of.
   */
  private retryStalled(): void {
    const now = this.clock.monotonicMs();
    for (const p of new Set([...this.buffered.keys(), ...this.incoming.keys()])) {
      const replicas = this.host.replicas(p);
      const owner = replicas[0];
      if (!replicas.includes(this.host.selfUuid) || owner === this.host.selfUuid || owner === null || owner === undefined) {
        if (owner === this.host.selfUuid || !replicas.includes(this.host.selfUuid)) {
          const asked = this.resyncAsked.get(p);
          if (asked === undefined || now - asked >= this.opts.transferAckTimeoutMs) this.dropPartition(p);
        }
        continue;
      }
      const asked = this.resyncAsked.get(p) ?? 0;
      if (now - asked < this.opts.transferAckTimeoutMs) continue;
      this.incoming.delete(p);
      const address = this.host.addressOf(owner);
      if (address !== null) this.askResync(p, address, true);
    }
  }

  private onVersions(from: Peer, m: MessageOf<'versions'>): void {
    const { partitionIds, versions } = m.body;
    for (let i = 0; i < partitionIds.length && i < versions.length; i++) {
      const p = partitionIds[i] as number;
      const v = versions[i] as number;
      if (p >= this.store.partitionCount || this.host.replicas(p)[0] !== from.uuid || !this.host.isMember(from.uuid)) continue;
      const previous = this.lastAdvertised.get(p);
      this.lastAdvertised.set(p, v);
      const mine = this.store.version(p);
      // Behind what the owner had a whole round ago (not just writes in flight), or ahead of it: resync.
      if ((previous !== undefined && mine < previous) || mine > v) {
        if (!this.isReceiving(p)) this.askResync(p, from.address, true);
      }
    }
  }
}

/** Unconfirmed writes kept for replay at most (all partitions); more are counted and dropped. */
const UNCONFIRMED_MAX = 100_000;
