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

/** Seeds found by the 10,000-seed runs, with what they found. */
const REGRESSIONS: ReadonlyMap<number, string> = new Map([
  [3678, 'a machine crash tore the last log batch through its length field, which then read shorter than what followed: loaded as corruption, the member could not start'],
  [6647, 'a torn length field read as corruption (as 3678)'],
  [9025, 'a torn length field read as corruption (as 3678)'],
  [10012, 'a torn length field read as corruption (as 3678)'],
  [10236, 'a torn length field read as corruption (as 3678)'],
]);

test('CP simulation: the seeds found by the long runs still pass', () => {
  const failures: string[] = [];
  for (const [seed, cause] of REGRESSIONS) {
    try {
      runCpSim({ seed });
    } catch (e) {
      failures.push(`seed ${seed} (${cause}): ${(e as Error).message}\n  replay: npx tsx scripts/cp-sim.ts --seed ${seed}`);
    }
  }
  assert.deepEqual(failures, []);
});
