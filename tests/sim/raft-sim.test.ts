// The seeded Raft group simulation (tests/sim/raft-sim.ts) over a range of seeds: groups of 3, 5
// and 7 under crashes, pauses, partitions, loss, reordering, leader churn and membership changes,
// with Raft's invariants checked at every ready batch and every acknowledged write and read checked.
// The long runs are `npx tsx scripts/raft-sim.ts --seeds A-B --jobs 2`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { runRaftSim } from './raft-sim.js';

const SEEDS = 300;

test(`Raft simulation: seeds 1-${SEEDS} keep every invariant and every acknowledged write`, () => {
  const failures: string[] = [];
  let acknowledged = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    try {
      acknowledged += runRaftSim({ seed }).acknowledged;
    } catch (e) {
      failures.push(`${(e as Error).message} (replay: npx tsx scripts/raft-sim.ts --seed ${seed})`);
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(acknowledged > SEEDS * 100, `writes were acknowledged (${acknowledged})`);
});
