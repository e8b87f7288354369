// Which sealed segments to rewrite next. No I/O: the log keeps, per sealed segment, its file bytes
// and the bytes of its records that are still live (a put that no later write replaced, a queue
// item not yet taken, a remove or clear that older segments still need); this picks a run.
//
// A run is a stretch of consecutive sealed segments (in sequence order), so the output, named with
// the run's whole range, keeps the segments' ranges disjoint (segment-files.ts). A run qualifies
// when each of its segments has a live share below `liveShareMax`, it saves at least
// `reclaimBytesMin`, and its live bytes fit one output segment. Among qualifying runs the one that
// frees the most bytes per byte it must copy wins (ties: the oldest), so mostly-dead segments go
// first and a full segment is never copied for little gain.

export interface SegmentFigures {
  readonly name: string;
  readonly first: number;
  readonly last: number;
  readonly bytes: number;
  readonly liveBytes: number;
}

export interface CompactionPolicy {
  /** A segment whose live bytes / file bytes are at or above this is not rewritten (0..1). */
  readonly liveShareMax: number;
  /** The live bytes of a run stay below this (about one segment). */
  readonly outputBytesMax: number;
  /** A run must free at least this many bytes. */
  readonly reclaimBytesMin: number;
}

export const COMPACTION_POLICY_DEFAULT: CompactionPolicy = {
  liveShareMax: 0.5,
  outputBytesMax: 8 * 1024 * 1024,
  reclaimBytesMin: 1024 * 1024,
};

export interface CompactionRun {
  /** Indexes into the segments given, consecutive. */
  readonly from: number;
  readonly to: number;
  readonly first: number;
  readonly last: number;
  readonly liveBytes: number;
  readonly reclaimBytes: number;
}

/** The run to compact next, or null. `segments` are the sealed segments in sequence order. */
export function planCompaction(segments: readonly SegmentFigures[], policy: CompactionPolicy = COMPACTION_POLICY_DEFAULT): CompactionRun | null {
  let best: CompactionRun | null = null;
  let bestScore = -1;
  for (let i = 0; i < segments.length; i++) {
    let live = 0;
    let bytes = 0;
    for (let j = i; j < segments.length; j++) {
      const s = segments[j] as SegmentFigures;
      if (s.bytes > 0 && s.liveBytes / s.bytes >= policy.liveShareMax) break;
      if (live + s.liveBytes > policy.outputBytesMax) break;
      live += s.liveBytes;
      bytes += s.bytes;
      const reclaim = bytes - live;
      if (reclaim < policy.reclaimBytesMin) continue;
      const score = reclaim / (live + 1);
      if (score > bestScore) {
        bestScore = score;
        best = { from: i, to: j, first: (segments[i] as SegmentFigures).first, last: s.last, liveBytes: live, reclaimBytes: reclaim };
      }
    }
  }
  return best;
}
