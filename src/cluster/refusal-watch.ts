// The second failure detector's bookkeeping in membership (cluster.md "Failure detection"): when
// the connection to a member closes it is dialled again every monitor interval, and that many
// refused dials (ECONNREFUSED: nothing listens there, its process is gone) suspect it, sooner than
// the heartbeat timeout. A paused process or a dropped network makes dials hang, never refused.
// The counting rules are connection-monitor.ts's; this keeps the watch going (its timer, the
// re-dials) and reports to membership, which decides what a suspicion means.
import { ConnectionMonitor } from './connection-monitor.js';
import type { MemberWire } from './messages.js';
import { addressOf } from './membership-types.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

export interface RefusalWatchOptions {
  readonly intervalMs: number;
  readonly maxFaults: number;
  readonly faultSpacingShare?: number;
  /** After the heartbeat timeout the other detector has decided anyway. */
  readonly watchMs: number;
}

/** What the watch reads of membership, and what it reports. */
export interface RefusalWatchHost {
  readonly selfUuid: string;
  joined(): boolean;
  stopped(): boolean;
  members(): readonly MemberWire[];
  member(uuid: string): MemberWire | undefined;
  isMember(uuid: string): boolean;
  isSuspect(uuid: string): boolean;
  /** Dials the address again: any message to it makes one. */
  redial(address: string): void;
  /** Reconnects to `x` were refused maxFaults times. */
  suspect(x: MemberWire, why: string): void;
}

export class RefusalWatch {
  private readonly monitor: ConnectionMonitor;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly o: RefusalWatchOptions,
    private readonly h: RefusalWatchHost,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {
    this.monitor = new ConnectionMonitor({
      intervalMs: o.intervalMs,
      maxFaults: o.maxFaults,
      ...(o.faultSpacingShare === undefined ? {} : { faultSpacingShare: o.faultSpacingShare }),
      watchMs: o.watchMs,
    });
  }

  /** A dial to `address` was refused: a fault against the incarnation listed there (by uuid). */
  refused(address: string, now: number): void {
    // By uuid: only the incarnation this member lists at that address. A new one that listens
    // there accepts dials, so it is never refused.
    for (const x of this.h.members()) {
      if (x.uuid === this.h.selfUuid || addressOf(x) !== address || this.h.isSuspect(x.uuid)) continue;
      const r = this.monitor.refused(x.uuid, address, now);
      if (r.kind === 'counted') this.log.fine(`reconnect to member ${address} (${x.uuid}) refused (${r.faults} of ${this.o.maxFaults})`);
      else if (r.kind === 'suspect') this.h.suspect(x, `${r.faults} reconnect(s) refused in ${Math.round(r.spanMs)} ms (connection refused: its process is gone)`);
      this.schedule();
    }
  }

  /** Starts watching a member: dials it now and every interval until it is heard or suspected. */
  watch(x: MemberWire): void {
    this.monitor.watch(x.uuid, addressOf(x), this.clock.monotonicMs());
    this.h.redial(addressOf(x));
    this.schedule();
  }

  forget(uuid: string): void {
    this.monitor.forget(uuid);
  }

  retain(keep: (uuid: string) => boolean): void {
    this.monitor.retain(keep);
  }

  clear(): void {
    this.monitor.clear();
  }

  stop(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.monitor.clear();
  }

  private schedule(): void {
    if (this.timer !== null || this.h.stopped() || this.monitor.size === 0) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      if (this.h.stopped()) return;
      this.monitor.retain((u) => this.h.isMember(u) && !this.h.isSuspect(u));
      for (const d of this.monitor.due(this.clock.monotonicMs())) this.h.redial(d.address);
      this.schedule();
    }, this.monitor.intervalMs);
  }
}
