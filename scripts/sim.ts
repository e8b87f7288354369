// Runs the seeded whole-cluster simulation (tests/sim/cluster-sim.ts).
//   npx tsx scripts/sim.ts --seed 42            replay one seed with the members' logs
//   npx tsx scripts/sim.ts --seeds 1-200        run a range, print failures and a summary
// Set SIM_LOSS=0 to run without single-message loss. In a replay, SIM_WATCH_PARTITION=N prints every
// message about partition N and SIM_WATCH_KIND=kind every message of that kind; SIM_DEBUG=1 prints
// the master's pending migrations when a run does not settle.
import { runClusterSim } from '../tests/sim/cluster-sim.js';

function range(spec: string): number[] {
  const [a, b] = spec.split('-').map(Number) as [number, number | undefined];
  const out: number[] = [];
  for (let s = a; s <= (b ?? a); s++) out.push(s);
  return out;
}

const args = process.argv.slice(2);
const seedAt = args.indexOf('--seed');
const seedsAt = args.indexOf('--seeds');
const verbose = seedAt >= 0;
const seeds = seedAt >= 0 ? [Number(args[seedAt + 1])] : range(seedsAt >= 0 ? (args[seedsAt + 1] ?? '1-200') : '1-200');
let failed = 0;
for (const seed of seeds) {
  try {
    const partition = process.env.SIM_WATCH_PARTITION;
    const kind = process.env.SIM_WATCH_KIND;
    const watch = { ...(partition !== undefined ? { partition: Number(partition) } : {}), ...(kind !== undefined ? { kind } : {}) };
    const r = runClusterSim({ seed, verbose, ...(partition !== undefined || kind !== undefined ? { watch } : {}) });
    if (verbose || seeds.length <= 5) console.log(JSON.stringify(r));
  } catch (e) {
    failed++;
    console.log(`FAIL ${(e as Error).message}`);
  }
}
console.log(`${seeds.length - failed}/${seeds.length} seeds passed`);
process.exit(failed === 0 ? 0 : 1);
