// What the simulation runners (scripts/sim.ts, scripts/wan-sim.ts) share: their command line
// (`--seed N` replays one seed verbosely, `--seeds A-B` runs a range, `--jobs N` splits it over
// processes, `--json` prints the totals as one JSON line, plus flags of each runner) and the job
// pool that runs a range in child processes of the same script, dealing seeds out in small chunks
// as children finish so that one slow chunk does not hold the rest.
import { spawn } from 'node:child_process';

export const SEED_MAX = 0xffff_ffff;
export const JOBS_MAX = 64;

export interface RunnerArgs {
  readonly seeds: [number, number];
  readonly verbose: boolean;
  readonly jobs: number;
  readonly json: boolean;
  /** The runner's own flags that were given (from `flags`). */
  readonly flags: ReadonlySet<string>;
}

/** Parses the command line; a bad one prints `usage` and exits 2, `--help` prints it and exits 0. */
export function parseRunnerArgs(name: string, args: readonly string[], flags: readonly string[]): RunnerArgs {
  const usageLine = `${name}.ts --seed N | --seeds A-B [--jobs N] [--json]${flags.map((f) => ` [${f}]`).join('')}`;
  const usage = (message: string): never => {
    process.stderr.write(`${name}: ${message}\nusage: ${usageLine}\n`);
    process.exit(2);
  };
  const seedOf = (text: string | undefined, what: string): number => {
    if (text === undefined || !/^\d{1,10}$/.test(text) || Number(text) > SEED_MAX) usage(`${what} must be an integer 0..${SEED_MAX}, got ${JSON.stringify(text ?? '')}`);
    return Number(text);
  };
  let seeds: [number, number] = [1, 500];
  let verbose = false;
  let jobs = 1;
  let json = false;
  const given = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--seed') {
      const s = seedOf(args[++i], '--seed');
      seeds = [s, s];
      verbose = true;
    } else if (a === '--seeds') {
      const spec = args[++i] ?? '';
      const m = /^(\d+)-(\d+)$/.exec(spec) ?? /^(\d+)$/.exec(spec);
      if (m === null) usage(`--seeds takes A-B, got ${JSON.stringify(spec)}`);
      const from = seedOf(m?.[1], '--seeds start');
      const to = seedOf(m?.[2] ?? m?.[1], '--seeds end');
      if (to < from) usage(`--seeds ${spec}: the end is before the start`);
      seeds = [from, to];
      verbose = false;
    } else if (a === '--jobs') {
      const t = args[++i] ?? '';
      if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > JOBS_MAX) usage(`--jobs must be an integer 1..${JOBS_MAX}, got ${JSON.stringify(t)}`);
      jobs = Number(t);
    } else if (a === '--json') json = true;
    else if (flags.includes(a)) given.add(a);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(`${usageLine}\n`);
      process.exit(0);
    } else usage(`unknown option ${JSON.stringify(a)}`);
  }
  return { seeds, verbose, jobs, json, flags: given };
}

/**
 * Runs seeds `from`..`to` in `jobs` child processes of `script` (each with `--seeds S-E --json` and
 * `extraArgs`); `onPart` gets the totals each child printed as its last line.
 */
export async function runSeedJobs<T>(script: string, from: number, to: number, jobs: number, extraArgs: readonly string[], onPart: (totals: T) => void): Promise<void> {
  // A child costs about 1.5 s to start (tsx compiles the sources); a seed about 0.2 s. Chunks of up
  // to 200 seeds keep that under 4 % on long ranges, and four chunks per job balance short ones.
  const chunk = Math.max(1, Math.min(200, Math.ceil((to - from + 1) / (jobs * 4))));
  let next = from;
  const worker = async (): Promise<void> => {
    while (next <= to) {
      const start = next;
      const end = Math.min(to, start + chunk - 1);
      next = end + 1;
      const part = await new Promise<T>((resolve, reject) => {
        const child = spawn(process.execPath, [...process.execArgv, script, '--seeds', `${start}-${end}`, '--json', ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('error', reject);
        child.on('close', () => {
          const last = out.trim().split('\n').pop() ?? '';
          try {
            resolve(JSON.parse(last) as T);
          } catch {
            reject(new Error(`seeds ${start}-${end}: no result (output: ${out.slice(-500)})`));
          }
        });
      });
      onPart(part);
    }
  };
  await Promise.all(Array.from({ length: jobs }, () => worker()));
}

/** Totals of a simulation whose report per seed is a set of counts (scripts/raft-sim.ts, scripts/cp-sim.ts). */
export interface CountTotals {
  seeds: number;
  passed: number;
  counts: Record<string, number>;
  failures: string[];
}

/**
 * The whole command line of such a simulation: parses the arguments, runs the range (in `--jobs`
 * children of `script` when asked), prints failures, `summary` and a JSON line with `jsonKeys`,
 * and returns the exit code (1 when a seed failed).
 */
export async function runCountingSims(o: {
  readonly name: string;
  readonly script: string;
  readonly argv: readonly string[];
  readonly runOne: (seed: number, verbose: boolean) => Readonly<Record<string, number>>;
  readonly summary: (t: CountTotals, from: number, to: number, wallSeconds: number) => string;
  readonly jsonKeys: readonly string[];
}): Promise<number> {
  const args = parseRunnerArgs(o.name, o.argv, []);
  const startedMs = Date.now();
  const [from, to] = args.seeds;
  const totals: CountTotals = { seeds: 0, passed: 0, counts: {}, failures: [] };
  const add = (counts: Readonly<Record<string, number>>): void => {
    for (const [k, v] of Object.entries(counts)) totals.counts[k] = (totals.counts[k] ?? 0) + v;
  };
  if (args.jobs > 1 && to > from) {
    await runSeedJobs<CountTotals>(o.script, from, to, args.jobs, [], (part) => {
      totals.seeds += part.seeds;
      totals.passed += part.passed;
      totals.failures.push(...part.failures);
      add(part.counts);
    });
  } else {
    for (let seed = from; seed <= to; seed++) {
      totals.seeds++;
      try {
        const counts = o.runOne(seed, args.verbose);
        totals.passed++;
        add(counts);
        if (args.verbose) console.log(JSON.stringify({ seed, ...counts }));
      } catch (e) {
        const line = `FAIL ${(e as Error).message} (replay: npx tsx scripts/${o.name}.ts --seed ${seed})`;
        totals.failures.push(line);
        if (!args.json) console.log(line);
        if (args.verbose) console.log((e as Error).stack);
      }
    }
  }
  const wallSeconds = Math.round((Date.now() - startedMs) / 100) / 10;
  if (args.json) process.stdout.write(`${JSON.stringify(totals)}\n`);
  else {
    for (const f of args.jobs > 1 ? totals.failures : []) console.log(f);
    console.log(o.summary(totals, from, to, wallSeconds));
    const picked = Object.fromEntries(o.jsonKeys.map((k) => [k, totals.counts[k] ?? 0]));
    console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, ...picked, wallSeconds }));
  }
  return totals.failures.length === 0 ? 0 : 1;
}
