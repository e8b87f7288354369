// Runs the seeded WAN simulation of two clusters (tests/sim/wan-sim.ts).
//   npx tsx scripts/wan-sim.ts --seed 42                  replay one seed with the members' logs and faults
//   npx tsx scripts/wan-sim.ts --seeds 1-500 --jobs 2     run a range (split over N processes), print the
//                                                         failures and a summary with a JSON line
//   --one-endpoint                                        the publisher targets only B's first member
//                                                         (no failover between B members; same faults)
// In a replay, WAN_SIM_WATCH_KEY=k7 prints every write of that key's partition on A (owner and
// backups, with partition versions) and every store of it on B.
import { fileURLToPath } from 'node:url';
import { runWanSim, type WanSimReport } from '../tests/sim/wan-sim.js';
import { parseRunnerArgs, runSeedJobs } from './sim-runner.js';

interface Totals {
  seeds: number;
  passed: number;
  writes: number;
  acknowledgedWrites: number;
  checkedNoSync: number;
  replays: number;
  lostInA: number;
  staleApplies: number;
  misroutedAcks: number;
  differedBeforeSync: number;
  midSync: Record<string, number>;
  faults: Record<string, number>;
  failures: string[];
}

function emptyTotals(): Totals {
  return { seeds: 0, passed: 0, writes: 0, acknowledgedWrites: 0, checkedNoSync: 0, replays: 0, lostInA: 0, staleApplies: 0, misroutedAcks: 0, differedBeforeSync: 0, midSync: {}, faults: {}, failures: [] };
}

function add(t: Totals, r: WanSimReport): void {
  t.passed++;
  t.writes += r.writes;
  t.acknowledgedWrites += r.acknowledgedWrites;
  if (r.checkedNoSync) t.checkedNoSync++;
  t.replays += r.replays;
  t.lostInA += r.lostInA;
  t.staleApplies += r.staleApplies;
  t.misroutedAcks += r.misroutedAcks;
  t.differedBeforeSync += r.differedBeforeSync;
  if (r.midSync !== 'none') t.midSync[r.midSync] = (t.midSync[r.midSync] ?? 0) + 1;
  for (const [k, n] of Object.entries(r.faults)) t.faults[k] = (t.faults[k] ?? 0) + n;
}

function merge(all: Totals, t: Totals): void {
  all.seeds += t.seeds;
  all.passed += t.passed;
  all.writes += t.writes;
  all.acknowledgedWrites += t.acknowledgedWrites;
  all.checkedNoSync += t.checkedNoSync;
  all.replays += t.replays;
  all.lostInA += t.lostInA;
  all.staleApplies += t.staleApplies;
  all.misroutedAcks += t.misroutedAcks;
  all.differedBeforeSync += t.differedBeforeSync;
  for (const [k, n] of Object.entries(t.midSync)) all.midSync[k] = (all.midSync[k] ?? 0) + n;
  for (const [k, n] of Object.entries(t.faults)) all.faults[k] = (all.faults[k] ?? 0) + n;
  all.failures.push(...t.failures);
}

async function runRange(from: number, to: number, verbose: boolean, quiet: boolean, oneEndpoint: boolean): Promise<Totals> {
  const totals = emptyTotals();
  for (let seed = from; seed <= to; seed++) {
    totals.seeds++;
    try {
      const watchKey = process.env.WAN_SIM_WATCH_KEY;
      const r = await runWanSim({ seed, verbose, ...(watchKey === undefined ? {} : { watchKey }), ...(oneEndpoint ? { targetEndpoints: 1 as const } : {}) });
      add(totals, r);
      if (verbose) console.log(JSON.stringify(r));
    } catch (e) {
      const line = `FAIL ${(e as Error).message.split('\n').join('\n  ')}\n  (replay: npx tsx scripts/wan-sim.ts --seed ${seed}${oneEndpoint ? ' --one-endpoint' : ''})`;
      totals.failures.push(line);
      if (!quiet) console.log(line);
    }
  }
  return totals;
}

async function runJobs(from: number, to: number, jobs: number, oneEndpoint: boolean): Promise<Totals> {
  const all = emptyTotals();
  await runSeedJobs<Totals>(fileURLToPath(import.meta.url), from, to, jobs, oneEndpoint ? ['--one-endpoint'] : [], (t) => {
    for (const f of t.failures) console.log(f);
    merge(all, t);
  });
  return all;
}

const args = parseRunnerArgs('wan-sim', process.argv.slice(2), ['--one-endpoint']);
const o = { ...args, oneEndpoint: args.flags.has('--one-endpoint') };
const startedMs = Date.now();
const [from, to] = o.seeds;
const totals = o.jobs > 1 && to > from ? await runJobs(from, to, o.jobs, o.oneEndpoint) : await runRange(from, to, o.verbose, o.json, o.oneEndpoint);
const wallSeconds = Math.round((Date.now() - startedMs) / 100) / 10;
if (o.json) process.stdout.write(`${JSON.stringify(totals)}\n`);
else {
  const faults = Object.entries(totals.faults).sort().map(([k, n]) => `${k} ${n}`).join(', ');
  console.log(
    `${totals.passed}/${totals.seeds} seeds passed (seeds ${from}-${to}${o.oneEndpoint ? ', one target endpoint' : ''}): ${totals.writes} writes (${totals.acknowledgedWrites} acknowledged); ` +
      `(a) checked without a sync in ${totals.checkedNoSync} runs; ${totals.replays} replays and ${totals.staleApplies} stale applies seen on B and ${totals.misroutedAcks} acks taken for another batch on A (passing runs); ` +
      `${totals.differedBeforeSync} keys repaired by the final sync; syncs during faults ended ${JSON.stringify(totals.midSync)}; ${totals.lostInA} writes lost in A; faults: ${faults}; ${wallSeconds} s`,
  );
  // Failures by cause, as the run diagnosed them (tests/sim/wan-sim.test.ts pins one seed of each).
  const byCause: Record<string, string[]> = {};
  for (const f of totals.failures) {
    const cause = /stale apply\(s\) on B; on this partition/.test(f)
      ? 'stale-apply-after-failover'
      : /misrouted ack/.test(f)
      ? 'ack-taken-for-another-batch'
      : /sync started during the faults had not ended/.test(f)
        ? 'sync-orphaned-by-member-left'
        : 'other';
    (byCause[cause] ??= []).push(/seed=(\d+)/.exec(f)?.[1] ?? '?');
  }
  for (const [cause, seeds] of Object.entries(byCause)) console.log(`${cause}: ${seeds.length} seed(s): ${seeds.join(',')}`);
  console.log(JSON.stringify({ seeds: totals.seeds, passed: totals.passed, failed: totals.failures.length, byCause: Object.fromEntries(Object.entries(byCause).map(([k, v]) => [k, v.length])), wallSeconds }));
}
process.exit(totals.failures.length === 0 ? 0 : 1);
