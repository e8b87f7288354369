// Background compaction of the log: sealed segments whose records are mostly superseded are
// rewritten into one segment holding only what is still needed, a slice of work per call of `step`,
// so writes never wait for it.
//
// What a rewrite keeps (everything else is garbage):
// - a map put or queue add that the store still holds as written (`isLive`: same entry version and
//   value; same queue item id and value). A live record always passes; a dead one that happens to
//   pass too is kept, which costs bytes but never changes what a replay builds;
// - a remove, clear or partition drop while an older segment than the run remains: that segment may
//   hold a put the tombstone must keep cancelling. A run that starts at the oldest segment drops them.
//
// A cycle: survey every sealed segment (bytes that would be kept), ask the planner for a run, rewrite
// it, repeat until the planner finds nothing. The rewrite goes to a temporary file, is synced, and
// gets the sealed name of the run's whole range; only then are the inputs deleted (a crash between
// the two leaves inputs that the listing at start-up recognises as superseded). An output with
// nothing in it is deleted after its inputs. Deletions wait while `paused()` (a backup is linking
// or copying segments).
import type { ComponentLogger } from '../util/logger.js';
import { joinPath, type Disk } from './disk.js';
import { planCompaction, COMPACTION_POLICY_DEFAULT, type CompactionPolicy, type CompactionRun } from './compaction-plan.js';
import { RecordBatch, type LogRecord } from './log-record.js';
import type { LogStore, SegmentState } from './log-store.js';
import { scanSegment } from './segment-scan.js';
import { sealedName, tempName } from './segment-files.js';

export interface CompactorOptions {
  readonly disk: Disk;
  readonly log: ComponentLogger;
  readonly policy?: CompactionPolicy;
  /** Whether deleting segment files must wait (a backup is running). */
  readonly paused: () => boolean;
  /** Whether a map put or queue add is still what the store holds. */
  readonly isLive: (r: LogRecord) => boolean;
}

export interface CompactorCounters {
  cycles: number;
  runsCompacted: number;
  segmentsRewritten: number;
  bytesReclaimed: number;
}

type Phase =
  | { readonly kind: 'idle' }
  | { readonly kind: 'survey'; index: number }
  | { readonly kind: 'rewrite'; readonly run: CompactionRun; readonly inputs: readonly SegmentState[]; readonly keepTombstones: boolean; next: number; readonly tmp: string; outBytes: number; outRecords: number; lastSeq: number }
  | { readonly kind: 'delete'; readonly run: CompactionRun; readonly inputs: readonly SegmentState[]; readonly output: SegmentState | null; readonly outputPath: string };

const TOMBSTONES: ReadonlySet<LogRecord['type']> = new Set(['mapRemove', 'mapClear', 'queueRemove', 'queueClear', 'partitionDrop']);

export class Compactor {
  readonly counters: CompactorCounters = { cycles: 0, runsCompacted: 0, segmentsRewritten: 0, bytesReclaimed: 0 };
  private phase: Phase = { kind: 'idle' };
  private readonly policy: CompactionPolicy;

  constructor(
    private readonly store: LogStore,
    private readonly o: CompactorOptions,
  ) {
    this.policy = o.policy ?? COMPACTION_POLICY_DEFAULT;
  }

  get running(): boolean {
    return this.phase.kind !== 'idle';
  }

  /** Starts a cycle (no-op while one runs). */
  start(): void {
    if (this.phase.kind !== 'idle') return;
    this.counters.cycles++;
    this.phase = { kind: 'survey', index: 0 };
  }

  /** Does one slice of work (about one segment); returns whether more remains. */
  step(): boolean {
    const p = this.phase;
    switch (p.kind) {
      case 'idle':
        return false;
      case 'survey':
        return this.survey(p);
      case 'rewrite':
        return this.rewrite(p);
      case 'delete':
        return this.finishRun(p);
    }
  }

  private sealed(): SegmentState[] {
    return this.store.figures().filter((s) => s.sealed) as SegmentState[];
  }

  private survey(p: { index: number }): boolean {
    const sealed = this.sealed();
    if (p.index < sealed.length) {
      const seg = sealed[p.index] as SegmentState;
      let kept = 0;
      this.scan(seg, (r, length) => {
        if (TOMBSTONES.has(r.type) || this.o.isLive(r)) kept += length;
      });
      seg.liveBytes = kept;
      p.index++;
      return true;
    }
    const run = planCompaction(sealed.map((s) => ({ name: s.name, first: s.first, last: s.last, bytes: s.bytes, liveBytes: s.liveBytes < 0 ? s.bytes : s.liveBytes })), this.policy);
    if (run === null) {
      this.phase = { kind: 'idle' };
      return false;
    }
    const inputs = sealed.slice(run.from, run.to + 1);
    const tmp = joinPath(this.store.dir, tempName(sealedName(run.first, run.last)));
    if (this.o.disk.exists(tmp)) this.o.disk.remove(tmp);
    this.phase = { kind: 'rewrite', run, inputs, keepTombstones: run.from > 0, next: 0, tmp, outBytes: 0, outRecords: 0, lastSeq: -1 };
    return true;
  }

  private rewrite(p: Extract<Phase, { kind: 'rewrite' }>): boolean {
    const disk = this.o.disk;
    if (p.next < p.inputs.length) {
      const seg = p.inputs[p.next++] as SegmentState;
      const batch = new RecordBatch();
      this.scan(seg, (r) => {
        const keep = TOMBSTONES.has(r.type) ? p.keepTombstones : this.o.isLive(r);
        if (!keep) return;
        batch.add(r);
        p.lastSeq = r.seq;
      });
      p.outRecords += batch.count;
      const bytes = batch.take();
      p.outBytes += bytes.length;
      disk.append(p.tmp, bytes);
      return true;
    }
    disk.append(p.tmp, new Uint8Array(0));
    disk.syncNow(p.tmp);
    disk.close(p.tmp);
    const name = sealedName(p.run.first, p.run.last);
    const outputPath = joinPath(this.store.dir, name);
    disk.rename(p.tmp, outputPath);
    disk.syncDir(this.store.dir);
    const output: SegmentState | null = p.outRecords === 0 ? null : { name, first: p.run.first, last: p.run.last, bytes: p.outBytes, records: p.outRecords, liveRecords: p.outRecords, liveBytes: p.outBytes, sealed: true };
    this.phase = { kind: 'delete', run: p.run, inputs: p.inputs, output, outputPath };
    return true;
  }

  private finishRun(p: Extract<Phase, { kind: 'delete' }>): boolean {
    if (this.o.paused()) return true; // a backup links the inputs: try again later
    const disk = this.o.disk;
    const inputBytes = p.inputs.reduce((n, s) => n + s.bytes, 0);
    for (const s of p.inputs) {
      const path = joinPath(this.store.dir, s.name);
      // The output took the run's range: an input with the same name is the output itself.
      if (path !== p.outputPath) disk.remove(path);
    }
    disk.syncDir(this.store.dir);
    if (p.output === null) {
      disk.remove(p.outputPath);
      disk.syncDir(this.store.dir);
    }
    const sealed = this.sealed();
    const from = sealed.indexOf(p.inputs[0] as SegmentState);
    const to = sealed.indexOf(p.inputs[p.inputs.length - 1] as SegmentState);
    const all = this.store.figures();
    this.store.replaceRun(all.indexOf(sealed[from] as SegmentState), all.indexOf(sealed[to] as SegmentState), p.output);
    const reclaimed = inputBytes - (p.output?.bytes ?? 0);
    this.counters.runsCompacted++;
    this.counters.segmentsRewritten += p.inputs.length;
    this.counters.bytesReclaimed += reclaimed;
    this.o.log.fine(`compacted ${p.inputs.length} segment(s) [${p.run.first}, ${p.run.last}]: ${inputBytes} → ${p.output?.bytes ?? 0} bytes`);
    this.phase = { kind: 'survey', index: Number.MAX_SAFE_INTEGER };
    return true;
  }

  private scan(seg: SegmentState, onRecord: (r: LogRecord, length: number) => void): void {
    const disk = this.o.disk;
    const path = joinPath(this.store.dir, seg.name);
    const size = disk.size(path);
    let previous: { r: LogRecord; offset: number } | null = null;
    const out = scanSegment({ size, readAt: (off, n) => disk.readAt(path, off, n) }, path, false, (r, offset) => {
      if (previous !== null) onRecord(previous.r, offset - previous.offset);
      previous = { r, offset };
    });
    const last = previous as { r: LogRecord; offset: number } | null;
    if (last !== null) onRecord(last.r, out.validBytes - last.offset);
  }
}
