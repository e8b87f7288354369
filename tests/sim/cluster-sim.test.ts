// The seeded whole-cluster simulation in the suite: 200 seeds, each a cluster of 3 to 7 members
// under message loss, delay, reordering, crashes, restarts, network partitions and joins during
// migration (cluster-sim.ts says what is checked). A failing seed is printed with the command that
// replays it with the members' logs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runClusterSim } from './cluster-sim.js';

const FIRST_SEED = 1;
const SEEDS = 200;

test(`cluster simulation: ${SEEDS} seeds keep every invariant`, () => {
  const failures: string[] = [];
  let acknowledged = 0;
  let crashes = 0;
  let partitions = 0;
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    try {
      const r = runClusterSim({ seed });
      acknowledged += r.acknowledgedWrites + r.acknowledgedItems;
      crashes += r.crashes;
      partitions += r.partitions;
    } catch (e) {
      failures.push(`${(e as Error).message}\n  replay: npx tsx scripts/sim.ts --seed ${seed}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${SEEDS} seeds failed:\n${failures.join('\n')}`);
  // The runs did real work: writes were acknowledged and faults were injected.
  assert.ok(acknowledged > SEEDS * 10, `only ${acknowledged} acknowledged operations over ${SEEDS} seeds`);
  assert.ok(crashes > 0 && partitions > 0, `faults injected: ${crashes} crashes, ${partitions} partitions`);
});
