// A small seeded PRNG (mulberry32) for simulations, fuzzing and eviction sampling. Not cryptographic.
import type { Random } from './clock.js';

export class SeededRandom implements Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}
