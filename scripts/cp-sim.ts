// Runs the seeded CP linearizability simulation (tests/sim/cp-sim.ts).
//   npx tsx scripts/cp-sim.ts --seed 42                 replay one seed with its faults
//   npx tsx scripts/cp-sim.ts --seeds 1-10000 --jobs 2  run a range over N processes; failures and a summary
// CP_SIM_DUMP=1 prints the histories (and the members' Raft status) of a seed that fails a check.
import { fileURLToPath } from 'node:url';
import { runCpSim } from '../tests/sim/cp-sim.js';
import { runCountingSims } from './sim-runner.js';

process.exit(
  await runCountingSims({
    name: 'cp-sim',
    script: fileURLToPath(import.meta.url),
    argv: process.argv.slice(2),
    runOne: (seed, verbose) => {
      const { seed: _seed, size: _size, ...counts } = runCpSim({ seed, verbose });
      return counts;
    },
    summary: (t, from, to, wall) => {
      const c = (k: string): number => t.counts[k] ?? 0;
      return `${t.passed}/${t.seeds} seeds passed (seeds ${from}-${to}): ${c('operations')} CP calls, ${c('acknowledged')} answered and ${c('indeterminate')} timed out (unknown outcome), all checked for linearizability; ${c('attempts')} attempts routed; ${wall} s`;
    },
    jsonKeys: ['operations', 'acknowledged', 'indeterminate'],
  }),
);
