// Runs the seeded whole-cluster simulation (tests/sim/cluster-sim.ts).
//   npx tsx scripts/sim.ts --seed 42                  replay one seed with the members' logs and faults
//   npx tsx scripts/sim.ts --seeds 1-10000 --jobs 2   run a range (split over N processes), print
//                                                     failures and a summary with a JSON line
//   --silent-crashes                                  every crash silent (the model the seeds pinned
//                                                     before the refusal-based detector were found with)
//   --overlap                                         let faults overlap (the next one 3 s after the
//                                                     previous, whether it is over or not)
//   --register                                        also overwrite a PassThrough register, and check
//                                                     that no value acknowledged in a quiet second
//                                                     after a settle is lost (tests/sim/cluster-sim.ts)
//   --tcp                                             partitions hold messages and deliver them after
//                                                     the heal on open connections (TCP under nft)
// Set SIM_LOSS=0 to run without single-message loss. In a replay, SIM_WATCH_PARTITION=N prints every
// message about partition N and SIM_WATCH_KIND=kind every message of that kind (* for all); SIM_DEBUG=1 prints
// the master's pending migrations when a run does not settle.
import { fileURLToPath } from 'node:url';
import { runClusterSim, type SimReport } from '../tests/sim/cluster-sim.js';
import { parseRunnerArgs, runSeedJobs } from './sim-runner.js';

interface Totals {
  seeds: number;
  passed: number;
  acknowledgedWrites: number;
  acknowledgedItems: number;
  crashes: number;
  restarts: number;
  bounces: number;
  pauses: number;
  partitions: number;
  splitBrainRuns: number;
  duplicatedItems: number;
  failures: string[];
}

function emptyTotals(): Totals {
  return { seeds: 0, passed: 0, acknowledgedWrites: 0, acknowledgedItems: 0, crashes: 0, restarts: 0, bounces: 0, pauses: 0, partitions: 0, splitBrainRuns: 0, duplicatedItems: 0, failures: [] };
}

function add(t: Totals, r: SimReport): void {
  t.passed++;
  t.acknowledgedWrites += r.acknowledgedWrites;
  t.acknowledgedItems += r.acknowledgedItems;
  t.crashes += r.crashes;
  t.restarts += r.restarts;
  t.bounces += r.bounces;
  t.pauses += r.pauses;
  t.partitions += r.partitions;
  if (r.splitBrain) t.splitBrainRuns++;
  t.duplicatedItems += r.duplicatedItems;
}

interface Mode {
  readonly overlap: boolean;
  readonly silent: boolean;
  readonly register: boolean;
  readonly tcp: boolean;
}

function modeFlags(m: Mode): string[] {
  return [...(m.overlap ? ['--overlap'] : []), ...(m.silent ? ['--silent-crashes'] : []), ...(m.register ? ['--register'] : []), ...(m.tcp ? ['--tcp'] : [])];
}

function runRange(from: number, to: number, verbose: boolean, quiet: boolean, mode: Mode): Totals {
  const { overlap, silent, register, tcp } = mode;
  const totals = emptyTotals();
  const partition = process.env.SIM_WATCH_PARTITION;
  const kind = process.env.SIM_WATCH_KIND;
  const watch = { ...(partition !== undefined ? { partition: Number(partition) } : {}), ...(kind !== undefined ? { kind } : {}) };
  for (let seed = from; seed <= to; seed++) {
    totals.seeds++;
    try {
      const r = runClusterSim({ seed, verbose, overlap, register, tcp, ...(silent ? { crashes: 'silent' as const } : {}), ...(partition !== undefined || kind !== undefined ? { watch } : {}) });
      add(totals, r);
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      const line = `FAIL ${(e as Error).message} (replay: npx tsx scripts/sim.ts --seed ${seed}${modeFlags(mode).map((f) => ` ${f}`).join('')})`;
      totals.failures.push(line);
      if (!quiet) console.log(line);
    }
  }
  return totals;
}

async function runJobs(from: number, to: number, jobs: number, mode: Mode): Promise<Totals> {
  const all = emptyTotals();
  await runSeedJobs<Totals>(fileURLToPath(import.meta.url), from, to, jobs, modeFlags(mode), (t) => {
    for (const k of Object.keys(all) as (keyof Totals)[]) {
      if (k === 'failures') all.failures.push(...t.failures);
      else (all[k] as number) += t[k] as number;
    }
  });
  return all;
}

const args = parseRunnerArgs('sim', process.argv.slice(2), ['--overlap', '--silent-crashes', '--register', '--tcp']);
const o = { ...args, overlap: args.flags.has('--overlap'), silent: args.flags.has('--silent-crashes'), register: args.flags.has('--register'), tcp: args.flags.has('--tcp') };
const startedMs = Date.now();
const [from, to] = o.seeds;
const totals = o.jobs > 1 && to > from ? await runJobs(from, to, o.jobs, o) : runRange(from, to, o.verbose, o.json, o);
const wallSeconds = Math.round((Date.now() - startedMs) / 100) / 10;
if (o.json) {
  process.stdout.write(`${JSON.stringify(totals)}\n`);
} else {
  for (const f of o.jobs > 1 ? totals.failures : []) console.log(f);
  console.log(
 `${totals.passed}/${totals.seeds} seeds passed (seeds ${from}-${to}${o.overlap ? ', faults overlapping' : ''}${o.register ? ', with the register' : ''}${o.tcp ? ', partitions holding messages (TCP)' : ''}): ${totals.acknowledgedWrites} acknowledged map writes and ${totals.acknowledgedItems} acknowledged queue items checked; ` +
      `${totals.crashes} crashes, ${totals.bounces} quick restarts, ${totals.restarts} restarts, ${totals.pauses} pauses, ${totals.partitions} partitions; ` +
      `${totals.splitBrainRuns} runs with a split brain, ${totals.duplicatedItems} queue items delivered twice inside them; ${wallSeconds} s`,
  );
  console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, acknowledgedWrites: totals.acknowledgedWrites, acknowledgedItems: totals.acknowledgedItems, splitBrainRuns: totals.splitBrainRuns, duplicatedItems: totals.duplicatedItems, wallSeconds }));
}
process.exit(totals.failures.length === 0 ? 0 : 1);
