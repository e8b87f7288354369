// Background compaction of the log: sealed segments whose records are mostly superseded are
// rewritten into one segment holding only what is still needed, a segment per call of `step`, so
// writes never wait for it.
//
// What a rewrite keeps (everything else is garbage):
// - a map put or queue add that the store still holds as written (`isLive`: same entry version and
//   value; same queue item id and value). A live record always passes; a dead one that happens to
//   pass too is kept, which costs bytes but never changes what a replay builds;
// - a remove, clear or partition drop while an older segment than the run remains: that segment may
//   hold a put the tombstone must keep cancelling. A run that starts at the oldest segment drops them.
// Kept records are copied byte for byte (their sequence numbers and checksums stay).
//
// A pass walks the sealed segments from the oldest, reading each once: a segment with less than
// `liveShareMax` of its bytes kept joins the run being written (up to `outputBytesMax` of output);
// a mostly live one ends the run and is passed over (and not read again until twice its size, at
// least one output's worth, has been written since). The run's output goes to a temporary file, is synced, and
// gets the sealed name of the run's whole range; only then are the inputs deleted (a crash between
// the two leaves inputs that the listing at start-up recognises as superseded). An output with
// nothing in it is deleted after its inputs. Deletions wait while `paused()` (a backup is linking
// or copying segments).
import type { ComponentLogger } from '../util/logger.js';
import { joinPath, type Disk } from './disk.js';
import { COMPACTION_POLICY_DEFAULT, fitsRun, worthRewriting, type CompactionPolicy } from './compaction-plan.js';
import type { LogRecord } from './log-record.js';
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
  passes: number;
  runsCompacted: number;
  segmentsRead: number;
  segmentsRewritten: number;
  bytesReclaimed: number;
}

interface Run {
  readonly inputs: SegmentState[];
  readonly keepTombstones: boolean;
  readonly tmp: string;
  outBytes: number;
  outRecords: number;
}

type Phase =
  | { readonly kind: 'idle' }
  | { readonly kind: 'pass'; index: number; run: Run | null }
  | { readonly kind: 'delete'; readonly run: Run; readonly output: SegmentState | null; readonly outputPath: string };

const TOMBSTONES: ReadonlySet<LogRecord['type']> = new Set(['mapRemove', 'mapClear', 'queueRemove', 'queueClear', 'partitionDrop']);

export class Compactor {
  readonly counters: CompactorCounters = { passes: 0, runsCompacted: 0, segmentsRead: 0, segmentsRewritten: 0, bytesReclaimed: 0 };
  private phase: Phase = { kind: 'idle' };
  private readonly policy: CompactionPolicy;
  /** Mostly live segments (and fresh outputs): the bytes the log had taken when they were read. */
  private readonly readAt = new WeakMap<SegmentState, number>();

  constructor(
    private readonly store: LogStore,
    private readonly o: CompactorOptions,
  ) {
    this.policy = o.policy ?? COMPACTION_POLICY_DEFAULT;
  }

  get running(): boolean {
    return this.phase.kind !== 'idle';
  }

  /** Starts a pass (no-op while one runs). */
  start(): void {
    if (this.phase.kind !== 'idle') return;
    this.counters.passes++;
    this.phase = { kind: 'pass', index: 0, run: null };
  }

  /** Does one slice of work (about one segment); returns whether more remains. */
  step(): boolean {
    const p = this.phase;
    if (p.kind === 'idle') return false;
    if (p.kind === 'delete') return this.finishRun(p);
    return this.passStep(p);
  }

  private sealed(): SegmentState[] {
    return this.store.figures().filter((s) => s.sealed) as SegmentState[];
  }

  private passStep(p: { index: number; run: Run | null }): boolean {
    const sealed = this.sealed();
    if (p.index >= sealed.length) {
      if (p.run !== null) return this.closeRun(p.run);
      this.phase = { kind: 'idle' };
      return false;
    }
    const seg = sealed[p.index] as SegmentState;
    const seenAt = this.readAt.get(seg);
    if (seenAt !== undefined && this.store.bytesAppended - seenAt < Math.max(2 * seg.bytes, this.policy.outputBytesMax)) {
      // Mostly live when last read, and too little written since to kill half of it.
      if (p.run !== null) return this.closeRun(p.run);
      p.index++;
      return true;
    }
    const keepTombstones = p.run !== null ? p.run.keepTombstones : p.index > 0;
    const kept: Uint8Array[] = [];
    let keptBytes = 0;
    this.scan(seg, (r, raw) => {
      if (TOMBSTONES.has(r.type) ? keepTombstones : this.o.isLive(r)) {
        // A copy: the scan's window is reused for the next records.
        const bytes = Uint8Array.prototype.slice.call(raw());
        kept.push(bytes);
        keptBytes += bytes.length;
      }
    });
    this.counters.segmentsRead++;
    if (!worthRewriting(seg.bytes, keptBytes, this.policy)) {
      seg.liveBytes = keptBytes;
      this.readAt.set(seg, this.store.bytesAppended);
      if (p.run !== null) return this.closeRun(p.run);
      p.index++;
      return true;
    }
    if (p.run !== null && !fitsRun(p.run.outBytes, keptBytes, this.policy)) return this.closeRun(p.run);
    let run = p.run;
    if (run === null) {
      const tmp = joinPath(this.store.dir, tempName(`compaction-${seg.first}`));
      if (this.o.disk.exists(tmp)) this.o.disk.remove(tmp);
      run = p.run = { inputs: [], keepTombstones, tmp, outBytes: 0, outRecords: 0 };
    }
    run.inputs.push(seg);
    run.outRecords += kept.length;
    run.outBytes += keptBytes;
    this.o.disk.append(run.tmp, concat(kept, keptBytes));
    p.index++;
    return true;
  }

  /** Syncs the run's output and gives it the sealed name of the run's range; deletion comes next. */
  private closeRun(run: Run): boolean {
    const disk = this.o.disk;
    const first = (run.inputs[0] as SegmentState).first;
    const last = (run.inputs[run.inputs.length - 1] as SegmentState).last;
    disk.append(run.tmp, new Uint8Array(0));
    disk.syncNow(run.tmp);
    disk.close(run.tmp);
    const name = sealedName(first, last);
    const outputPath = joinPath(this.store.dir, name);
    disk.rename(run.tmp, outputPath);
    disk.syncDir(this.store.dir);
    const output: SegmentState | null = run.outRecords === 0 ? null : { name, first, last, bytes: run.outBytes, records: run.outRecords, liveBytes: run.outBytes, sealed: true };
    this.phase = { kind: 'delete', run, output, outputPath };
    return true;
  }

  private finishRun(p: Extract<Phase, { kind: 'delete' }>): boolean {
    if (this.o.paused()) return true; // a backup links the inputs: try again later
    const disk = this.o.disk;
    const inputs = p.run.inputs;
    const inputBytes = inputs.reduce((n, s) => n + s.bytes, 0);
    for (const s of inputs) {
      const path = joinPath(this.store.dir, s.name);
      // The output took the run's range: an input with the same name is the output itself.
      if (path !== p.outputPath) disk.remove(path);
    }
    disk.syncDir(this.store.dir);
    if (p.output === null) {
      disk.remove(p.outputPath);
      disk.syncDir(this.store.dir);
    }
    const all = this.store.figures();
    const from = all.indexOf(inputs[0] as SegmentState);
    this.store.replaceRun(from, all.indexOf(inputs[inputs.length - 1] as SegmentState), p.output);
    if (p.output !== null) this.readAt.set(p.output, this.store.bytesAppended);
    const reclaimed = inputBytes - (p.output?.bytes ?? 0);
    this.counters.runsCompacted++;
    this.counters.segmentsRewritten += inputs.length;
    this.counters.bytesReclaimed += reclaimed;
    this.o.log.fine(`compacted ${inputs.length} segment(s) [${(inputs[0] as SegmentState).first}, ${(inputs[inputs.length - 1] as SegmentState).last}]: ${inputBytes} → ${p.output?.bytes ?? 0} bytes`);
    // Go on after the output (or where the run was, when nothing was kept).
    const sealed = this.sealed();
    const at = p.output === null ? sealed.findIndex((s) => s.first > (inputs[inputs.length - 1] as SegmentState).last) : sealed.indexOf(p.output) + 1;
    this.phase = { kind: 'pass', index: at < 0 ? sealed.length : at, run: null };
    return true;
  }

  private scan(seg: SegmentState, onRecord: (r: LogRecord, raw: () => Uint8Array) => void): void {
    const disk = this.o.disk;
    const path = joinPath(this.store.dir, seg.name);
    const size = disk.size(path);
    scanSegment({ size, readAt: (off, n) => disk.readAt(path, off, n) }, path, false, (r, _offset, _length, raw) => onRecord(r, raw), true);
  }
}

function concat(parts: readonly Uint8Array[], bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
