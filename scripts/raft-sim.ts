// Runs the seeded Raft group simulation (tests/sim/raft-sim.ts).
//   npx tsx scripts/raft-sim.ts --seed 42                 replay one seed with its faults
//   npx tsx scripts/raft-sim.ts --seeds 1-10000 --jobs 2  run a range over N processes; failures and a summary
import { fileURLToPath } from 'node:url';
import { runRaftSim } from '../tests/sim/raft-sim.js';
import { parseRunnerArgs, runSeedJobs } from './sim-runner.js';

interface Totals {
  seeds: number;
  passed: number;
  acknowledged: number;
  reads: number;
  elections: number;
  crashes: number;
  pauses: number;
  partitions: number;
  membershipChanges: number;
  snapshotsInstalled: number;
  failures: string[];
}

function emptyTotals(): Totals {
  return { seeds: 0, passed: 0, acknowledged: 0, reads: 0, elections: 0, crashes: 0, pauses: 0, partitions: 0, membershipChanges: 0, snapshotsInstalled: 0, failures: [] };
}

function runRange(from: number, to: number, verbose: boolean, quiet: boolean): Totals {
  const t = emptyTotals();
  for (let seed = from; seed <= to; seed++) {
    t.seeds++;
    try {
      const r = runRaftSim({ seed, verbose });
      t.passed++;
      t.acknowledged += r.acknowledged;
      t.reads += r.reads;
      t.elections += r.elections;
      t.crashes += r.crashes;
      t.pauses += r.pauses;
      t.partitions += r.partitions;
      t.membershipChanges += r.membershipChanges;
      t.snapshotsInstalled += r.snapshotsInstalled;
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      const line = `FAIL ${(e as Error).message} (replay: npx tsx scripts/raft-sim.ts --seed ${seed})`;
      t.failures.push(line);
      if (!quiet) console.log(line);
      if (verbose) console.log((e as Error).stack);
    }
  }
  return t;
}

const args = parseRunnerArgs('raft-sim', process.argv.slice(2), []);
const startedMs = Date.now();
const [from, to] = args.seeds;
let totals: Totals;
if (args.jobs > 1 && to > from) {
  totals = emptyTotals();
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
  console.log(
    `${totals.passed}/${totals.seeds} seeds passed (seeds ${from}-${to}): ${totals.acknowledged} acknowledged writes and ${totals.reads} linearizable reads checked; ` +
      `${totals.crashes} crashes, ${totals.pauses} pauses, ${totals.partitions} partitions, ${totals.membershipChanges} membership changes, ${totals.elections} elections, ${totals.snapshotsInstalled} snapshots installed; ${wallSeconds} s`,
  );
  console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, acknowledged: totals.acknowledged, reads: totals.reads, wallSeconds }));
}
process.exit(totals.failures.length === 0 ? 0 : 1);
