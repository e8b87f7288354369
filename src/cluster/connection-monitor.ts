// Refusal-based failure detection (cluster.md "Failure detection", the second detector beside
// heartbeats). A process that crashes (kill -9, OOM) is not silent: its kernel closes its sockets at
// once and refuses every later connection to its port (ECONNREFUSED). So when the connection to a
// member closes, the member is dialled again at once and every `intervalMs` after; each refused
// dial is a fault, and `maxFaults` faults suspect the member.
//
// Invariants:
// - Faults are counted per member UUID, never per address: a new incarnation at the same address
//   accepts dials, so it adds no fault, and nothing here ever names it.
// - Two faults count only when at least three quarters of `intervalMs` apart, so a flood of refusals
//   (many sends, or a program on a reused port that refuses in a loop) suspects no sooner than
//   maxFaults spaced dials: (maxFaults - 1) * 0.75 * intervalMs after the first. Not the whole
//   interval: the re-dials come from a timer of intervalMs, and a timer may fire a little early
//   against the monotonic clock (libuv keeps loop time in whole milliseconds), so a refusal one
//   interval after the last could measure 99.6 ms and wait for the next tick.
// - Only refusals count. A dial that times out or hangs (a paused process, a dropped network) adds
//   nothing; the heartbeat timeout stays in charge of those.
// - A watch ends when the member is heard again, leaves the list, is suspected, or after
//   `watchMs` with no refusal (bounded memory and dialling; heartbeats take over).
// Pure: time is passed in, dials are returned for the caller to make.

export interface ConnectionMonitorOptions {
  /** grid.connection.monitor.interval: ms between re-dials and between two counted faults. */
  readonly intervalMs: number;
  /** grid.connection.monitor.max.faults: refused reconnects that suspect a member. */
  readonly maxFaults: number;
  /** A watch with no refusal for this long ends (the heartbeat timeout is a natural choice). */
  readonly watchMs: number;
  /** Two counted faults are at least this share of the interval apart (default FAULT_SPACING_SHARE). */
  readonly faultSpacingShare?: number;
}

interface Watch {
  readonly address: string;
  faults: number;
  /** When the last counted fault happened (monotonic ms), or -Infinity. */
  lastFaultMs: number;
  /** When the first fault of this watch was counted (for the log line). */
  firstFaultMs: number;
  /** When the watch started or last counted a fault: it ends watchMs after this. */
  activeMs: number;
}

/** Two counted faults are at least this share of the interval apart (see the invariants above). */
export const FAULT_SPACING_SHARE = 0.75;

/** The outcome of one refused dial for a watched member. */
export type RefusalOutcome =
  | { readonly kind: 'ignored' } // too soon after the previous fault (a flood)
  | { readonly kind: 'counted'; readonly faults: number }
  | { readonly kind: 'suspect'; readonly faults: number; readonly spanMs: number };

export class ConnectionMonitor {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly o: ConnectionMonitorOptions) {
    if (!Number.isInteger(o.maxFaults) || o.maxFaults < 1) throw new RangeError(`maxFaults must be an integer >= 1: ${o.maxFaults}`);
    if (!(o.intervalMs >= 1)) throw new RangeError(`intervalMs must be >= 1: ${o.intervalMs}`);
  }

  get size(): number {
    return this.watches.size;
  }

  get intervalMs(): number {
    return this.o.intervalMs;
  }

  isWatched(uuid: string): boolean {
    return this.watches.has(uuid);
  }

  /** The connection to `uuid` at `address` closed (or someone reported it): dial it from now on. */
  watch(uuid: string, address: string, nowMs: number): void {
    const w = this.watches.get(uuid);
    if (w !== undefined && w.address === address) {
      w.activeMs = nowMs;
      return;
    }
    this.watches.set(uuid, { address, faults: 0, lastFaultMs: Number.NEGATIVE_INFINITY, firstFaultMs: 0, activeMs: nowMs });
  }

  /** A dial to the address of `uuid` was refused. Starts a watch if none runs (the close went unseen). */
  refused(uuid: string, address: string, nowMs: number): RefusalOutcome {
    this.watch(uuid, address, nowMs);
    const w = this.watches.get(uuid) as Watch;
    if (nowMs - w.lastFaultMs < this.o.intervalMs * (this.o.faultSpacingShare ?? FAULT_SPACING_SHARE)) return { kind: 'ignored' };
    if (w.faults === 0) w.firstFaultMs = nowMs;
    w.faults++;
    w.lastFaultMs = nowMs;
    w.activeMs = nowMs;
    if (w.faults < this.o.maxFaults) return { kind: 'counted', faults: w.faults };
    this.watches.delete(uuid);
    return { kind: 'suspect', faults: w.faults, spanMs: nowMs - w.firstFaultMs };
  }

  /** The member answered (a message arrived from it): whatever refused before, it is there. */
  forget(uuid: string): void {
    this.watches.delete(uuid);
  }

  /** Members to dial now; watches idle for watchMs end here. */
  due(nowMs: number): { readonly uuid: string; readonly address: string }[] {
    const out: { uuid: string; address: string }[] = [];
    for (const [uuid, w] of this.watches) {
      if (nowMs - w.activeMs > this.o.watchMs) this.watches.delete(uuid);
      else out.push({ uuid, address: w.address });
    }
    return out;
  }

  /** Keeps only the watches of `uuids` (the member list changed). */
  retain(isMember: (uuid: string) => boolean): void {
    for (const uuid of [...this.watches.keys()]) if (!isMember(uuid)) this.watches.delete(uuid);
  }

  clear(): void {
    this.watches.clear();
  }
}
