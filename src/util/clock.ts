// Time enters the cores only through a Clock, so simulations can run on virtual time.
// `nowMs` is wall time (for record timestamps a user sees); `monotonicMs` never goes backwards and is
// what timeouts and failure detection use.

export interface Clock {
  nowMs(): number;
  monotonicMs(): number;
}

/** A timer service: cores ask for callbacks through it instead of calling setTimeout. */
export interface Timers {
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/** A source of randomness for cores (eviction sampling, ids). Seedable in tests. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  nextInt(bound: number): number;
}
