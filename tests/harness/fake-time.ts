// A hand-driven timer list for unit tests: setTimeout/clearTimeout against a fake clock that only
// moves with advance(), firing due timers in time order (a fractional start, like performance.now()).
import type { TimerHandle, Timers } from '../../src/util/clock.js';

export class FakeTime implements Timers {
  constructor(public nowMs = 12_345.678_9) {}
  private next = 1;
  private readonly pending = new Map<number, { atMs: number; fn: () => void }>();
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = this.next++;
    this.pending.set(id, { atMs: this.nowMs + Math.max(1, delayMs), fn });
    return { id };
  }
  clearTimeout(h: TimerHandle): void {
    this.pending.delete(h.id);
  }
  /** Advances the clock by `ms` (a fraction allowed), firing due timers in time order. */
  advance(ms: number): void {
    const end = this.nowMs + ms;
    for (;;) {
      let first: [number, { atMs: number; fn: () => void }] | null = null;
      for (const e of this.pending) if (e[1].atMs <= end && (first === null || e[1].atMs < first[1].atMs)) first = e;
      if (first === null) break;
      this.pending.delete(first[0]);
      this.nowMs = first[1].atMs;
      first[1].fn();
    }
    this.nowMs = end;
  }
}
