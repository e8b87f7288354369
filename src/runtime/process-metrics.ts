// Figures of the Node.js process for the metrics call: event-loop delay, heap and resident memory,
// and garbage collections by kind. Lives in runtime/ because it reads clocks and registers
// observers. Event-loop delay is reported over the last completed window (WINDOW_MS) so that a
// stall shows for a while and then goes away, instead of being averaged into the member's whole
// life; before the first window completes, the figures so far are reported.
import { constants, monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram, type PerformanceEntry } from 'node:perf_hooks';
import type { GcFigures } from '../member/metrics-snapshot.js';

const WINDOW_MS = 10_000;
/**
 * Sampling resolution of the event-loop delay monitor. Each sample is a timer wake-up: at 10 ms an
 * idle member woke 100 times a second, and three idle members on a 2-core machine took about 7% off
 * the requests/s of a neighbouring node:http server. At 100 ms the cost is not measurable; a stall
 * of 100 ms or more is always seen, a shorter one only when it covers a sample's due time.
 */
const RESOLUTION_MS = 100;

const GC_KINDS: readonly [number, string][] = [
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
];

interface DelayWindow {
  readonly p50Seconds: number;
  readonly p99Seconds: number;
  readonly maxSeconds: number;
}

export class ProcessMetrics {
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private lastWindow: DelayWindow | null = null;
  private timer: NodeJS.Timeout | null = null;
  private observer: PerformanceObserver | null = null;
  /** Per GC_KINDS entry: collections and pause milliseconds. */
  private readonly gcCounts = new Float64Array(GC_KINDS.length);
  private readonly gcPauseMs = new Float64Array(GC_KINDS.length);

  start(): void {
    this.delay.enable();
    this.timer = setInterval(() => {
      this.lastWindow = windowOf(this.delay);
      this.delay.reset();
    }, WINDOW_MS);
    this.timer.unref();
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.onGc(entry);
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.delay.disable();
    this.observer?.disconnect();
    this.observer = null;
  }

  private onGc(entry: PerformanceEntry): void {
    // Node 16+ puts the kind in `detail` (the older `entry.kind` is deprecated); the types lag behind.
    const kind = ((entry as PerformanceEntry & { detail?: { kind?: number } | null }).detail ?? null)?.kind;
    const i = GC_KINDS.findIndex(([k]) => k === kind);
    if (i < 0) return;
    this.gcCounts[i]! += 1;
    this.gcPauseMs[i]! += entry.duration;
  }

  /** Scalar figures by JSON key. */
  flat(): Record<string, number> {
    const memory = process.memoryUsage();
    const delay = this.lastWindow ?? windowOf(this.delay);
    return {
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      residentMemoryBytes: memory.rss,
      externalMemoryBytes: memory.external,
      eventLoopDelayP50Seconds: delay.p50Seconds,
      eventLoopDelayP99Seconds: delay.p99Seconds,
      eventLoopDelayMaxSeconds: delay.maxSeconds,
    };
  }

  gc(): GcFigures[] {
    return GC_KINDS.map(([, kind], i) => ({ kind, count: this.gcCounts[i] as number, pauseSeconds: (this.gcPauseMs[i] as number) / 1000 }));
  }
}

function windowOf(h: IntervalHistogram): DelayWindow {
  // An empty histogram reports NaN/huge values for min/percentiles: report 0 until it has a sample.
  if (h.count === 0) return { p50Seconds: 0, p99Seconds: 0, maxSeconds: 0 };
  return { p50Seconds: delaySeconds(h.percentile(50)), p99Seconds: delaySeconds(h.percentile(99)), maxSeconds: delaySeconds(h.max) };
}

/** The monitor records how long its RESOLUTION_MS timer took; the delay is what exceeds that. */
function delaySeconds(recordedNs: number): number {
  // Subtract in nanoseconds (integers) so the figure carries no float noise.
  return Math.max(0, recordedNs - RESOLUTION_MS * 1e6) / 1e9;
}
