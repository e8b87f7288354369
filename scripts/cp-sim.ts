// Runs the seeded CP linearizability simulation (tests/sim/cp-sim.ts).
//   npx tsx scripts/cp-sim.ts --seed 42                 replay one seed with its faults
//   npx tsx scripts/cp-sim.ts --seeds 1-10000 --jobs 2  run a range over N processes; failures and a summary
import { fileURLToPath } from 'node:url';
import { runCpSim } from '../tests/sim/cp-sim.js';
import { parseRunnerArgs, runSeedJobs } from './sim-runner.js';

interface Totals {
  seeds: number;
  passed: number;
  operations: number;
  acknowledged: number;
  indeterminate: number;
  attempts: number;
  failures: string[];
}

const empty = (): Totals => ({ seeds: 0, passed: 0, operations: 0, acknowledged: 0, indeterminate: 0, attempts: 0, failures: [] });

function runRange(from: number, to: number, verbose: boolean, quiet: boolean): Totals {
  const t = empty();
  for (let seed = from; seed <= to; seed++) {
    t.seeds++;
    try {
      const r = runCpSim({ seed, verbose });
      t.passed++;
      t.operations += r.operations;
      t.acknowledged += r.acknowledged;
      t.indeterminate += r.indeterminate;
      t.attempts += r.attempts;
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      const line = `FAIL ${(e as Error).message} (replay: npx tsx scripts/cp-sim.ts --seed ${seed})`;
      t.failures.push(line);
      if (!quiet) console.log(line);
      if (verbose) console.log((e as Error).stack);
    }
  }
  return t;
}

const args = parseRunnerArgs('cp-sim', process.argv.slice(2), []);
const startedMs = Date.now();
const [from, to] = args.seeds;
let totals: Totals;
if (args.jobs > 1 && to > from) {
  totals = empty();
  const all = totals;
  await runSeedJobs<Totals>(fileURLToPath(import.meta.url), from, to, args.jobs, [], (part) => {
    for (const k of Object.keys(all) as (keyof Totals)[]) {
      if (k === 'failures') all.failures.push(...part.failures);
      else (all[k] as number) += part[k] as number;
    }
  });
} else totals = runRange(from, to, args.verbose, args.json);
const wallSeconds = Math.round((Date.now() - startedMs) / 100) / 10;
if (args.json) process.stdout.write(`${JSON.stringify(totals)}\n`);
else {
  for (const f of args.jobs > 1 ? totals.failures : []) console.log(f);
  console.log(`${totals.passed}/${totals.seeds} seeds passed (seeds ${from}-${to}): ${totals.operations} CP calls, ${totals.acknowledged} answered and ${totals.indeterminate} timed out (unknown outcome), all checked for linearizability; ${totals.attempts} attempts routed; ${wallSeconds} s`);
  console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, operations: totals.operations, acknowledged: totals.acknowledged, indeterminate: totals.indeterminate, wallSeconds }));
}
process.exit(totals.failures.length === 0 ? 0 : 1);
