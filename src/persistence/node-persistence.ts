// A member's persistence, assembled: the log in its directory, the service that feeds it from the
// replica store's mutation stream, the metadata file, and the state of a whole-cluster recovery.
// ClusterNode owns one when `<persistence enabled="true">`; everything here goes through the Disk
// seam and the injected timers, so the simulation can run it on the simulated disk.
import type { Config } from '../config/types.js';
import { resolveMapConfig, resolveQueueConfig } from '../config/match.js';
import { queueConfigName } from '../data/queue-service.js';
import type { ReplicaStore } from '../data/replica-store.js';
import { joinPath, type Disk, type DiskLock } from './disk.js';
import { LogStore, type LogStoreOptions, type RecoveryReport } from './log-store.js';
import type { LogRecord } from './log-record.js';
import { writeMetadata, type MemberMetadata } from './member-metadata.js';
import { applyRecord, PersistenceService, recordIsLive, type LoadTally, type Ticket } from './persistence-service.js';
import type { Clock } from '../util/clock.js';
import { Compactor } from './compactor.js';
import { shouldStartPass, type CompactionPolicy } from './compaction-plan.js';
import type { ComponentLogger } from '../util/logger.js';

/** What the runtime found for this member under base-dir (member-dir.ts). */
export interface PersistenceSetup {
  readonly disk: Disk;
  readonly dir: string;
  readonly lock: DiskLock;
  /** The metadata found in the directory; null: a new directory (nothing to recover). */
  readonly metadata: MemberMetadata | null;
  readonly segmentBytes?: number;
  /** Schedules the log's flush for the end of this turn (runtime: setImmediate). */
  readonly defer: (fn: () => void) => void;
  /** `backup-dir`, resolved; '' when none is configured. */
  readonly backupDir: string;
  /** Compaction starts once the log holds this many bytes and mostly dead records (tests lower it). */
  readonly compactionMinBytes?: number;
  readonly compactionPolicy?: CompactionPolicy;
}

/** Default of PersistenceSetup.compactionMinBytes. */
const COMPACTION_MIN_BYTES = 32 * 1024 * 1024;

/** Structure names whose durability is remembered at most (wildcard matching per write is not free). */
const DURABILITY_CACHE_MAX = 10_000;

export class NodePersistence {
  private logStore: LogStore | null = null;
  private serviceNow: PersistenceService | null = null;
  private readonly mapDurability = new Map<string, { fsync: boolean } | null>();
  private readonly queueDurability = new Map<string, { fsync: boolean } | null>();
  private lastMetadataError = '';
  private compactor: Compactor | null = null;
  /** LogStore.bytesAppended when the last compaction pass started. */
  private bytesAtLastPass = 0;
  private compactionScheduled = false;

  constructor(
    readonly setup: PersistenceSetup,
    private readonly config: Config,
    private readonly store: ReplicaStore,
    private readonly clock: Clock,
    private readonly log: ComponentLogger,
  ) {}

  get service(): PersistenceService | null {
    return this.serviceNow;
  }

  /**
   * Reads the log into the (empty) store and starts logging. Throws ERR_PERSISTENCE_* naming the
   * file when the log cannot be read. `owner` describes this process for the directory lock.
   */
  load(owner: string): { report: RecoveryReport; tally: LoadTally } {
    const { opts, tally, onRecord } = this.loading(owner);
    const { store: logStore, report } = LogStore.open(opts, onRecord);
    this.started(logStore);
    return { report, tally };
  }

  /** The same as `load`, giving the event loop a turn after each segment (`yieldTurn`). */
  async loadAsync(owner: string, yieldTurn: () => Promise<void>): Promise<{ report: RecoveryReport; tally: LoadTally }> {
    const { opts, tally, onRecord } = this.loading(owner);
    const { store: logStore, report } = await LogStore.openAsync(opts, onRecord, yieldTurn);
    this.started(logStore);
    return { report, tally };
  }

  private loading(owner: string): { opts: LogStoreOptions; tally: LoadTally; onRecord: (r: LogRecord) => void } {
    const now = this.clock.nowMs();
    const tally: LoadTally = { records: 0, entriesSkippedExpired: 0 };
    const expiredBefore = this.setup.metadata?.lastAliveMs ?? now;
    const opts: LogStoreOptions = { disk: this.setup.disk, dir: this.setup.dir, owner, log: this.log, lock: this.setup.lock, ...(this.setup.segmentBytes === undefined ? {} : { segmentBytes: this.setup.segmentBytes }) };
    return { opts, tally, onRecord: (r) => applyRecord(this.store, r, expiredBefore, now, tally) };
  }

  /** The log is open: start logging and compacting. */
  private started(logStore: LogStore): void {
    this.logStore = logStore;
    const service = new PersistenceService({
      store: this.store,
      log: logStore,
      mapDurability: (name) => this.durability(this.mapDurability, name, () => resolveMapConfig(this.config.maps, name).dataPersistence),
      queueDurability: (name) => this.durability(this.queueDurability, name, () => resolveQueueConfig(this.config.queues, queueConfigName(name)).dataPersistence),
      defer: this.setup.defer,
      nowMs: () => this.clock.nowMs(),
    });
    service.attach();
    this.serviceNow = service;
    this.compactor = new Compactor(logStore, {
      disk: this.setup.disk,
      log: this.log,
      paused: () => this.backupsRunning > 0,
      isLive: (r) => recordIsLive(this.store, r, this.clock.nowMs()),
      ...(this.setup.compactionPolicy === undefined ? {} : { policy: this.setup.compactionPolicy }),
    });
  }

  /**
   * Called about once a second: starts a compaction pass when compaction-plan.ts shouldStartPass
   * says so (the log past compactionMinBytes, half of that written since the last pass, more
   * than half of its records superseded by the entries held), then runs it a segment per turn.
   */
  tick(schedule: (fn: () => void) => void): void {
    const log = this.logStore;
    const c = this.compactor;
    if (log === null || c === null || c.running) return;
    const minBytes = this.setup.compactionMinBytes ?? COMPACTION_MIN_BYTES;
    const written = log.totalBytes;
    if (!shouldStartPass({ logBytes: written, bytesSinceLastPass: log.bytesAppended - this.bytesAtLastPass, recordsWritten: log.totalRecords, entriesHeld: this.store.maps.totalEntries(), minBytes })) return;
    this.bytesAtLastPass = log.bytesAppended;
    c.start();
    this.runCompaction(schedule);
  }

  /** Figures for the metrics call (keys as in the metrics catalog). */
  metrics(): Record<string, number> {
    const log = this.logStore;
    const c = this.compactor?.counters;
    return {
      persistenceLogBytes: log?.totalBytes ?? 0,
      persistenceLogSegments: log?.figures().length ?? 0,
      persistenceRecordsWritten: this.serviceNow?.counters.recordsWritten ?? 0,
      persistenceWriteFailures: this.serviceNow?.counters.writeFailures ?? 0,
      persistenceCompactionPasses: c?.passes ?? 0,
      persistenceCompactionRuns: c?.runsCompacted ?? 0,
      persistenceCompactionReclaimedBytes: c?.bytesReclaimed ?? 0,
    };
  }

  private runCompaction(schedule: (fn: () => void) => void): void {
    if (this.compactionScheduled) return;
    this.compactionScheduled = true;
    schedule(() => {
      this.compactionScheduled = false;
      let more = false;
      try {
        more = this.compactor?.step() ?? false;
      } catch (e) {
        this.log.severe(`compaction stopped: ${e instanceof Error ? e.message : String(e)}`);
        this.compactor = null;
        return;
      }
      if (more) this.runCompaction(schedule);
    });
  }

  /** The ticket of the records the last operation logged, or 0 (nothing persistent changed). */
  takeTicket(): Ticket {
    return this.serviceNow?.takeTicket() ?? 0;
  }

  /** Calls `ack` once the ticket's records are as durable as asked. */
  whenDone(ticket: Ticket, ack: (error: Error | null) => void): void {
    if (this.serviceNow === null) return ack(null);
    this.serviceNow.whenDone(ticket, ack);
  }

  /** Writes the metadata file; a failure is logged (once per distinct message), not thrown. */
  /**
   * A backup's acknowledgement waits for the records of what it confirms: `sendAck` runs once they
   * are on disk; a write error leaves the write unacknowledged (logged).
   */
  whenPersisted(sendAck: () => void): void {
    const ticket = this.takeTicket();
    if (ticket === 0) return sendAck();
    this.whenDone(ticket, (error) => {
      if (error === null) sendAck();
      else this.log.severe(`a backup write could not be persisted, so it is not acknowledged: ${error.message}`);
    });
  }

  writeMetadata(m: MemberMetadata): void {
    try {
      writeMetadata(this.setup.disk, this.setup.dir, m);
      this.lastMetadataError = '';
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      if (text !== this.lastMetadataError) this.log.severe(`could not write the member metadata: ${text}`);
      this.lastMetadataError = text;
    }
  }

  /**
   * Copies a consistent snapshot of the log, as of now, to `target` (backup-dir/backup-<seq>/<uuid>):
   * the open segment is sealed, then every sealed segment is linked (or copied) there, one file per
   * `step`, and the metadata (with `backupSeq`) written last. Returns a function that interrupts it:
   * the partial copy is removed and `done` gets an error. Compaction leaves segments alone meanwhile.
   */
  backup(target: string, metadata: MemberMetadata, step: (fn: () => void) => void, done: (error: Error | null) => void): () => void {
    const disk = this.setup.disk;
    const log = this.logStore;
    let interrupted = false;
    let finished = false;
    const finish = (error: Error | null): void => {
      if (finished) return;
      finished = true;
      this.backupsRunning--;
      if (error !== null) {
        try {
          disk.remove(target);
        } catch (e) {
          this.log.warning(`backup: could not remove the partial copy ${target}: ${(e as Error).message}`);
        }
      }
      done(error);
    };
    this.backupsRunning++;
    let names: string[];
    try {
      if (log === null) throw new Error('the log is not open');
      log.sealOpen();
      names = log.figures().filter((f) => f.sealed).map((f) => f.name);
      if (disk.exists(target)) disk.remove(target);
      disk.makeDir(target);
    } catch (e) {
      finish(e as Error);
      return () => {};
    }
    let i = 0;
    const next = (): void => {
      if (finished) return;
      if (interrupted) return finish(new Error('the backup was interrupted'));
      try {
        if (i < names.length) {
          const name = names[i++] as string;
          disk.link(joinPath(this.setup.dir, name), joinPath(target, name));
          step(next);
          return;
        }
        writeMetadata(disk, target, metadata);
        finish(null);
      } catch (e) {
        finish(e as Error);
      }
    };
    step(next);
    return () => {
      interrupted = true;
    };
  }

  /** Backups copying segments now (compaction must not delete any while one runs). */
  backupsRunning = 0;

  /** Flushes and syncs the log, releases the directory. */
  close(): void {
    this.serviceNow?.detach();
    if (this.logStore !== null) this.logStore.close();
    else this.setup.lock.release();
  }

  private durability(cache: Map<string, { fsync: boolean } | null>, name: string, resolve: () => { enabled: boolean; fsync: boolean }): { fsync: boolean } | null {
    let d = cache.get(name);
    if (d === undefined) {
      const c = resolve();
      d = c.enabled ? { fsync: c.fsync } : null;
      if (cache.size >= DURABILITY_CACHE_MAX) cache.clear();
      cache.set(name, d);
    }
    return d;
  }
}
