// The partition table on this member, and migrations: the master plans and commits them, the
// source (the partition's owner) copies and hands over, the destination receives.
//
// A migration moves a partition from its current replica list to the master's target list:
//   1. master → source: migrateRequest (destinations = target members holding no copy yet);
//   2. source: copies the partition to each destination (Replicator transfers) while sending them
//      every new write as a sync backup, so they are in step when the copy ends;
//   3. source: holds new writes to the partition, waits until no write awaits backup acks, and
//      answers migrateResult ok: now every target member holds every acknowledged write;
//   4. master → destinations: migrateCommit, acked; then the master changes its table (the
//      partition's version + 1) and publishes it;
//   5. source: the new table releases the held writes, which run again and go to the new owner.
// A failure or timeout anywhere aborts: the source releases its writes, nothing changes in the
// table, and the master plans again later. Replicas are only removed from a list by the commit,
// after the new ones hold the data, so a move never lowers the number of live replicas.
// The migration queue size is the number of partitions whose list differs from the target: derived
// from the plan itself, never counted separately.
import type { EventSink } from '../util/timeline.js';
import type { Message, MessageKind, MessageOf, TableWire, ViewWire } from '../cluster/messages.js';
import { message } from '../cluster/messages.js';
import type { MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import type { ReplicaStore } from '../data/replica-store.js';
import { assignTarget, migrationQueue, promoteAfterRemoval } from '../partition/assignment.js';
import { PartitionTable, type Replicas, checkTable, sameReplicas } from '../partition/table.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';
import type { Replicator } from './replicator.js';

export interface PartitionServiceOptions {
  readonly partitionCount: number;
  readonly width: number;
  readonly migrationsParallelMax: number;
  readonly migrationTimeoutMs: number;
  readonly holdTimeoutMs: number;
  readonly tickMs: number;
}

export interface PartitionServiceHost {
  readonly selfUuid: string;
  isMaster(): boolean;
  /** The uuid of the member this one takes as master (null while not joined). */
  masterUuid(): string | null;
  /** Whether this member claims mastership or awaits a claimant's view: it confirms no move of its current master meanwhile. */
  claimPending(): boolean;
  /** The cluster's timeline: a round of migrations started and finished (master). */
  readonly events?: EventSink;
  /** The version of the member list this member holds (a table from the master is applied only under it). */
  membersVersion(): number;
  /** A message that proves a listed member alive, as a heartbeat does (membership). */
  heardFrom(uuid: string): void;
  /** Data members (not lite) in join order. */
  dataMembers(): string[];
  isMember(uuid: string): boolean;
  /** Sends to a member by uuid (to itself too, asynchronously). */
  send(uuid: string, m: Message): void;
  /** Whether the cluster state allows migrations now. */
  migrationAllowed(): boolean;
  /**
   * Whether a departed member's partitions may be promoted to their backups now. In FROZEN and
   * PASSIVE (and during clusterShutdown) the table stays as it is: the departed member's partitions
   * are unavailable until the state allows promotions again (promoteDeparted).
   */
  promotionAllowed(): boolean;
  /** The master changed the table: publish it. */
  publishTable(): void;
  /** The local table changed (any member): retry calls, answer waiters of partitions lost. */
  onTableApplied(changed: readonly number[]): void;
  /** A member asked to leave holds nothing any more: let it go. */
  onMemberDrained(uuid: string): void;
}

interface MasterMigration {
  readonly id: number;
  readonly partitionId: number;
  readonly source: string;
  readonly destinations: string[];
  readonly target: Replicas;
  readonly startedMs: number;
  /** copy → commit (the new replicas confirm) → source (the source confirms it still holds). */
  phase: 'copy' | 'commit' | 'source';
  /** When the source reported the copy complete (its writes held since a little before). */
  reportedAtMs: number;
  /** The partition's data version the source reported while holding writes. */
  version: number;
  readonly commitAcks: Set<string>;
}

interface SourceMigration {
  readonly id: number;
  readonly partitionId: number;
  readonly master: string;
  readonly pending: Set<string>;
  /** copy → hold (writes wait) → reported (told the master) → committed (told the master it still
   * holds: from then on the master's table, an abort, a new master, the master's next request for
   * the partition or holdTimeoutMs after the yes release the writes; the master commits only
   * within half the hold). */
  phase: 'copy' | 'hold' | 'reported' | 'committed';
  heldAtMs: number;
}

/**
 * After a mastership claim: the tables among the answering views (the claimer's own first, listing
 * exactly the members that stay) that were made while every staying member was a member. A view
 * without some of them, or a table that gives no replica to a staying member the claimer's own
 * table gives some to, was made by a master that had removed them (the other half of a split,
 * reached by a member in both halves): it promoted or restarted their partitions as if they were
 * gone, while they come into the claimer's cluster holding the data (seed 121906: a master cut off
 * alone removed the others and restarted a partition empty, and a member that heard both sides
 * carried that table into the majority's claim).
 */
export function tablesMadeWithEveryone(views: readonly ViewWire[]): TableWire[] {
  const staying = (views[0]?.members ?? []).map((m) => m.uuid);
  const holding = (views[0]?.table.uuids ?? []).filter((u) => staying.includes(u));
  return views.filter((v) => staying.every((u) => v.members.some((m) => m.uuid === u)) && holding.every((u) => v.table.uuids.includes(u))).map((v) => v.table);
}

export class PartitionService implements MemberService {
  readonly name = 'migration';
  private tableNow: PartitionTable;
  private target: Replicas[] | null = null;
  private queueSize = 0;
  private nextMigrationId = 1;
  private readonly active = new Map<number, MasterMigration>();
  private readonly sources = new Map<number, SourceMigration>();
  /** Writes waiting while their partition is handed over, per partition, in arrival order. */
  private readonly held = new Map<number, (() => void)[]>();
  /** The round of migrations under way (master): since when, and the commits before it. */
  private round: { readonly startedMs: number; readonly committed: number } | null = null;
  private readonly leaving = new Set<string>();
  /**
   * Leaving members told they hold nothing any more. They stay in `leaving` (no replica is planned
   * for them) until they are removed: a drained member keeps serving its clients, forwarding their
   * calls, until the clients route elsewhere, and then confirms its departure (cluster-node).
   */
  private readonly drained = new Set<string>();
  /**
   * Moves this member was asked to confirm while its copy was behind the source's (a backup that
   * has had no write since its owner took the partition over and jumped its version): the resync it
   * asked for confirms them when it lands at the source's version, instead of the move failing and
   * being planned again a round later. The master's deadline for confirmations bounds the wait.
   */
  private readonly confirmAfterResync = new Map<number, { migrationId: number; master: string; version: number; owner: string }>();
  /** Partitions this member held and is no longer listed for, with since when (dropped after holdTimeoutMs). */
  private readonly unlistedSince = new Map<number, number>();
  /**
   * Of those, the partitions a table unlisted this member from while listing others: the partition
   * lived on elsewhere, taking writes this member's copy never saw (rule H).
   */
  private readonly movedOn = new Set<number>();
  private retryAfterMs = 0;
  private timer: TimerHandle | null = null;
  readonly counters = { migrationsStarted: 0, migrationsCommitted: 0, migrationsFailed: 0, promotions: 0 };

  constructor(
    private readonly opts: PartitionServiceOptions,
    private readonly host: PartitionServiceHost,
    private readonly store: ReplicaStore,
    private readonly replicator: Replicator,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {
    this.tableNow = PartitionTable.empty(opts.partitionCount, opts.width);
  }

  get table(): PartitionTable {
    return this.tableNow;
  }
  get migrationQueueSize(): number {
    return this.queueSize;
  }
  get activeMigrations(): number {
    return this.active.size + this.sources.size;
  }
  /** Master: the partitions with a migration under way (the console's partition view). */
  get migratingPartitions(): number[] {
    return [...this.active.keys()];
  }

  start(): void {
    const tick = (): void => {
      this.tick();
      this.timer = this.timers.setTimeout(tick, this.opts.tickMs);
    };
    this.timer = this.timers.setTimeout(tick, this.opts.tickMs);
  }

  stop(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
  }

  tableWire(): TableWire {
    return this.tableNow.toWire();
  }

  // ── table changes ────────────────────────────────────────────────────────────────────────────

  /**
   * Installs a persisted table before the member starts (persistence recovery): the store already
   * holds the data the table says this member has, so nothing is reconciled, dropped or jumped.
   */
  restore(table: PartitionTable): void {
    checkTable(table);
    this.tableNow = table;
  }

  /** A table from the master (in a view or alone). Applied when newer than ours. */
  applyFromMaster(wire: TableWire, queueSize: number): void {
    this.queueSize = queueSize;
    if (wire.version <= this.tableNow.version) return;
    this.apply(PartitionTable.fromWire(wire, this.opts.partitionCount));
  }

  /** Installs a table here (master after a change, or from the master), reconciling local data. */
  private apply(next: PartitionTable): void {
    const previous = this.tableNow;
    this.tableNow = next;
    const me = this.host.selfUuid;
    const changed: number[] = [];
    for (let p = 0; p < next.partitionCount; p++) {
      const before = previous.replicas[p] as Replicas;
      const after = next.replicas[p] as Replicas;
      if (sameReplicas(before, after)) continue;
      changed.push(p);
      const restartedEmpty = after.includes(me) && before.every((u) => u === null) && next.partitionVersions[p] === (previous.partitionVersions[p] as number) + 1;
      if (restartedEmpty && (this.replicator.lineageOf(p) !== after[0] || this.movedOn.has(p))) {
        // The partition lost every replica and starts empty: a copy this member kept from an older
        // listing is stale, and its version could be ahead of the new owner's, so that the new
        // owner's writes would look like duplicates here and be acknowledged without being applied.
        // Only when the master's own previous listing of it was empty (its partition version moved
        // by one from the empty list this member held), and only a copy of another owner's stream:
        // an empty list in an old table this member still held (a view that came late) says
        // nothing of what happened since, and a copy the new owner's own writes and snapshots built
        // holds its acknowledged writes (seed 1486 with --overlap lost one so). Unless the partition
        // moved on from this member before the loss: the copy, even of its own stream, misses the
        // writes its later holders took (nemesis seed 1 served and handed back r-7 = 4 over 6 so).
        if (this.store.version(p) > 0) this.log.fine(`partition ${p} starts empty: dropping the stale copy held here (version ${this.store.version(p)})`);
        this.store.dropPartition(p);
        this.replicator.dropPartition(p);
      }
      if (after[0] === me && before[0] !== me) {
        this.store.jumpVersion(p);
        this.replicator.followOwnStream(p);
      }
      if (!after.includes(me) && before.includes(me)) {
        // Dropped later, not now: a table can arrive after a snapshot that made this member a
        // holder again (tables and chunks travel on different connections) and still not show the
        // migration that snapshot belongs to. Data of a partition this member is not listed for is
        // never served, and a listing again comes with a fresh snapshot or from being a backup.
        if (!this.unlistedSince.has(p)) this.unlistedSince.set(p, this.clock.monotonicMs());
        if (after.some((u) => u !== null)) this.movedOn.add(p);
      }
      if (after.includes(me)) {
        this.unlistedSince.delete(p);
        this.movedOn.delete(p);
      }
      const s = this.sources.get(p);
      if (s !== undefined) this.finishSource(s, null);
    }
    if (changed.length > 0) this.host.onTableApplied(changed);
  }

  /**
   * Master: installs a new table and publishes it. The target stays as it was: recomputing it from
   * every intermediate table can undo the plan's own steps (two partitions trading a backup back and
   * forth for ever); it is recomputed when the members change (onMembersChanged, requestLeave).
   */
  private commitTable(next: PartitionTable): void {
    checkTable(next);
    this.apply(next);
    if (this.target === null || !this.targetFits()) this.recomputeQueue();
    else this.queueSize = migrationQueue(this.tableNow, this.target).length;
    this.host.publishTable();
  }

  /** Whether the target names only current data members (not leaving). */
  private targetFits(): boolean {
    if (this.target === null) return false;
    const members = new Set(this.host.dataMembers().filter((u) => !this.leaving.has(u)));
    for (const r of this.target) for (const u of r) if (u !== null && !members.has(u)) return false;
    return true;
  }

  /** First member: assigns every partition to the data members. */
  assignIfNeeded(): void {
    if (!this.host.isMaster() || this.tableNow.isAssigned) return;
    const members = this.host.dataMembers();
    if (members.length === 0) return;
    const target = assignTarget(this.tableNow, members, this.opts.width);
    this.commitTable(this.tableNow.withReplicas(new Map(target.map((r, p) => [p, r]))));
    this.log.info(`partitions assigned to ${members.length} data member(s)`);
  }

  /** Master: members were removed. Promote the first surviving backup where an owner died. */
  onMembersRemoved(removed: readonly string[]): void {
    for (const u of removed) {
      this.leaving.delete(u);
      this.drained.delete(u);
      this.replicator.forgetMember(u);
    }
    if (!this.host.isMaster()) return;
    const gone = new Set(removed);
    for (const m of [...this.active.values()]) {
      if (gone.has(m.source) || m.destinations.some((d) => gone.has(d))) this.abortMaster(m, 'a member of the migration left');
    }
    if (!this.host.promotionAllowed()) {
      if (this.departedInTable().size > 0) this.log.warning(`${removed.length} member(s) left while the cluster state forbids promotions: their partitions stay assigned to them and are unavailable until the cluster is ACTIVE or NO_MIGRATION again`);
      return;
    }
    // Members that left earlier and are still in the table (a master died before publishing its
    // promotion, or a claimer adopted a table from before a FROZEN period) go to their backups too.
    this.promote(new Set([...gone, ...this.departedInTable()]), `after ${removed.length} member(s) left`);
  }

  /** Master, when promotions are allowed again: the partitions of members that left meanwhile go to their backups. */
  promoteDeparted(): void {
    if (!this.host.isMaster() || !this.host.promotionAllowed() || !this.tableNow.isAssigned) return;
    const gone = this.departedInTable();
    if (gone.size > 0) this.promote(gone, `of ${gone.size} member(s) that left while promotions were not allowed`);
  }

  /** Members the table lists that are not members any more. */
  private departedInTable(): Set<string> {
    const gone = new Set<string>();
    for (const r of this.tableNow.replicas) for (const u of r) if (u !== null && !this.host.isMember(u)) gone.add(u);
    return gone;
  }

  private promote(gone: ReadonlySet<string>, why: string): void {
    const changes = promoteAfterRemoval(this.tableNow, gone);
    // A migration whose partition's list changes under it cannot commit: the new table releases the
    // writes its source holds (apply → finishSource), and writes taken after the copy would be
    // missing on the new replicas. Abort it; the planner starts again from the new list.
    for (const m of [...this.active.values()]) if (changes.has(m.partitionId)) this.abortMaster(m, 'its replica list changed (a member left)');
    if (changes.size > 0) {
      this.counters.promotions += changes.size;
      const lost = [...changes].filter(([p]) => this.tableNow.owner(p) !== null && gone.has(this.tableNow.owner(p) as string) && changes.get(p)?.[0] === null);
      for (const [p] of lost) this.log.severe(`partition ${p} lost every replica: its data is gone`);
      this.commitTable(this.tableNow.withReplicas(changes));
      this.log.info(`promoted backups for ${changes.size} partition(s) ${why}`);
    }
  }

  /** New master after a claim: adopt the newest table any survivor had. */
  adoptNewest(wires: readonly TableWire[]): void {
    let best = this.tableNow;
    for (const w of wires) if (w.version > best.version) best = PartitionTable.fromWire(w, this.opts.partitionCount);
    if (best !== this.tableNow) this.apply(best);
    this.active.clear();
  }

  /** A member (not the master) adopted its master's view: the table it carries applies (a membership event). */
  viewFromMaster(view: ViewWire): void {
    this.applyFromMaster(view.table, view.migrationQueue);
  }

  /** After every view (a membership event): the master plans for the member list it now has. */
  membersChanged(): void {
    if (this.host.isMaster()) this.onMembersChanged();
  }

  /** The member list changed: recompute the target (master) and the queue size. */
  onMembersChanged(): void {
    if (!this.host.isMaster()) return;
    this.assignIfNeeded();
    this.recomputeQueue();
    this.schedule();
  }

  private recomputeQueue(): void {
    if (!this.host.isMaster() || !this.tableNow.isAssigned) {
      if (this.host.isMaster()) this.queueSize = 0;
      return;
    }
    const members = this.host.dataMembers().filter((u) => !this.leaving.has(u));
    this.target = members.length === 0 ? null : assignTarget(this.tableNow, members, this.opts.width);
    this.queueSize = this.target === null ? 0 : migrationQueue(this.tableNow, this.target).length;
  }

  // ── master: planning and committing ──────────────────────────────────────────────────────────

  private tick(): void {
    if (this.host.isMaster()) {
      const now = this.clock.monotonicMs();
      for (const m of [...this.active.values()]) {
        if (now - m.startedMs > this.opts.migrationTimeoutMs) this.abortMaster(m, `no result within ${this.opts.migrationTimeoutMs} ms`);
        else if (m.phase !== 'copy' && now - m.reportedAtMs > this.opts.holdTimeoutMs / 2) this.abortMaster(m, `no confirmation within half the source's hold (${this.opts.holdTimeoutMs} ms)`);
      }
      this.schedule();
      this.releaseDrained();
    }
    const now = this.clock.monotonicMs();
    for (const [p, since] of [...this.unlistedSince]) {
      if (now - since < this.opts.holdTimeoutMs) continue;
      this.unlistedSince.delete(p);
      this.movedOn.delete(p);
      if ((this.tableNow.replicas[p] as Replicas).includes(this.host.selfUuid)) continue;
      this.log.fine(`dropping the data of partition ${p}: not listed for it for ${Math.round(now - since)} ms`);
      this.store.dropPartition(p);
      this.replicator.dropPartition(p);
    }
    for (const s of [...this.sources.values()]) {
      if (s.phase === 'hold' && now - s.heldAtMs > this.opts.holdTimeoutMs) {
        // Not reported yet, so the master cannot commit: releasing is safe; the master is told.
        this.log.warning(`migration ${s.id} of partition ${s.partitionId}: backups not settled within ${this.opts.holdTimeoutMs} ms; writes released`);
        this.finishSource(s, `backups not settled within ${this.opts.holdTimeoutMs} ms`);
      } else if (s.phase === 'reported' && now - s.heldAtMs > this.opts.holdTimeoutMs) {
        this.log.warning(`migration ${s.id} of partition ${s.partitionId}: no commit within ${this.opts.holdTimeoutMs} ms; writes released`);
        this.finishSource(s, null);
      } else if (s.phase === 'committed' && s.master !== this.host.masterUuid()) {
        // The master that was told "still held" is gone: a table it may have made never reaches this
        // member (tables come only from its master), and the new master plans afresh.
        this.log.warning(`migration ${s.id} of partition ${s.partitionId}: its master changed before the commit arrived; writes released`);
        this.finishSource(s, null);
      } else if (s.phase === 'committed' && now - s.heldAtMs > this.opts.holdTimeoutMs) {
        // Its yes was lost, or the abort was (the move dropped when a member left): the master
        // commits only within half the hold of the report, so no table of this move can follow.
        this.log.warning(`migration ${s.id} of partition ${s.partitionId}: no commit within ${this.opts.holdTimeoutMs} ms of confirming; writes released`);
        this.finishSource(s, null);
      }
    }
  }

  private schedule(): void {
    if (!this.host.isMaster() || !this.host.migrationAllowed() || this.target === null) return;
    if (this.clock.monotonicMs() < this.retryAfterMs) return;
    const target = this.target;
    const pending = migrationQueue(this.tableNow, target);
    this.queueSize = pending.length;
    this.noteRound(pending.length);
    for (const p of pending) {
      if (this.active.size >= this.opts.migrationsParallelMax) break;
      if (this.active.has(p)) continue;
      const current = this.tableNow.replicas[p] as Replicas;
      const wanted = target[p] as Replicas;
      const source = current[0];
      if (current.every((u) => u === null)) {
        // Every replica is gone (more members lost at once than there are backups): the data is
        // lost; the partition starts empty on its new owner rather than staying unowned.
        this.log.severe(`partition ${p} has no replica left: it starts empty on its new owner`);
        this.commitTable(this.tableNow.withReplicas(new Map([[p, wanted]])));
        continue;
      }
      if (source === null || source === undefined || !this.host.isMember(source)) continue;
      const destinations = wanted.filter((u): u is string => u !== null && !current.includes(u));
      const m: MasterMigration = { id: this.nextMigrationId++, partitionId: p, source, destinations, target: wanted, startedMs: this.clock.monotonicMs(), phase: 'copy', reportedAtMs: 0, version: 0, commitAcks: new Set() };
      this.active.set(p, m);
      this.counters.migrationsStarted++;
      this.host.send(source, message('migrateRequest', { migrationId: m.id, partitionId: p, destinations, tableVersion: this.tableNow.version }));
    }
  }

  /** A round of migrations (from a planned move to none left) on the timeline, once each way. */
  private noteRound(planned: number): void {
    const committed = this.counters.migrationsCommitted;
    if (planned > 0 && this.round === null) {
      this.round = { startedMs: this.clock.monotonicMs(), committed };
      this.host.events?.record('migration-started', `migrations started: ${planned} partition move(s) planned`);
    } else if (planned === 0 && this.active.size === 0 && this.round !== null) {
      this.host.events?.record('migration-finished', `migrations finished: ${committed - this.round.committed} move(s) committed in ${Math.round(this.clock.monotonicMs() - this.round.startedMs)} ms`);
      this.round = null;
    }
  }

  private byId(id: number): MasterMigration | undefined {
    for (const m of this.active.values()) if (m.id === id) return m;
    return undefined;
  }

  private onMigrateResult(from: Peer, b: MessageOf<'migrateResult'>['body']): void {
    const m = this.byId(b.migrationId);
    if (m === undefined || m.source !== from.uuid || m.phase !== 'copy') return;
    if (!b.ok) {
      this.failMaster(m, b.message);
      return;
    }
    // Every replica of the new list confirms it holds the partition whole (not mid-snapshot): the
    // new copies and the backups that stay or become owner alike.
    m.reportedAtMs = this.clock.monotonicMs();
    m.version = b.version;
    const confirmers = m.target.filter((u): u is string => u !== null && u !== m.source && this.host.isMember(u));
    if (confirmers.length === 0) {
      this.askSource(m);
      return;
    }
    m.phase = 'commit';
    for (const d of confirmers) {
      m.commitAcks.add(d);
      this.host.send(d, message('migrateCommit', { migrationId: m.id, partitionId: m.partitionId, version: b.version }));
    }
  }

  private onCommitAck(from: Peer, b: MessageOf<'migrateCommitAck'>['body']): void {
    const m = this.byId(b.migrationId);
    if (m !== undefined && m.phase === 'source' && from.uuid === m.source) {
      if (!b.ok) this.failMaster(m, 'the source no longer held its writes when asked to commit');
      // The source releases a confirmed hold holdTimeoutMs after its yes, and a source of an older
      // version at its report's: the same deadline as for the confirmations.
      else if (this.clock.monotonicMs() - m.reportedAtMs > this.opts.holdTimeoutMs / 2) this.abortMaster(m, `the source's confirmation came later than half its hold (${this.opts.holdTimeoutMs} ms)`);
      else this.commitMaster(m);
      return;
    }
    if (m === undefined || m.phase !== 'commit' || !m.commitAcks.has(from.uuid)) return;
    if (!b.ok) {
      this.abortMaster(m, `destination ${from.address} could not commit`);
      return;
    }
    m.commitAcks.delete(from.uuid);
    if (m.commitAcks.size > 0) return;
    // The source releases its held writes holdTimeoutMs after it reported, whether or not a commit
    // came; a commit decided late could land after that and lose the writes taken meanwhile. Past
    // half the hold (on this member's clock, so a pause here counts too) the move is abandoned.
    if (this.clock.monotonicMs() - m.reportedAtMs > this.opts.holdTimeoutMs / 2) {
      this.abortMaster(m, `the confirmations took longer than half the source's hold (${this.opts.holdTimeoutMs} ms)`);
      return;
    }
    this.askSource(m);
  }

  /**
   * Last step before the commit: the source confirms that it still holds the partition's writes at
   * the reported version, and from then on keeps them held until this master's table (or an abort)
   * arrives, or holdTimeoutMs after its yes. Measuring the source's hold on this member's clock is
   * not enough: the report can wait in this member's queue through a pause, after the source's hold
   * ran out and it took writes that the new replicas never got (seeds 1024893 and 1051468: a master
   * paused 9 s while it was itself the source committed on waking, after its own hold had released
   * a write).
   */
  private askSource(m: MasterMigration): void {
    m.phase = 'source';
    this.host.send(m.source, message('migrateCommit', { migrationId: m.id, partitionId: m.partitionId, version: m.version }));
  }

  private commitMaster(m: MasterMigration): void {
    this.active.delete(m.partitionId);
    this.counters.migrationsCommitted++;
    // Members that left meanwhile are not put into the table.
    const list = m.target.map((u) => (u !== null && this.host.isMember(u) ? u : null));
    const compact: (string | null)[] = list.filter((u) => u !== null);
    while (compact.length < this.opts.width) compact.push(null);
    this.commitTable(this.tableNow.withReplicas(new Map([[m.partitionId, compact]])));
    this.schedule();
  }

  private failMaster(m: MasterMigration, reason: string): void {
    this.active.delete(m.partitionId);
    this.counters.migrationsFailed++;
    this.retryAfterMs = this.clock.monotonicMs() + 1000;
    this.log.warning(`migration ${m.id} of partition ${m.partitionId} failed: ${reason}`);
  }

  private abortMaster(m: MasterMigration, reason: string): void {
    if (this.host.isMember(m.source)) this.host.send(m.source, message('migrateAbort', { migrationId: m.id, partitionId: m.partitionId }));
    this.failMaster(m, reason);
  }

  // ── graceful leave ───────────────────────────────────────────────────────────────────────────

  /** Master: a member asks to leave; move everything off it. */
  requestLeave(uuid: string): void {
    if (!this.leaving.has(uuid)) this.log.info(`member ${uuid} is leaving: moving its replicas away`);
    this.leaving.add(uuid);
    // Asked again (its answer may have been lost): a drained member is told again.
    this.drained.delete(uuid);
    this.recomputeQueue();
    this.schedule();
    this.releaseDrained();
  }

  private releaseDrained(): void {
    if (this.leaving.size === 0) return;
    const holders = this.tableNow.members();
    for (const u of [...this.leaving]) {
      if (this.drained.has(u)) continue;
      if (holders.has(u) && this.host.dataMembers().some((d) => d !== u && !this.leaving.has(d))) continue;
      if ([...this.active.values()].some((m) => m.source === u || m.destinations.includes(u))) continue;
      this.drained.add(u);
      this.host.onMemberDrained(u);
    }
  }

  /**
   * This member left the cluster: forget the table and every migration (held writes run again and
   * find the member unjoined, so they wait for it to join and retry).
   */
  reset(): void {
    for (const s of [...this.sources.values()]) this.finishSource(s, null);
    this.active.clear();
    this.leaving.clear();
    this.drained.clear();
    this.confirmAfterResync.clear();
    this.unlistedSince.clear();
    this.movedOn.clear();
    this.target = null;
    this.queueSize = 0;
    this.round = null;
    this.tableNow = PartitionTable.empty(this.opts.partitionCount, this.opts.width);
  }

  /** Debugging text: the pending moves and what blocks them. */
  debugState(): string {
    const lines: string[] = [`retryAfter=${this.retryAfterMs} now=${this.clock.monotonicMs()} active=${[...this.active.keys()].join(',')} allowed=${this.host.migrationAllowed()}`];
    if (this.target !== null) for (const p of migrationQueue(this.tableNow, this.target)) lines.push(`p${p}: ${JSON.stringify(this.tableNow.replicas[p])} -> ${JSON.stringify(this.target[p])}`);
    return lines.join('\n');
  }

  /** Whether `uuid` holds no replica in the table. */
  holdsNothing(uuid: string): boolean {
    return !this.tableNow.members().has(uuid);
  }

  // ── source and destination ───────────────────────────────────────────────────────────────────

  /** Whether writes to the partition must wait (it is being handed over). */
  isHeld(partitionId: number): boolean {
    return this.held.has(partitionId);
  }

  /** Queues work until the hand-over of the partition ends. */
  whenReleased(partitionId: number, run: () => void): void {
    const list = this.held.get(partitionId);
    if (list === undefined) run();
    else list.push(run);
  }

  private onMigrateRequest(from: Peer, b: MessageOf<'migrateRequest'>['body']): void {
    const reply = (ok: boolean, text: string): void => this.host.send(from.uuid, message('migrateResult', { migrationId: b.migrationId, ok, message: text, version: 0 }));
    if (b.partitionId >= this.opts.partitionCount) return reply(false, 'no such partition');
    if (this.tableNow.owner(b.partitionId) !== this.host.selfUuid) return reply(false, 'not the owner of the partition');
    const running = this.sources.get(b.partitionId);
    if (running !== undefined && running.phase === 'committed' && running.master === from.uuid && running.id !== b.migrationId) {
      // Its master plans another move of the partition, so the one this member confirmed ended
      // without a commit here (its abort was lost): release and take the new one.
      this.finishSource(running, null);
    }
    if (this.sources.has(b.partitionId)) return reply(false, 'a migration of this partition is running here');
    const s: SourceMigration = { id: b.migrationId, partitionId: b.partitionId, master: from.uuid, pending: new Set(b.destinations), phase: 'copy', heldAtMs: 0 };
    this.sources.set(b.partitionId, s);
    for (const d of b.destinations) {
      this.replicator.addExtraTarget(b.partitionId, d);
      this.replicator.startTransfer(b.partitionId, d, (ok) => {
        if (this.sources.get(b.partitionId) !== s || s.phase !== 'copy') return;
        if (!ok) {
          this.finishSource(s, `copy to ${d} failed`);
          return;
        }
        s.pending.delete(d);
        if (s.pending.size === 0) this.hold(s);
      });
    }
    if (s.pending.size === 0) this.hold(s);
  }

  private hold(s: SourceMigration): void {
    s.phase = 'hold';
    s.heldAtMs = this.clock.monotonicMs();
    if (!this.held.has(s.partitionId)) this.held.set(s.partitionId, []);
    this.maybeReport(s);
  }

  private maybeReport(s: SourceMigration): void {
    // Every write acked by every replica, and no replica left behind by a write that timed out.
    if (s.phase !== 'hold' || this.replicator.inflightCount(s.partitionId) > 0 || this.replicator.hasStale(s.partitionId)) return;
    s.phase = 'reported';
    // The hold's clock starts again with the report: the master measures its own deadline (half
    // the hold) from when the report reaches it, so a hold that began before a long wait for
    // backup acks (a replica cut off) must not run out while the master, told only now, commits
    // (seed 224601 with --overlap: reported 8 s after holding, committed 2 ms before the release).
    s.heldAtMs = this.clock.monotonicMs();
    // The data version while writes are held: every replica of the new list must be at it.
    this.host.send(s.master, message('migrateResult', { migrationId: s.id, ok: true, message: '', version: this.store.version(s.partitionId) }));
  }

  /**
   * A snapshot of the partition was imported here. If this member was unlisted for it, the hold
   * restarts now: the snapshot belongs to a migration whose table has not arrived yet, and dropping
   * the data when the old hold ran out would lose what the new table makes this member serve.
   */
  onPartitionImported(partitionId: number): void {
    if (this.unlistedSince.has(partitionId)) this.unlistedSince.set(partitionId, this.clock.monotonicMs());
    const c = this.confirmAfterResync.get(partitionId);
    if (c === undefined) return;
    this.confirmAfterResync.delete(partitionId);
    const ok = this.store.version(partitionId) === c.version && this.replicator.lineageOf(partitionId) === c.owner && c.master === this.host.masterUuid();
    this.host.send(c.master, message('migrateCommitAck', { migrationId: c.migrationId, ok }));
  }

  /** Backups of a partition settled: a held hand-over may report now. */
  onBackupsSettled(partitionId: number): void {
    const s = this.sources.get(partitionId);
    if (s !== undefined) this.maybeReport(s);
  }

  /** Ends a source migration: failure text → report it; null → just release (commit seen or abort). */
  private finishSource(s: SourceMigration, failure: string | null): void {
    if (this.sources.get(s.partitionId) !== s) return;
    this.sources.delete(s.partitionId);
    this.replicator.clearExtraTargets(s.partitionId);
    const waiting = this.held.get(s.partitionId) ?? [];
    this.held.delete(s.partitionId);
    if (failure !== null) this.host.send(s.master, message('migrateResult', { migrationId: s.id, ok: false, message: failure, version: 0 }));
    for (const run of waiting) run();
  }

  private onCommit(from: Peer, b: MessageOf<'migrateCommit'>['body']): void {
    const s = this.sources.get(b.partitionId);
    if (s !== undefined && s.id === b.migrationId && from.uuid === s.master) {
      // Asked as the source: yes only while the writes are still held at the reported version.
      const ok = s.phase === 'reported' && from.uuid === this.host.masterUuid() && !this.host.claimPending() && this.store.version(b.partitionId) === b.version;
      if (ok) {
        s.phase = 'committed';
        s.heldAtMs = this.clock.monotonicMs();
      }
      this.host.send(from.uuid, message('migrateCommitAck', { migrationId: b.migrationId, ok }));
      return;
    }
    if (b.partitionId < this.opts.partitionCount && this.tableNow.owner(b.partitionId) === this.host.selfUuid) {
      // The owner is asked only as a move's source (the new replicas are the others), and it holds
      // no such move any more: its hold ran out and it has taken writes since, or may at any moment.
      // Answering as a destination would let the master commit over those writes.
      this.host.send(from.uuid, message('migrateCommitAck', { migrationId: b.migrationId, ok: false }));
      return;
    }
    // Only our own master commits a move here: after a split the other side's master can take this
    // member for one of its own (it answered that master's join too) and would drop its replica on
    // the strength of a copy that this member's cluster treats as stale.
    if (from.uuid !== this.host.masterUuid() || this.host.claimPending()) {
      this.host.send(from.uuid, message('migrateCommitAck', { migrationId: b.migrationId, ok: false }));
      return;
    }
    // Holds the partition whole: not mid-snapshot, and at the version the source held it at (a
    // member listed as a backup without the data, e.g. after a table adopted in a mastership
    // claim, must not be kept or made owner by a migration).
    const ok = b.partitionId < this.opts.partitionCount && !this.replicator.isReceiving(b.partitionId) && this.store.version(b.partitionId) === b.version;
    if (!ok && b.partitionId < this.opts.partitionCount && !this.replicator.isReceiving(b.partitionId)) {
      // Out of step with the source (a copy of another owner's stream, one that missed writes nobody
      // noticed yet, or a backup that has had no write since its owner jumped its version): fetch
      // a whole copy from the owner, the source holding writes, and confirm once it is in.
      this.log.fine(`migration ${b.migrationId} of partition ${b.partitionId}: holding version ${this.store.version(b.partitionId)}, the source ${b.version}; resyncing before confirming`);
      this.replicator.resyncFromOwner(b.partitionId);
      const owner = this.tableNow.owner(b.partitionId);
      if (owner !== null && owner !== this.host.selfUuid && this.host.isMember(owner)) {
        this.confirmAfterResync.set(b.partitionId, { migrationId: b.migrationId, master: from.uuid, version: b.version, owner });
        return;
      }
    }
    this.host.send(from.uuid, message('migrateCommitAck', { migrationId: b.migrationId, ok }));
  }

  /** The message kinds migration owns (cluster/service.ts). */
  readonly kinds: readonly MessageKind[] = ['partitionTable', 'migrateRequest', 'migrateResult', 'migrateCommit', 'migrateCommitAck', 'migrateAbort'];

  handle(from: Peer, m: Message): boolean {
    switch (m.kind) {
      case 'partitionTable':
        // Only our master's tables: after a split the other half's master publishes its own. And
        // only a table made under the member list this member holds: one made after the master
        // removed members this member still lists (the view saying so was lost to a partition) gave
        // their partitions to others while they hold the data, and a claim this member makes would
        // carry it into a cluster that keeps them (seed 3038564).
        if (!this.host.isMaster() && from.uuid === this.host.masterUuid() && m.body.membersVersion === this.host.membersVersion()) this.applyFromMaster(m.body.table, m.body.migrationQueue);
        return true;
      case 'migrateRequest':
        this.onMigrateRequest(from, m.body);
        return true;
      case 'migrateResult':
        this.onMigrateResult(from, m.body);
        return true;
      case 'migrateCommit':
        this.onCommit(from, m.body);
        return true;
      case 'migrateCommitAck':
        // A confirmed commit says its sender is alive and takes this member for its master (it
        // confirms only to its own master): as good as a heartbeat. No other message is: a member
        // that left for a cluster of its own still answers snapshots and says "not a member".
        if (m.body.ok) this.host.heardFrom(from.uuid);
        this.onCommitAck(from, m.body);
        return true;
      case 'migrateAbort': {
        const s = this.sources.get(m.body.partitionId);
        // Only from the master that asked: another master counts its migrations from 1 as well.
        if (s !== undefined && s.id === m.body.migrationId && from.uuid === s.master) this.finishSource(s, null);
        return true;
      }
      default:
        return false;
    }
  }
}
