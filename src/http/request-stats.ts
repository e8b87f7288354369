// Request counts and latency histograms per endpoint kind, kept in fixed typed arrays so that
// recording a request allocates nothing and costs a few array writes (the map GET hot path runs
// through here). This module reads no clock: the HTTP server measures the time and hands in the
// elapsed seconds.
//
// Invariants: counts are per (kind, status class); bucket counts are NOT cumulative here (one slot
// per bucket plus one for "above the last bound"); for each kind the bucket counts add up to the
// counts of its status classes, since both are written by the same record() call.
import type { RequestKindFigures } from '../member/metrics-snapshot.js';

/** The kinds a request is counted under; the order is the index used in the arrays. */
export const REQUEST_KINDS = ['map_get', 'map_put', 'map_delete', 'queue_offer', 'queue_poll', 'queue_size', 'health', 'management', 'cluster_info', 'other'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export const KIND = {
  MAP_GET: 0,
  MAP_PUT: 1,
  MAP_DELETE: 2,
  QUEUE_OFFER: 3,
  QUEUE_POLL: 4,
  QUEUE_SIZE: 5,
  HEALTH: 6,
  MANAGEMENT: 7,
  CLUSTER_INFO: 8,
  OTHER: 9,
  /** Routes only: a queue GET is a size call or a poll, decided by its argument (resolveKind). */
  QUEUE_GET: -1,
} as const;

/** Status classes of a final answer; the order is the index used in the arrays. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Upper bounds of the latency buckets, in seconds. They span a map GET on loopback (~100 µs) to
 * the longest queue poll (300 s by default), so a waiting poll lands in a bucket, not only in +Inf.
 */
export const LATENCY_BOUNDS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

const KINDS = REQUEST_KINDS.length;
const CLASSES = STATUS_CLASSES.length;
const SLOTS = LATENCY_BOUNDS_SECONDS.length + 1;

export class RequestStats {
  // Float64 counters stay exact up to 2^53: centuries at a million requests a second.
  private readonly counts = new Float64Array(KINDS * CLASSES);
  private readonly buckets = new Float64Array(KINDS * SLOTS);
  private readonly sums = new Float64Array(KINDS);

  /** One answered request: its kind (KIND), its HTTP status and how long it took. */
  record(kind: number, status: number, elapsedSeconds: number): void {
    const cls = status < 300 ? 0 : status < 400 ? 1 : status < 500 ? 2 : 3;
    this.counts[kind * CLASSES + cls]! += 1;
    const bounds = LATENCY_BOUNDS_SECONDS;
    let slot = 0;
    while (slot < bounds.length && elapsedSeconds > (bounds[slot] as number)) slot++;
    this.buckets[kind * SLOTS + slot]! += 1;
    // A clock step backwards would make a negative duration; the histogram's sum must not shrink.
    if (elapsedSeconds > 0) this.sums[kind]! += elapsedSeconds;
  }

  /** A copy, with cumulative buckets as the exposition wants them. */
  figures(): RequestKindFigures[] {
    const out: RequestKindFigures[] = [];
    for (let k = 0; k < KINDS; k++) {
      const byStatusClass: number[] = [];
      for (let c = 0; c < CLASSES; c++) byStatusClass.push(this.counts[k * CLASSES + c] as number);
      const cumulativeBuckets: number[] = [];
      let running = 0;
      for (let s = 0; s < SLOTS; s++) {
        running += this.buckets[k * SLOTS + s] as number;
        cumulativeBuckets.push(running);
      }
      out.push({ kind: REQUEST_KINDS[k] as string, byStatusClass, cumulativeBuckets, count: running, sumSeconds: this.sums[k] as number });
    }
    return out;
  }
}

/**
 * The kind of a routed request. `GET /grid/rest/queues/{q}/size` (any case of `size`) is a size call;
 * every other queue GET polls (or is refused as one).
 */
export function resolveKind(routeKind: number, tail: readonly string[]): number {
  if (routeKind !== KIND.QUEUE_GET) return routeKind;
  const arg = tail.length === 1 ? (tail[0] as string) : '';
  return arg.length === 4 && /^size$/i.test(arg) ? KIND.QUEUE_SIZE : KIND.QUEUE_POLL;
}
