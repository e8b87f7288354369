// The seeded fault schedule: what to break, for how long, and the quiet gap before it. Pure: one
// SeededRandom in, the same faults out for the same seed, so `--seed S` replays the schedule (the
// times at which faults start still depend on how fast the cluster recovers, which the report prints).
//
// Kinds come in rounds: every round is a seeded shuffle of all six kinds, so a run long enough for
// six faults has injected every kind. Bounds (each fault is undone after its duration):
//   kill              kill -9 of one member, restarted (same address and port) 2–10 s later
//   pause             SIGSTOP of one member, SIGCONT 3–20 s later; with pauseMaster, of the member
//                     that is master when it starts, for 15–25 s, twice a round
//   partition-*       nft drop rules on loopback for 5–30 s:
//     majority        the members split into a majority and a minority, both directions cut
//     isolate         one member cut off from all the others
//     bridge          two sides that cannot reach each other, and one member that reaches both
//     one-way         packets from side A to side B dropped, B to A still delivered
import type { SeededRandom } from '../../src/util/prng.js';

export const FAULT_KINDS = ['kill', 'pause', 'partition-majority', 'partition-isolate', 'partition-bridge', 'partition-one-way'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Packets from every member of `from` to every member of `to` are dropped (member indexes). */
export interface Drop {
  readonly from: readonly number[];
  readonly to: readonly number[];
}

export interface FaultSpec {
  /** 1-based position in the schedule. */
  readonly n: number;
  readonly kind: FaultKind;
  /** Quiet time before the fault starts (after the cluster recovered from the previous one). */
  readonly gapMs: number;
  /** How long the fault lasts: down time for a kill, stop time for a pause, cut time for a partition. */
  readonly durationMs: number;
  /** The member killed or paused (kill, pause). */
  readonly target: number | null;
  /** A pause of whichever member is master when it starts (target is then unused). */
  readonly master: boolean;
  /** The sides of a partition (member indexes), and the bridge member of a bridge. */
  readonly sideA: readonly number[];
  readonly sideB: readonly number[];
  readonly bridge: number | null;
  readonly drops: readonly Drop[];
}

export const FAULT_BOUNDS_MS: Readonly<Record<'kill' | 'pause' | 'partition', readonly [number, number]>> = {
  kill: [2000, 10_000],
  pause: [3000, 20_000],
  partition: [5000, 30_000],
};
/** A master's pause with pauseMaster: past the heartbeat timeout (10 s) by 5-15 s. */
export const MASTER_PAUSE_BOUNDS_MS: readonly [number, number] = [15_000, 25_000];
export const GAP_BOUNDS_MS: readonly [number, number] = [1000, 5000];

function between(rnd: SeededRandom, [lo, hi]: readonly [number, number]): number {
  return lo + rnd.nextInt(hi - lo + 1);
}

function shuffled<T>(rnd: SeededRandom, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rnd.nextInt(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

export class FaultSchedule {
  private round: FaultKind[] = [];
  private count = 0;

  constructor(
    private readonly rnd: SeededRandom,
    private readonly members: number,
    private readonly pauseMaster = false,
  ) {}

  next(): FaultSpec {
    if (this.round.length === 0) this.round = shuffled(this.rnd, this.pauseMaster ? [...FAULT_KINDS, 'pause'] : FAULT_KINDS);
    const kind = this.round.shift() as FaultKind;
    const n = ++this.count;
    const gapMs = between(this.rnd, GAP_BOUNDS_MS);
    const all = Array.from({ length: this.members }, (_, i) => i);
    const base = { n, kind, gapMs, target: null, master: false, sideA: [], sideB: [], bridge: null, drops: [] };
    switch (kind) {
      case 'pause':
        if (this.pauseMaster) return { ...base, durationMs: between(this.rnd, MASTER_PAUSE_BOUNDS_MS), target: this.rnd.nextInt(this.members), master: true };
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS[kind]), target: this.rnd.nextInt(this.members) };
      case 'kill':
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS[kind]), target: this.rnd.nextInt(this.members) };
      case 'partition-majority': {
        const order = shuffled(this.rnd, all);
        // The minority has 2 .. floor((n-1)/2) members (a minority of 1 is "isolate", the only
        // minority 3 and 4 members have).
        const largest = Math.floor((this.members - 1) / 2);
        const minoritySize = largest < 2 ? 1 : 2 + this.rnd.nextInt(largest - 1);
        const a = sorted(order.slice(minoritySize));
        const b = sorted(order.slice(0, minoritySize));
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS.partition), sideA: a, sideB: b, drops: [{ from: a, to: b }, { from: b, to: a }] };
      }
      case 'partition-isolate': {
        const x = this.rnd.nextInt(this.members);
        const rest = all.filter((i) => i !== x);
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS.partition), sideA: rest, sideB: [x], drops: [{ from: rest, to: [x] }, { from: [x], to: rest }] };
      }
      case 'partition-bridge': {
        const order = shuffled(this.rnd, all);
        const bridge = order[0] as number;
        const others = order.slice(1);
        const half = Math.floor(others.length / 2);
        const a = sorted(others.slice(0, half));
        const b = sorted(others.slice(half));
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS.partition), sideA: a, sideB: b, bridge, drops: [{ from: a, to: b }, { from: b, to: a }] };
      }
      case 'partition-one-way': {
        const order = shuffled(this.rnd, all);
        const size = 1 + this.rnd.nextInt(this.members - 1);
        const a = sorted(order.slice(0, size));
        const b = sorted(order.slice(size));
        return { ...base, durationMs: between(this.rnd, FAULT_BOUNDS_MS.partition), sideA: a, sideB: b, drops: [{ from: a, to: b }] };
      }
    }
  }
}

/** One line naming a fault, with member indexes shown as their addresses. */
export function describeFault(f: FaultSpec, address: (i: number) => string): string {
  const set = (xs: readonly number[]): string => `{${xs.map(address).join(',')}}`;
  const s = (f.durationMs / 1000).toFixed(1);
  switch (f.kind) {
    case 'kill':
      return `kill -9 ${address(f.target as number)}, restart after ${s} s`;
    case 'pause':
      return `SIGSTOP ${f.master ? 'master ' : ''}${address(f.target as number)} for ${s} s`;
    case 'partition-majority':
      return `partition majority ${set(f.sideA)} | minority ${set(f.sideB)} for ${s} s`;
    case 'partition-isolate':
      return `partition isolating ${set(f.sideB)} from ${set(f.sideA)} for ${s} s`;
    case 'partition-bridge':
      return `partition ${set(f.sideA)} | ${set(f.sideB)} with bridge ${address(f.bridge as number)} for ${s} s`;
    case 'partition-one-way':
      return `one-way partition: ${set(f.sideA)} -> ${set(f.sideB)} dropped, the other way delivered, for ${s} s`;
  }
}
