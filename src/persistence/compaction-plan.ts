// The compaction policy and its decisions, without I/O (compactor.ts applies them while it reads
// the segments). A sealed segment is worth rewriting when less than `liveShareMax` of its bytes
// would be kept; consecutive such segments form one run while the bytes kept fit `outputBytesMax`
// (about one segment), so the output keeps the segments' ranges disjoint and in order. A pass is
// worth starting once half of `minBytes` has been written since the last one and the log is at
// least `minBytes`, so compaction reads the log in proportion to what is written to it.

export interface CompactionPolicy {
  /** A segment whose kept bytes / file bytes are at or above this is not rewritten (0..1). */
  readonly liveShareMax: number;
  /** The bytes kept by one run stay at or below this (about one segment). */
  readonly outputBytesMax: number;
}

export const COMPACTION_POLICY_DEFAULT: CompactionPolicy = {
  liveShareMax: 0.5,
  outputBytesMax: 8 * 1024 * 1024,
};

/** Whether a segment of `bytes` that would keep `keptBytes` is worth rewriting. */
export function worthRewriting(bytes: number, keptBytes: number, policy: CompactionPolicy): boolean {
  return bytes > 0 && keptBytes / bytes < policy.liveShareMax;
}

/** Whether `keptBytes` more still fit the run's output of `runBytes`. */
export function fitsRun(runBytes: number, keptBytes: number, policy: CompactionPolicy): boolean {
  return runBytes === 0 || runBytes + keptBytes <= policy.outputBytesMax;
}

/**
 * Whether a pass should start: the log holds at least `minBytes`, at least `minBytes / 2` were
 * appended since the last pass started, and more records were written than the store holds twice
 * over (so at least half of what was written is dead).
 */
export function shouldStartPass(o: { logBytes: number; bytesSinceLastPass: number; recordsWritten: number; entriesHeld: number; minBytes: number }): boolean {
  return o.logBytes >= o.minBytes && o.bytesSinceLastPass >= o.minBytes / 2 && o.recordsWritten >= 2 * o.entriesHeld;
}
