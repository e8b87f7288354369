// The CP linearizability simulation (tests/sim/cp-sim.ts) over a range of seeds: AtomicLong and
// AtomicReference calls through random members of a group of 3 or 5 under crashes, pauses,
// partitions and loss, retried with their invocation UUIDs; every history must be linearizable.
// The long runs are `npx tsx scripts/cp-sim.ts --seeds A-B --jobs 2`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { runCpSim } from './cp-sim.js';

const SEEDS = 20;

test(`CP simulation: seeds 1-${SEEDS} give linearizable AtomicLong and AtomicReference histories`, () => {
  const failures: string[] = [];
  let answered = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    try {
      answered += runCpSim({ seed }).acknowledged;
    } catch (e) {
      failures.push(`${(e as Error).message} (replay: npx tsx scripts/cp-sim.ts --seed ${seed})`);
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(answered > SEEDS * 300, `calls were answered (${answered})`);
});
