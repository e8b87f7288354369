// Each member's recent figures for the console's charts (spec/console.md "Charts";
// `GET /grid/rest/metrics/history?series=`): a sample every `stepMs` of the member's metrics,
// counters turned into rates over the step, kept for 15 minutes in fixed-size rings (so a reload,
// or another member's page, shows the same past). No I/O: the runtime calls `sample` on its timer.

export const HISTORY_SERIES = [
  'mapGetsPerSecond',
  'mapPutsPerSecond',
  'queueOffersPerSecond',
  'queuePollsPerSecond',
  'clientCallsPerSecond',
  'cpCallsPerSecond',
  'requestLatencyP99Ms',
  'entries',
  'rssBytes',
  'heapUsedBytes',
  'eventLoopDelayP99Ms',
] as const;
export type SeriesName = (typeof HISTORY_SERIES)[number];

/** The sampling step and how long the rings reach back. */
export const HISTORY_STEP_MS = 2000;
export const HISTORY_WINDOW_MS = 15 * 60 * 1000;

/** What a sample reads of the metrics snapshot (member/metrics-snapshot.ts has these fields). */
export interface SampledFigures {
  readonly flat: Readonly<Record<string, number>>;
  readonly runtime: {
    readonly latencyBoundsSeconds: readonly number[];
    readonly requestKinds: readonly { readonly kind: string; readonly count: number; readonly cumulativeBuckets: readonly number[] }[];
  };
}

/** Counters read at each sample, by series (REST request kinds, client and CP calls). */
interface Counters {
  mapGets: number;
  mapPuts: number;
  queueOffers: number;
  queuePolls: number;
  clientCalls: number;
  cpCalls: number;
  /** Cumulative REST latency buckets, every kind together (the last is +Inf). */
  buckets: number[];
}

function countersOf(f: SampledFigures): Counters {
  const kind = (k: string): number => f.runtime.requestKinds.find((r) => r.kind === k)?.count ?? 0;
  const buckets = new Array<number>(f.runtime.latencyBoundsSeconds.length + 1).fill(0);
  for (const r of f.runtime.requestKinds) for (let i = 0; i < buckets.length; i++) buckets[i] = (buckets[i] as number) + (r.cumulativeBuckets[i] ?? 0);
  return { mapGets: kind('map_get'), mapPuts: kind('map_put'), queueOffers: kind('queue_offer'), queuePolls: kind('queue_poll'), clientCalls: f.flat.clientCalls ?? 0, cpCalls: f.flat.cpCalls ?? 0, buckets };
}

/** The 99th percentile of the requests between two cumulative bucket readings: the bound it falls under (ms), 0 without requests. */
export function p99FromBuckets(boundsSeconds: readonly number[], before: readonly number[], after: readonly number[]): number {
  const total = (after.at(-1) ?? 0) - (before.at(-1) ?? 0);
  if (total <= 0) return 0;
  const want = Math.ceil(total * 0.99);
  for (let i = 0; i < boundsSeconds.length; i++) {
    if ((after[i] ?? 0) - (before[i] ?? 0) >= want) return (boundsSeconds[i] as number) * 1000;
  }
  // Above the largest bound: report that bound (the histogram knows no more).
  return (boundsSeconds.at(-1) ?? 0) * 1000;
}

export class MetricsHistory {
  readonly capacity: number;
  private readonly times: Float64Array;
  private readonly values: Map<SeriesName, Float64Array>;
  private next = 0;
  private count = 0;
  private previous: { timeMs: number; counters: Counters } | null = null;

  constructor(
    readonly stepMs = HISTORY_STEP_MS,
    windowMs = HISTORY_WINDOW_MS,
  ) {
    this.capacity = Math.max(1, Math.ceil(windowMs / stepMs));
    this.times = new Float64Array(this.capacity);
    this.values = new Map(HISTORY_SERIES.map((s) => [s, new Float64Array(this.capacity)]));
  }

  /** Memory the rings hold (their typed arrays). */
  get bytes(): number {
    return this.times.byteLength * (1 + this.values.size);
  }

  /** Takes one sample at `timeMs` (wall clock); rates are over the time since the previous one (none for the first). */
  sample(timeMs: number, f: SampledFigures): void {
    const now = countersOf(f);
    const prev = this.previous;
    this.previous = { timeMs, counters: now };
    if (prev === null || timeMs <= prev.timeMs) return;
    const seconds = (timeMs - prev.timeMs) / 1000;
    const rate = (a: number, b: number): number => Math.max(0, Math.round(((a - b) / seconds) * 10) / 10);
    const row: Record<SeriesName, number> = {
      mapGetsPerSecond: rate(now.mapGets, prev.counters.mapGets),
      mapPutsPerSecond: rate(now.mapPuts, prev.counters.mapPuts),
      queueOffersPerSecond: rate(now.queueOffers, prev.counters.queueOffers),
      queuePollsPerSecond: rate(now.queuePolls, prev.counters.queuePolls),
      clientCallsPerSecond: rate(now.clientCalls, prev.counters.clientCalls),
      cpCallsPerSecond: rate(now.cpCalls, prev.counters.cpCalls),
      requestLatencyP99Ms: p99FromBuckets(f.runtime.latencyBoundsSeconds, prev.counters.buckets, now.buckets),
      entries: f.flat.mapEntries ?? 0,
      rssBytes: f.flat.residentMemoryBytes ?? 0,
      heapUsedBytes: f.flat.heapUsedBytes ?? 0,
      eventLoopDelayP99Ms: Math.round((f.flat.eventLoopDelayP99Seconds ?? 0) * 1e6) / 1e3,
    };
    this.times[this.next] = timeMs;
    for (const s of HISTORY_SERIES) (this.values.get(s) as Float64Array)[this.next] = row[s];
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  /** One series, oldest first: `[timeMs, value]` pairs. */
  series(name: SeriesName, afterMs = -Infinity): [number, number][] {
    const v = this.values.get(name) as Float64Array;
    const out: [number, number][] = [];
    const start = (this.next - this.count + this.capacity) % this.capacity;
    for (let i = 0; i < this.count; i++) {
      const at = (start + i) % this.capacity;
      const t = this.times[at] as number;
      if (t > afterMs) out.push([t, v[at] as number]);
    }
    return out;
  }
}

/** `?series=<name>`: one of HISTORY_SERIES, else null (the handler answers 400 listing them). */
export function isSeries(name: string): name is SeriesName {
  return (HISTORY_SERIES as readonly string[]).includes(name);
}
