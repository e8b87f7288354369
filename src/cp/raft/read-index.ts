// The leader's linearizable reads (read index): a read notes the commit index when asked and
// waits for a round of heartbeats, started after it, that a majority answered; then it is ready
// (the shell answers it once that index is applied). Reads asked before the leader committed an
// entry of its own term wait for that first (the commit index may be behind until then).
import type { ReadState } from './types.js';

export class ReadIndexQueue {
  /** The highest round started; every append carries it and every answer echoes it. */
  lastRound = 0;
  /** A round must start before the next batch goes out (reads joined it). */
  roundPending = false;
  private pending: { ctx: number; index: number; round: number }[] = [];
  private waiting: number[] = [];
  private ready: ReadState[] = [];

  size(): number {
    return this.pending.length + this.waiting.length;
  }

  /** Before the first commit of the leader's term. */
  wait(ctx: number): void {
    this.waiting.push(ctx);
  }

  /** Reads that waited for the term's first commit, to register now. */
  takeWaiting(): number[] {
    const w = this.waiting;
    this.waiting = [];
    return w;
  }

  /** A read at commit index `index`; `alone`: no other voter, so it is ready at once. */
  register(ctx: number, index: number, alone: boolean): void {
    if (alone) {
      this.ready.push({ ctx, index });
      return;
    }
    this.pending.push({ ctx, index, round: this.lastRound + 1 });
    this.roundPending = true;
  }

  /** Starts the round the pending reads joined; returns its number (for the heartbeats). */
  startRound(): number {
    this.roundPending = false;
    return ++this.lastRound;
  }

  /** A majority answered rounds up to `confirmed`: the reads of those rounds are ready. */
  confirm(confirmed: number): void {
    let n = 0;
    while (n < this.pending.length && (this.pending[n] as { round: number }).round <= confirmed) n++;
    for (const r of this.pending.splice(0, n)) this.ready.push({ ctx: r.ctx, index: r.index });
  }

  hasPending(): boolean {
    return this.pending.length > 0;
  }

  hasReady(): boolean {
    return this.ready.length > 0;
  }

  takeReady(): ReadState[] {
    const r = this.ready;
    this.ready = [];
    return r;
  }

  /** The leader stepped down: nothing pending is answered here (the shell fails those calls). */
  clear(): void {
    this.pending = [];
    this.waiting = [];
    this.roundPending = false;
  }
}
