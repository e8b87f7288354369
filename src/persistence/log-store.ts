// One member's persistence log: segments in a directory, appended in batches, read back at start.
// I/O goes through the Disk seam only, so the same code runs on real files and on the simulated
// disk.
//
// Writing: `append` gives a record the next sequence number and adds it to the batch of this turn;
// `flush` (scheduled once per turn by the owner of the log) writes the batch with one append. A
// record appended without durability is acknowledged when its batch reached the operating system;
// a durable one when an fsync that started after its batch was written has completed (group
// commit: one fsync covers every batch written before it started). When the open segment reaches
// `segmentBytes` it is synced, renamed to its sealed name and a new one is opened.
//
// Reading (`open`): the directory is locked, leftovers are deleted, sealed segments are replayed in
// sequence order and then the open one, whose torn tail (if any) is cut off and reported.
//
// Compaction (compactor.ts) reads sealed segments and replaces runs of them (`replaceRun`).
//
// Invariants:
// - Sequence numbers rise by one per record across the log's whole life (recovery continues from
//   the highest one read).
// - A failed append leaves the open segment as it was (cut back to its previous size); when that
//   fails too the log refuses every further write (`failure`).
// - Nothing is acknowledged that did not reach the disk as asked.
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import type { Disk, DiskLock } from './disk.js';
import { joinPath } from './disk.js';
import { RecordBatch, type LogRecord } from './log-record.js';
import type { MapRecordView } from '../data/record-table.js';
import { scanSegment } from './segment-scan.js';
import { openName, planListing, sealedName } from './segment-files.js';

export const SEGMENT_BYTES_DEFAULT = 8 * 1024 * 1024;

/** A record as the owner hands it in: the log gives the sequence number. */
export type NewRecord = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;

export interface LogStoreOptions {
  readonly disk: Disk;
  readonly dir: string;
  /** Who holds the directory's lock (shown to a second process that tries). */
  readonly owner: string;
  readonly log: ComponentLogger;
  readonly segmentBytes?: number;
  /** The directory's lock, when the caller took it already (member-dir.ts); else `open` takes it. */
  readonly lock?: DiskLock;
}

export interface SegmentState {
  name: string;
  readonly first: number;
  last: number;
  bytes: number;
  records: number;
  /** Bytes of records a compaction would keep, as last surveyed (compactor.ts); -1: not surveyed. */
  liveBytes: number;
  sealed: boolean;
}

export interface RecoveryReport {
  readonly segments: number;
  readonly records: number;
  readonly bytes: number;
  readonly lastSeq: number;
  /** The torn tail cut from the open segment, if any. */
  readonly tornTail: { readonly file: string; readonly offset: number; readonly bytes: number; readonly reason: string } | null;
  readonly removedLeftovers: readonly string[];
}

type Ack = (error: Error | null) => void;

interface Waiter {
  readonly seq: number;
  readonly durable: boolean;
  readonly ack: Ack;
}

/** Failed ranges remembered for acknowledgements asked for later. */
const FAILED_RANGES_MAX = 16;

export class LogStore {
  private readonly disk: Disk;
  private readonly segmentBytes: number;
  private readonly segments: SegmentState[] = [];
  private batch = new RecordBatch();
  private batchFirstSeq = 0;
  private nextSeq: number;
  /** Every record up to this sequence number reached the operating system. */
  private writtenSeq: number;
  /** Every record up to this sequence number is synced. */
  private syncedSeq: number;
  /** The highest durable record appended: a sync must cover it. */
  private syncWanted = 0;
  private syncInFlight = false;
  /** A flush waited for the fsync in flight. */
  private flushAfterSync = false;
  /** Acknowledgements waiting for a write or a sync (few: one per operation in flight). */
  private waiters: Waiter[] = [];
  /** Ranges of sequence numbers whose write or sync failed, with the error (the newest few). */
  private readonly failedRanges: { from: number; to: number; durableOnly: boolean; error: GridError }[] = [];
  private closed = false;
  /** Why the log takes no more writes (a failed append that could not be undone), or null. */
  failure: GridError | null = null;
  /** Bytes appended since the log was opened. */
  bytesAppended = 0;

  private constructor(
    private readonly o: LogStoreOptions,
    private readonly lock: DiskLock,
    lastSeq: number,
  ) {
    this.disk = o.disk;
    this.segmentBytes = o.segmentBytes ?? SEGMENT_BYTES_DEFAULT;
    this.nextSeq = lastSeq + 1;
    this.writtenSeq = lastSeq;
    this.syncedSeq = lastSeq;
  }

  /**
   * Locks and reads the log in `dir` (created when missing), handing every record to `onRecord` in
   * sequence order. Throws ERR_PERSISTENCE_LOCKED, ERR_PERSISTENCE_IO or ERR_PERSISTENCE_CORRUPT.
   */
  static open(o: LogStoreOptions, onRecord: (r: LogRecord) => void): { store: LogStore; report: RecoveryReport } {
    const steps = LogStore.opening(o, onRecord);
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
    }
  }

  /**
   * The same as `open`, giving the event loop a turn (`yieldTurn`) after each segment, so a member
   * loading gigabytes keeps answering its health probes meanwhile.
   */
  static async openAsync(o: LogStoreOptions, onRecord: (r: LogRecord) => void, yieldTurn: () => Promise<void>): Promise<{ store: LogStore; report: RecoveryReport }> {
    const steps = LogStore.opening(o, onRecord);
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
      await yieldTurn();
    }
  }

  /** Opening as steps: one segment read per step. */
  private static *opening(o: LogStoreOptions, onRecord: (r: LogRecord) => void): Generator<void, { store: LogStore; report: RecoveryReport }, void> {
    const disk = o.disk;
    disk.makeDir(o.dir);
    const lock = o.lock ?? disk.lock(o.dir, o.owner);
    try {
      let listing;
      try {
        listing = planListing(disk.list(o.dir));
      } catch (e) {
        throw new GridError('ERR_PERSISTENCE_CORRUPT', `${o.dir}: the log's files do not fit together: ${(e as Error).message}`);
      }
      for (const name of listing.obsolete) disk.remove(joinPath(o.dir, name));
      if (listing.obsolete.length > 0) disk.syncDir(o.dir);
      const states: SegmentState[] = [];
      let lastSeq = 0;
      let records = 0;
      let bytes = 0;
      const replay = (r: LogRecord): void => {
        lastSeq = r.seq;
        onRecord(r);
      };
      for (const s of listing.sealed) {
        const path = joinPath(o.dir, s.name);
        const size = disk.size(path);
        const out = scanSegment({ size, readAt: (off, n) => disk.readAt(path, off, n) }, path, false, (r) => {
          if (r.seq < s.first || r.seq > s.last) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${path}: record ${r.seq} outside the segment's range`);
          if (r.seq <= lastSeq) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${path}: record ${r.seq} is not after ${lastSeq}`);
          replay(r);
        });
        states.push({ name: s.name, first: s.first, last: s.last, bytes: size, records: out.records, liveBytes: -1, sealed: true });
        records += out.records;
        bytes += size;
        lastSeq = Math.max(lastSeq, s.last);
        yield;
      }
      let tornTail: RecoveryReport['tornTail'] = null;
      if (listing.open !== null) {
        const open = listing.open;
        const path = joinPath(o.dir, open.name);
        const size = disk.size(path);
        const out = scanSegment({ size, readAt: (off, n) => disk.readAt(path, off, n) }, path, true, (r) => {
          if (r.seq < open.first || r.seq <= lastSeq) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${path}: record ${r.seq} is not after ${lastSeq}`);
          replay(r);
        });
        if (out.tornTail !== null) {
          tornTail = { file: path, ...out.tornTail };
          o.log.warning(`${path}: dropped a torn last write of ${out.tornTail.bytes} bytes at offset ${out.tornTail.offset} (${out.tornTail.reason})`);
          disk.truncate(path, out.validBytes);
          disk.syncNow(path);
        }
        states.push({ name: open.name, first: open.first, last: Math.max(open.first - 1, out.lastSeq), bytes: out.validBytes, records: out.records, liveBytes: -1, sealed: false });
        records += out.records;
        bytes += out.validBytes;
        lastSeq = Math.max(lastSeq, out.lastSeq);
      }
      const store = new LogStore(o, lock, lastSeq);
      store.segments.push(...states);
      if (listing.open === null) store.openSegment(store.nextSeq);
      return { store, report: { segments: states.length, records, bytes, lastSeq, tornTail, removedLeftovers: listing.obsolete } };
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /** The sequence number the next record gets. */
  get nextSequence(): number {
    return this.nextSeq;
  }

  /**
   * Adds a record to this turn's batch; returns its sequence number. `ack` (optional) is called
   * once the record is as durable as asked, or with the error that kept it from being so.
   */
  append(record: NewRecord, durable: boolean, ack?: Ack): number {
    if (this.closed) throw new GridError('ERR_PERSISTENCE_IO', `${this.o.dir}: the log is closed`);
    if (this.failure !== null) throw this.failure;
    const seq = this.nextSeq++;
    if (this.batch.count === 0) this.batchFirstSeq = seq;
    this.batch.add(record as LogRecord, seq);
    if (durable) this.syncWanted = seq;
    if (ack !== undefined) this.whenDone(seq, durable, ack);
    return seq;
  }

  /**
   * The hot path's append of a map put, from the entry's fields (no record object). Returns the
   * sequence number.
   */
  appendMapPut(partitionId: number, partitionVersion: number, name: string, key: Uint8Array, e: MapRecordView, expirationTimeMs: number, durable: boolean): number {
    if (this.closed) throw new GridError('ERR_PERSISTENCE_IO', `${this.o.dir}: the log is closed`);
    if (this.failure !== null) throw this.failure;
    const seq = this.nextSeq++;
    if (this.batch.count === 0) this.batchFirstSeq = seq;
    this.batch.addMapPut(partitionId, seq, partitionVersion, name, key, e, expirationTimeMs);
    if (durable) this.syncWanted = seq;
    return seq;
  }

  /**
   * Calls `ack` once the record `seq` reached the operating system (or, `durable`, the disk), or
   * with the error that kept it from doing so; at once when it already has.
   */
  whenDone(seq: number, durable: boolean, ack: Ack): void {
    for (const f of this.failedRanges) {
      if (seq >= f.from && seq <= f.to && (durable || !f.durableOnly)) return ack(f.error);
    }
    if (seq <= (durable ? this.syncedSeq : this.writtenSeq)) return ack(null);
    if (this.failure !== null && seq > this.writtenSeq) return ack(this.failure);
    this.waiters.push({ seq, durable, ack });
  }

  /**
   * Writes this turn's batch (one append), acknowledges what it covers, starts an fsync if needed.
   * While an fsync runs, the batch waits for it (unless `force`): appending to the page being
   * written back would block this thread until the fsync is done (group commit: the next fsync
   * covers everything that waited).
   */
  flush(force = false): void {
    if (this.batch.count === 0) return;
    if (this.syncInFlight && !force) {
      this.flushAfterSync = true;
      return;
    }
    const seg = this.open(this.batchFirstSeq);
    const path = joinPath(this.o.dir, seg.name);
    const records = this.batch.count;
    const lastSeq = this.batchFirstSeq + records - 1;
    const bytes = this.batch.take();
    try {
      this.disk.append(path, bytes);
    } catch (e) {
      this.undoAppend(path, seg.bytes, e as Error);
      const error = e instanceof GridError ? e : new GridError('ERR_PERSISTENCE_IO', `${path}: ${(e as Error).message}`);
      this.fail(this.batchFirstSeq, lastSeq, false, error);
      return;
    }
    seg.bytes += bytes.length;
    seg.records += records;
    seg.last = lastSeq;
    this.writtenSeq = lastSeq;
    this.bytesAppended += bytes.length;
    if (seg.bytes >= this.segmentBytes) this.seal();
    else {
      this.settle();
      this.startSync();
    }
  }

  /**
   * Writes what is pending and seals the open segment if it holds records: afterwards every record
   * appended so far is in a sealed (immutable) segment. For a consistent backup.
   */
  sealOpen(): void {
    this.flush(true);
    const seg = this.segments[this.segments.length - 1];
    if (seg !== undefined && !seg.sealed && seg.records > 0 && this.failure === null) this.seal();
    if (this.failure !== null) throw this.failure;
  }

  /** The directory of the log. */
  get dir(): string {
    return this.o.dir;
  }

  /**
   * A compaction replaced the sealed segments at indexes [from, to] with `output` (null: the run
   * held nothing to keep, and its files are gone).
   */
  replaceRun(from: number, to: number, output: SegmentState | null): void {
    const run = this.segments.slice(from, to + 1);
    if (run.length === 0 || run.some((s) => !s.sealed)) throw new GridError('ERR_PERSISTENCE_IO', `${this.o.dir}: a compaction run must be sealed segments`);
    this.segments.splice(from, to - from + 1, ...(output === null ? [] : [output]));
  }

  /** Records in every segment (dead ones included). */
  get totalRecords(): number {
    let n = 0;
    for (const s of this.segments) n += s.records;
    return n;
  }

  /** Bytes of every segment. */
  get totalBytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.bytes;
    return n;
  }

  /** Per segment: name, range, bytes, records and live records (for compaction and metrics). */
  figures(): readonly Readonly<SegmentState>[] {
    return this.segments;
  }

  /** Writes what is pending, syncs, releases the lock. Acks still waiting get their answer first. */
  close(): void {
    if (this.closed) return;
    this.flush(true);
    const seg = this.segments[this.segments.length - 1];
    if (seg !== undefined && !seg.sealed && this.failure === null) {
      const path = joinPath(this.o.dir, seg.name);
      try {
        this.disk.syncNow(path);
        this.syncedSeq = this.writtenSeq;
      } catch (e) {
        this.fail(this.syncedSeq + 1, this.writtenSeq, true, e instanceof GridError ? e : new GridError('ERR_PERSISTENCE_IO', `${path}: ${(e as Error).message}`));
      }
      this.settle();
      this.disk.close(path);
    }
    const closing = new GridError('ERR_PERSISTENCE_IO', `${this.o.dir}: the log closed before the write was durable`);
    const left = this.waiters;
    this.waiters = [];
    for (const w of left) w.ack(closing);
    this.closed = true;
    this.lock.release();
  }

  /** The open segment; a new one starting at `first` when the last one is sealed. */
  private open(first: number): SegmentState {
    const seg = this.segments[this.segments.length - 1];
    if (seg !== undefined && !seg.sealed) return seg;
    return this.openSegment(first);
  }

  private openSegment(first: number): SegmentState {
    const seg: SegmentState = { name: openName(first), first, last: first - 1, bytes: 0, records: 0, liveBytes: -1, sealed: false };
    this.disk.append(joinPath(this.o.dir, seg.name), new Uint8Array(0));
    this.disk.syncDir(this.o.dir);
    this.segments.push(seg);
    return seg;
  }

  /** Syncs the open segment, gives it its sealed name, opens the next. */
  private seal(): void {
    const seg = this.segments[this.segments.length - 1] as SegmentState;
    const path = joinPath(this.o.dir, seg.name);
    try {
      this.disk.syncNow(path);
      this.syncedSeq = this.writtenSeq;
      const name = sealedName(seg.first, seg.last);
      this.disk.rename(path, joinPath(this.o.dir, name));
      this.disk.syncDir(this.o.dir);
      seg.name = name;
      seg.sealed = true;
    } catch (e) {
      this.failure = e instanceof GridError ? e : new GridError('ERR_PERSISTENCE_IO', `${path}: ${(e as Error).message}`);
      this.o.log.severe(`persistence log stopped: ${this.failure.message}`);
      this.fail(this.syncedSeq + 1, this.nextSeq - 1, this.syncedSeq < this.writtenSeq, this.failure);
    }
    this.settle();
  }

  /** Acknowledges every waiter whose record is now written (or synced, for durable ones). */
  private settle(): void {
    if (this.waiters.length === 0) return;
    const keep: Waiter[] = [];
    const ready: Waiter[] = [];
    for (const w of this.waiters) (w.seq <= (w.durable ? this.syncedSeq : this.writtenSeq) ? ready : keep).push(w);
    this.waiters = keep;
    for (const w of ready) w.ack(null);
  }

  /** A write (or only its sync: `durableOnly`) of records [from, to] failed: their waiters get `error`. */
  private fail(from: number, to: number, durableOnly: boolean, error: GridError): void {
    this.failedRanges.push({ from, to, durableOnly, error });
    if (this.failedRanges.length > FAILED_RANGES_MAX) this.failedRanges.shift();
    const keep: Waiter[] = [];
    const failed: Waiter[] = [];
    for (const w of this.waiters) (w.seq >= from && w.seq <= to && (w.durable || !durableOnly) ? failed : keep).push(w);
    this.waiters = keep;
    for (const w of failed) w.ack(error);
  }

  private startSync(): void {
    // Nothing to do while no durable record waits, or while what waits is not written yet (the
    // flush that writes it starts the sync).
    if (this.syncInFlight || this.syncWanted <= this.syncedSeq || this.writtenSeq <= this.syncedSeq || this.closed) return;
    const seg = this.segments[this.segments.length - 1] as SegmentState;
    const path = joinPath(this.o.dir, seg.name);
    const target = this.writtenSeq;
    const from = this.syncedSeq + 1;
    this.syncInFlight = true;
    this.disk.sync(path, (error) => {
      this.syncInFlight = false;
      if (error !== null) this.fail(from, target, true, error instanceof GridError ? error : new GridError('ERR_PERSISTENCE_IO', `${path}: ${error.message}`));
      else if (target > this.syncedSeq) this.syncedSeq = target;
      this.settle();
      if (this.flushAfterSync && !this.closed) {
        this.flushAfterSync = false;
        this.flush(); // starts the next fsync when it holds durable records
        return;
      }
      this.startSync();
    });
  }

  /** Cuts the open segment back after a failed append; a failure to do so stops the log. */
  private undoAppend(path: string, size: number, cause: Error): void {
    try {
      if (this.disk.exists(path) && this.disk.size(path) > size) this.disk.truncate(path, size);
    } catch (e) {
      this.failure = new GridError('ERR_PERSISTENCE_IO', `${path}: an append failed (${cause.message}) and could not be undone: ${(e as Error).message}`);
      this.o.log.severe(`persistence log stopped: ${this.failure.message}`);
    }
  }

  private segmentOf(seq: number): SegmentState | null {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.segments[mid] as SegmentState;
      if (seq < s.first) hi = mid - 1;
      else if (seq > s.last) lo = mid + 1;
      else return s;
    }
    return null;
  }
}
