// Runs the seeded Raft group simulation (tests/sim/raft-sim.ts).
//   npx tsx scripts/raft-sim.ts --seed 42                 replay one seed with its faults
//   npx tsx scripts/raft-sim.ts --seeds 1-10000 --jobs 2  run a range over N processes; failures and a summary
import { fileURLToPath } from 'node:url';
import { runRaftSim } from '../tests/sim/raft-sim.js';
import { runCountingSims } from './sim-runner.js';

process.exit(
  await runCountingSims({
    name: 'raft-sim',
    script: fileURLToPath(import.meta.url),
    argv: process.argv.slice(2),
    runOne: (seed, verbose) => {
      const { seed: _seed, size: _size, ...counts } = runRaftSim({ seed, verbose });
      return counts;
    },
    summary: (t, from, to, wall) => {
      const c = (k: string): number => t.counts[k] ?? 0;
      return (
        `${t.passed}/${t.seeds} seeds passed (seeds ${from}-${to}): ${c('acknowledged')} acknowledged writes and ${c('reads')} linearizable reads checked; ` +
        `${c('crashes')} crashes, ${c('pauses')} pauses, ${c('partitions')} partitions, ${c('membershipChanges')} membership changes, ${c('elections')} elections, ${c('snapshotsInstalled')} snapshots installed; ${wall} s`
      );
    },
    jsonKeys: ['acknowledged', 'reads'],
  }),
);
