// The real clock: wall time for timestamps users see, a monotonic clock for timeouts.
import type { Clock } from '../util/clock.js';

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};
