// Progress records of WAN syncs (and consistency checks), as every member of the source cluster
// keeps them (wan.md "Synchronization"): the coordinator announces a sync to every member, each
// member reports the partitions it started and finished to every member, so any member answers
// `sync/progress/{uuid}` for the whole cluster.
//
// Invariants:
// - progress = partitions whose sync events were all acknowledged / partitions to sync, in whole
//   percent, floored, so 100 means every partition is done.
// - stage: STARTED until the first partition is done, IN_PROGRESS until all are, then FINISHED; or
//   FAILED (a member failed a partition, or nothing moved for STALL_MS). FINISHED never changes; a
//   FAILED record becomes FINISHED only if every partition turns out done (members converge on it
//   by gossip). A partition that migrates during a sync, or whose owner crashed, is started again
//   by its new owner.
// - Records stay at least RETAIN_MS after they end; at most RECORDS_MAX are kept (oldest ended first).

export type SyncStage = 'STARTED' | 'IN_PROGRESS' | 'FINISHED' | 'FAILED';

/** Finished records are answerable at least this long (wan.md: at least 1 h). */
export const RETAIN_MS = 60 * 60 * 1000;
const RECORDS_MAX = 1000;
/** A sync with no partition finished for this long fails. */
export const STALL_MS = 2 * 60 * 1000;

export interface SyncCheckResult {
  checkedPartitions: number;
  diffPartitions: number;
  checkedLeaves: number;
  diffLeaves: number;
  entriesToSync: number;
}

export interface SyncRecord {
  readonly id: string;
  readonly kind: 'sync' | 'check';
  readonly replication: string;
  readonly publisherId: string;
  readonly creationTimeMs: number;
  readonly total: number;
  readonly done: Set<number>;
  /** Partitions each member started and has not finished. */
  readonly started: Map<string, Set<number>>;
  stage: SyncStage;
  failure: string;
  endedAtMonoMs: number;
  lastMoveMonoMs: number;
  /** Consistency checks: the counts of the partitions compared so far. */
  readonly check: SyncCheckResult;
  /** The maps it covers, once the coordinator's announcement arrived (null before). */
  maps: readonly string[] | null;
  allMaps: boolean;
}

export class SyncRecords {
  private readonly records = new Map<string, SyncRecord>();

  constructor(private readonly monotonicMs: () => number) {}

  get(id: string): SyncRecord | undefined {
    this.prune();
    return this.records.get(id);
  }

  all(): IterableIterator<SyncRecord> {
    return this.records.values();
  }

  /** Creates the record (a member may hear of a sync from a report before the announcement). */
  open(id: string, kind: SyncRecord['kind'], replication: string, publisherId: string, creationTimeMs: number, total: number): SyncRecord {
    let r = this.records.get(id);
    if (r === undefined) {
      const now = this.monotonicMs();
      r = {
        id,
        kind,
        replication,
        publisherId,
        creationTimeMs,
        total,
        done: new Set(),
        started: new Map(),
        stage: total === 0 ? 'FINISHED' : 'STARTED',
        failure: '',
        endedAtMonoMs: total === 0 ? now : 0,
        lastMoveMonoMs: now,
        check: { checkedPartitions: 0, diffPartitions: 0, checkedLeaves: 0, diffLeaves: 0, entriesToSync: 0 },
        maps: null,
        allMaps: false,
      };
      this.records.set(id, r);
      this.prune();
    }
    return r;
  }

  /** A running sync of this publisher (only one may run at a time), or null. */
  running(replication: string, publisherId: string, kind: SyncRecord['kind']): SyncRecord | null {
    for (const r of this.records.values()) {
      if (r.kind === kind && r.replication === replication && r.publisherId === publisherId && !ended(r)) return r;
    }
    return null;
  }

  started(r: SyncRecord, member: string, partitions: readonly number[]): void {
    if (ended(r)) return;
    let set = r.started.get(member);
    if (set === undefined) r.started.set(member, (set = new Set()));
    for (const p of partitions) if (!r.done.has(p)) set.add(p);
  }

  describe(r: SyncRecord, maps: readonly string[], allMaps: boolean): void {
    r.maps = [...maps];
    r.allMaps = allMaps;
  }

  /** A member no longer runs these partitions (they moved away); their new owner takes them over. */
  released(r: SyncRecord, member: string, partitions: readonly number[]): void {
    const mine = r.started.get(member);
    if (mine !== undefined) for (const p of partitions) mine.delete(p);
  }

  done(r: SyncRecord, member: string, partitions: readonly number[], counts?: Omit<SyncCheckResult, 'checkedPartitions'>): void {
    if (r.stage === 'FINISHED') return;
    const mine = r.started.get(member);
    let fresh = 0;
    for (const p of partitions) {
      mine?.delete(p);
      if (p >= 0 && p < r.total && !r.done.has(p)) {
        r.done.add(p);
        fresh++;
      }
    }
    if (counts !== undefined && fresh > 0) {
      r.check.checkedPartitions += fresh;
      r.check.diffPartitions += counts.diffPartitions;
      r.check.checkedLeaves += counts.checkedLeaves;
      r.check.diffLeaves += counts.diffLeaves;
      r.check.entriesToSync += counts.entriesToSync;
    }
    r.lastMoveMonoMs = this.monotonicMs();
    if (r.done.size >= r.total) this.end(r, 'FINISHED', '');
    else if (r.done.size > 0 && r.stage === 'STARTED') r.stage = 'IN_PROGRESS';
  }

  fail(r: SyncRecord, reason: string): void {
    if (!ended(r)) this.end(r, 'FAILED', reason);
  }

  /**
   * A member left: its unfinished partitions are forgotten here; their new owners take them over
   * (wan-service.ts takeOverSyncs). Returns the records it had unfinished partitions in.
   */
  memberLeft(member: string): SyncRecord[] {
    const touched: SyncRecord[] = [];
    for (const r of this.records.values()) {
      const mine = r.started.get(member);
      r.started.delete(member);
      if (!ended(r) && mine !== undefined && mine.size > 0) touched.push(r);
    }
    return touched;
  }

  /**
   * What another member knows of a record (gossip, and what a joiner is told): its done partitions,
   * its failure, and a check's totals. Merging converges: done sets are unioned, counts take the
   * larger, FAILED spreads, and a record every partition of which is done is FINISHED.
   */
  merge(r: SyncRecord, done: readonly number[], failure: string, totals: Omit<SyncCheckResult, 'checkedPartitions'> | null): void {
    if (r.stage === 'FINISHED') return;
    let fresh = false;
    for (const p of done) {
      if (p >= 0 && p < r.total && !r.done.has(p)) {
        r.done.add(p);
        fresh = true;
      }
    }
    if (totals !== null) {
      r.check.checkedPartitions = Math.max(r.check.checkedPartitions, r.done.size);
      r.check.diffPartitions = Math.max(r.check.diffPartitions, totals.diffPartitions);
      r.check.checkedLeaves = Math.max(r.check.checkedLeaves, totals.checkedLeaves);
      r.check.diffLeaves = Math.max(r.check.diffLeaves, totals.diffLeaves);
      r.check.entriesToSync = Math.max(r.check.entriesToSync, totals.entriesToSync);
    }
    if (fresh) r.lastMoveMonoMs = this.monotonicMs();
    if (r.done.size >= r.total) this.end(r, 'FINISHED', '');
    else if (failure !== '') this.fail(r, failure);
    else if (r.done.size > 0 && r.stage === 'STARTED') r.stage = 'IN_PROGRESS';
  }

  /** Records running, or ended less than `withinMs` ago (gossiped until every member has them). */
  recent(withinMs: number): SyncRecord[] {
    const now = this.monotonicMs();
    return [...this.records.values()].filter((r) => !ended(r) || now - r.endedAtMonoMs <= withinMs);
  }

  /** Fails syncs with no progress for STALL_MS; returns them. */
  checkStalls(): SyncRecord[] {
    const now = this.monotonicMs();
    const failed: SyncRecord[] = [];
    for (const r of this.records.values()) {
      if (ended(r) || now - r.lastMoveMonoMs < STALL_MS) continue;
      this.end(r, 'FAILED', `no partition finished for ${Math.round(STALL_MS / 1000)} s`);
      failed.push(r);
    }
    return failed;
  }

  private end(r: SyncRecord, stage: 'FINISHED' | 'FAILED', reason: string): void {
    r.stage = stage;
    r.failure = reason;
    r.endedAtMonoMs = this.monotonicMs();
  }

  private prune(): void {
    const now = this.monotonicMs();
    for (const [id, r] of this.records) if (ended(r) && now - r.endedAtMonoMs > RETAIN_MS && this.records.size > 0) this.records.delete(id);
    if (this.records.size <= RECORDS_MAX) return;
    const endedList = [...this.records.values()].filter(ended).sort((a, b) => a.endedAtMonoMs - b.endedAtMonoMs);
    for (const r of endedList) {
      if (this.records.size <= RECORDS_MAX) break;
      this.records.delete(r.id);
    }
  }
}

export function ended(r: SyncRecord): boolean {
  return r.stage === 'FINISHED' || r.stage === 'FAILED';
}

export function progressOf(r: SyncRecord): number {
  if (r.stage === 'FINISHED') return 100;
  return r.total === 0 ? 100 : Math.floor((r.done.size * 100) / r.total);
}
