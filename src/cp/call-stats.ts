// CP calls routed through one member, by structure and outcome, with their latency buckets, for
// the metrics call (spec/cp.md "Metrics"). No I/O: the service hands in each call's duration.
import type { CallPayload } from './call-wire.js';

/** Upper bounds of the CP call latency buckets, in seconds (a latch await counts its wait). */
export const CP_LATENCY_BOUNDS_SECONDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** CP calls of one structure with one outcome, routed through this member. */
export interface CpCallFigures {
  /** long, ref, latch, lock, semaphore, session, metadata, group (membership and status). */
  readonly structure: string;
  /** ok, timeout, indeterminate, no-group, discovery, disabled. */
  readonly outcome: string;
  readonly count: number;
  readonly sumSeconds: number;
  /** Cumulative counts per bound of CP_LATENCY_BOUNDS_SECONDS, then +Inf (= count). */
  readonly cumulativeBuckets: readonly number[];
}

/** A call's structure for the figures: long, ref, latch, lock, semaphore, session, metadata, group. */
export function structureOf(p: CallPayload): string {
  if (p.kind === 'change') return 'group';
  if (p.kind === 'read') {
    const q = p.query.q;
    return q === 'refContains' ? 'ref' : q === 'sessions' ? 'session' : q === 'status' ? 'group' : q === 'metadata' ? 'metadata' : q;
  }
  const k = p.command.kind;
  return k === 'meta' ? 'metadata' : k === 'destroy' ? p.command.structure : k === 'expireWaits' ? 'group' : k;
}

export class CallStats {
  /** Per "structure outcome": count, sum and bucket counts (not cumulative). */
  private readonly stats = new Map<string, { count: number; sum: number; buckets: Float64Array }>();

  record(structure: string, outcome: string, seconds: number): void {
    const key = `${structure} ${outcome}`;
    let s = this.stats.get(key);
    if (s === undefined) {
      s = { count: 0, sum: 0, buckets: new Float64Array(CP_LATENCY_BOUNDS_SECONDS.length + 1) };
      this.stats.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < CP_LATENCY_BOUNDS_SECONDS.length && seconds > (CP_LATENCY_BOUNDS_SECONDS[i] as number)) i++;
    (s.buckets as Float64Array)[i] = ((s.buckets as Float64Array)[i] as number) + 1;
  }

  /** The CP calls routed through this member, by structure and outcome, for the metrics call. */
  figures(): CpCallFigures[] {
    return [...this.stats].map(([key, s]) => {
      const [structure, outcome] = key.split(' ') as [string, string];
      const cumulative: number[] = [];
      let n = 0;
      for (const b of s.buckets) cumulative.push((n += b));
      return { structure, outcome, count: s.count, sumSeconds: s.sum, cumulativeBuckets: cumulative };
    });
  }

}
