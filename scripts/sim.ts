// Runs the seeded whole-cluster simulation (tests/sim/cluster-sim.ts).
//   npx tsx scripts/sim.ts --seed 42                  replay one seed with the members' logs and faults
//   npx tsx scripts/sim.ts --seeds 1-10000 --jobs 2   run a range (split over N processes), print
//                                                     failures and a summary with a JSON line
//   --silent-crashes                                  every crash silent (the model the seeds pinned
//                                                     before the refusal-based detector were found with)
//   --overlap                                         let faults overlap (the next one 3 s after the
//                                                     previous, whether it is over or not)
// Set SIM_LOSS=0 to run without single-message loss. In a replay, SIM_WATCH_PARTITION=N prints every
// message about partition N and SIM_WATCH_KIND=kind every message of that kind; SIM_DEBUG=1 prints
// the master's pending migrations when a run does not settle.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runClusterSim, type SimReport } from '../tests/sim/cluster-sim.js';

const SEED_MAX = 0xffff_ffff;
const JOBS_MAX = 64;

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

function usage(message: string): never {
  process.stderr.write(`sim: ${message}\nusage: sim.ts --seed N | --seeds A-B [--jobs N] [--json] [--overlap] [--silent-crashes]\n`);
  process.exit(2);
}

function seedOf(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d{1,10}$/.test(text)) usage(`${what} must be an integer 0..${SEED_MAX}, got ${JSON.stringify(text ?? '')}`);
  const n = Number(text);
  if (n > SEED_MAX) usage(`${what} must be an integer 0..${SEED_MAX}, got ${text}`);
  return n;
}

function parse(args: string[]): { seeds: [number, number]; verbose: boolean; jobs: number; json: boolean; overlap: boolean; silent: boolean } {
  let seeds: [number, number] = [1, 500];
  let verbose = false;
  let overlap = false;
  let silent = false;
  let jobs = 1;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--seed') {
      const s = seedOf(args[++i], '--seed');
      seeds = [s, s];
      verbose = true;
    } else if (a === '--seeds') {
      const spec = args[++i] ?? '';
      const m = /^(\d+)-(\d+)$/.exec(spec) ?? /^(\d+)$/.exec(spec);
      if (m === null) usage(`--seeds takes A-B, got ${JSON.stringify(spec)}`);
      const from = seedOf(m[1], '--seeds start');
      const to = seedOf(m[2] ?? m[1], '--seeds end');
      if (to < from) usage(`--seeds ${spec}: the end is before the start`);
      seeds = [from, to];
      verbose = false;
    } else if (a === '--jobs') {
      const t = args[++i] ?? '';
      if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > JOBS_MAX) usage(`--jobs must be an integer 1..${JOBS_MAX}, got ${JSON.stringify(t)}`);
      jobs = Number(t);
    } else if (a === '--json') json = true;
    else if (a === '--overlap') overlap = true;
    else if (a === '--silent-crashes') silent = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write('sim.ts --seed N | --seeds A-B [--jobs N] [--json] [--overlap] [--silent-crashes]\n');
      process.exit(0);
    } else usage(`unknown option ${JSON.stringify(a)}`);
  }
  return { seeds, verbose, jobs, json, overlap, silent };
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

function runRange(from: number, to: number, verbose: boolean, quiet: boolean, overlap: boolean, silent: boolean): Totals {
  const totals = emptyTotals();
  const partition = process.env.SIM_WATCH_PARTITION;
  const kind = process.env.SIM_WATCH_KIND;
  const watch = { ...(partition !== undefined ? { partition: Number(partition) } : {}), ...(kind !== undefined ? { kind } : {}) };
  for (let seed = from; seed <= to; seed++) {
    totals.seeds++;
    try {
      const r = runClusterSim({ seed, verbose, overlap, ...(silent ? { crashes: 'silent' as const } : {}), ...(partition !== undefined || kind !== undefined ? { watch } : {}) });
      add(totals, r);
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      const line = `FAIL ${(e as Error).message} (replay: npx tsx scripts/sim.ts --seed ${seed}${overlap ? ' --overlap' : ''}${silent ? ' --silent-crashes' : ''})`;
      totals.failures.push(line);
      if (!quiet) console.log(line);
    }
  }
  return totals;
}

async function runJobs(from: number, to: number, jobs: number, overlap: boolean, silent: boolean): Promise<Totals> {
  const self = fileURLToPath(import.meta.url);
  const count = to - from + 1;
  const per = Math.ceil(count / jobs);
  const parts: Promise<Totals>[] = [];
  for (let start = from; start <= to; start += per) {
    const end = Math.min(to, start + per - 1);
    parts.push(
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [...process.execArgv, self, '--seeds', `${start}-${end}`, '--json', ...(overlap ? ['--overlap'] : []), ...(silent ? ['--silent-crashes'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('error', reject);
        child.on('close', () => {
          const last = out.trim().split('\n').pop() ?? '';
          try {
            resolve(JSON.parse(last) as Totals);
          } catch {
            reject(new Error(`seeds ${start}-${end}: no result (output: ${out.slice(-500)})`));
          }
        });
      }),
    );
  }
  const all = emptyTotals();
  for (const t of await Promise.all(parts)) {
    for (const k of Object.keys(all) as (keyof Totals)[]) {
      if (k === 'failures') all.failures.push(...t.failures);
      else (all[k] as number) += t[k] as number;
    }
  }
  return all;
}

const o = parse(process.argv.slice(2));
const startedMs = Date.now();
const [from, to] = o.seeds;
const totals = o.jobs > 1 && to > from ? await runJobs(from, to, o.jobs, o.overlap, o.silent) : runRange(from, to, o.verbose, o.json, o.overlap, o.silent);
const wallSeconds = Math.round((Date.now() - startedMs) / 100) / 10;
if (o.json) {
  process.stdout.write(`${JSON.stringify(totals)}\n`);
} else {
  for (const f of o.jobs > 1 ? totals.failures : []) console.log(f);
  console.log(
 `${totals.passed}/${totals.seeds} seeds passed (seeds ${from}-${to}${o.overlap ? ', faults overlapping' : ''}): ${totals.acknowledgedWrites} acknowledged map writes and ${totals.acknowledgedItems} acknowledged queue items checked; ` +
      `${totals.crashes} crashes, ${totals.bounces} quick restarts, ${totals.restarts} restarts, ${totals.pauses} pauses, ${totals.partitions} partitions; ` +
      `${totals.splitBrainRuns} runs with a split brain, ${totals.duplicatedItems} queue items delivered twice inside them; ${wallSeconds} s`,
  );
  console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, acknowledgedWrites: totals.acknowledgedWrites, acknowledgedItems: totals.acknowledgedItems, splitBrainRuns: totals.splitBrainRuns, duplicatedItems: totals.duplicatedItems, wallSeconds }));
}
process.exit(totals.failures.length === 0 ? 0 : 1);
