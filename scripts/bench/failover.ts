// Failover benchmark (issue #11): how long a kill -9 of a member stops the cluster.
//
// Three members (map backup-count 1) hold `--entries` entries (default 1,000,000, preloaded through
// all three, pipelined). Then `--writers` loops (default 8) overwrite random entries through the two
// members that will survive, each write timed from send to answer. After a warm-up the third member
// (never the master) gets SIGKILL. Two figures:
// - removal: from the kill until both survivors list the two of them (GET /grid/rest/cluster,
//   polled every 20 ms); target <= 1 s (the refusal rule; the heartbeat timeout alone takes 10 s);
// - longest write: the slowest write through a survivor that was in flight at the kill or sent
//   after it, until 3 s after the removal; target <= 2 s.
// Every write through a survivor must answer 200 (map writes are retried on the promoted owner);
// a failed one is reported and makes the exit status 1. Missing a target is reported, not an error.
//
//   npm run build && node --import tsx scripts/bench/failover.ts [--entries N] [--writers N] [--seed N]
//
// The last line is JSON: {"bench":"failover",...}.
import { performance } from 'node:perf_hooks';
import { clusterOf, forEachConcurrent, freePorts, KeepAliveClient, killAll, startClusterMember, waitSettled } from '../../tests/harness/cluster.js';
import type { MemberProcess } from '../../tests/harness/member-process.js';
import { SeededRandom } from '../../src/util/prng.js';

const REMOVAL_TARGET_MS = 1000;
const LONGEST_WRITE_TARGET_MS = 2000;
const WARMUP_MS = 2000;
const AFTER_REMOVAL_MS = 3000;
const POLL_MS = 20;
const PRELOAD_IN_FLIGHT_PER_MEMBER = 64;
const PRELOAD_BATCH = 1000;
const MAP = 'failover';

interface Options {
  entries: number;
  writers: number;
  seed: number;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { entries: 1_000_000, writers: 8, seed: 1 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = Number(argv[++i]);
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${flag} takes a positive integer`);
    if (flag === '--entries') o.entries = value;
    else if (flag === '--writers') o.writers = value;
    else if (flag === '--seed') o.seed = value;
    else throw new Error(`unknown flag ${flag} (--entries, --writers, --seed)`);
  }
  return o;
}

const keyOf = (i: number): string => `e-${i}`;
const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function preload(ports: readonly number[], entries: number): Promise<void> {
  const clients = ports.flatMap((p) => Array.from({ length: PRELOAD_IN_FLIGHT_PER_MEMBER }, () => new KeepAliveClient(p)));
  const batches = Array.from({ length: Math.ceil(entries / PRELOAD_BATCH) }, (_, b) => b);
  let done = 0;
  await forEachConcurrent(batches, clients.length, async (b, w) => {
    const c = clients[w] as KeepAliveClient;
    const end = Math.min(entries, (b + 1) * PRELOAD_BATCH);
    for (let i = b * PRELOAD_BATCH; i < end; i++) {
      const r = await c.request('POST', `/grid/rest/maps/${MAP}/${keyOf(i)}`, { body: `v0-${i}`, headers: { 'Content-Type': 'text/plain' } });
      if (r.status !== 200) throw new Error(`preload of ${keyOf(i)} answered ${r.status}`);
    }
    done += end - b * PRELOAD_BATCH;
    if (b % 100 === 0) say(`  preloaded ${done}/${entries}`);
  });
  for (const c of clients) c.close();
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const ports = await freePorts(3);
  const members: MemberProcess[] = [];
  try {
    for (const p of ports) members.push(await startClusterMember(p, ports, { maps: { [MAP]: { backupCount: 1 } } }));
    await waitSettled(ports, 3, 60_000);
    const master = (await clusterOf(ports[0] as number)).members[0]?.address;
    const victimIndex = (ports.findIndex((p) => `[127.0.0.1]:${p}` === master) + 1) % 3;
    const victim = members[victimIndex] as MemberProcess;
    const survivors = ports.filter((_, i) => i !== victimIndex);
    say(`failover: 3 members, ${o.entries} entries, ${o.writers} writers through ${survivors.join(', ')}; victim ${victim.port}`);
    const t0 = performance.now();
    await preload(ports, o.entries);
    say(`  preload ${Math.round(performance.now() - t0)} ms`);

    // Writers through the survivors; each write timed.
    const writes: { sentMs: number; doneMs: number; status: number }[] = [];
    let stopping = false;
    const loops = Array.from({ length: o.writers }, async (_, w) => {
      const rnd = new SeededRandom(o.seed * 1000 + w);
      const clients = survivors.map((p) => new KeepAliveClient(p, 30_000));
      for (let n = 1; !stopping; n++) {
        const c = clients[n % clients.length] as KeepAliveClient;
        const i = rnd.nextInt(o.entries);
        const sentMs = performance.now();
        let status = 0;
        try {
          status = (await c.request('POST', `/grid/rest/maps/${MAP}/${keyOf(i)}`, { body: `v${w}-${n}`, headers: { 'Content-Type': 'text/plain' } })).status;
        } catch {
          status = 0;
        }
        writes.push({ sentMs, doneMs: performance.now(), status });
      }
      for (const c of clients) c.close();
    });
    await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
    const before = writes.filter((x) => x.status === 200).map((x) => x.doneMs - x.sentMs);
    const survivorMembers = members.filter((_, i) => i !== victimIndex);
    const logFrom = survivorMembers.map((m) => m.stdout().length);
    const killMs = performance.now();
    const killWall = new Date().toISOString();
    victim.child.kill('SIGKILL');
    // Polled every POLL_MS: the harness's until() steps 100 ms, too coarse for a 1 s target.
    for (;;) {
      const views = await Promise.all(survivors.map((p) => clusterOf(p)));
      if (views.every((v) => v.members.length === 2)) break;
      if (performance.now() - killMs > 60_000) throw new Error('the survivors did not drop the killed member within 60 s');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const removalMs = performance.now() - killMs;
    await new Promise((resolve) => setTimeout(resolve, AFTER_REMOVAL_MS));
    stopping = true;
    await Promise.all(loops);
    const across = writes.filter((x) => x.doneMs >= killMs);
    const longestMs = Math.max(0, ...across.map((x) => x.doneMs - x.sentMs));
    const failed = across.filter((x) => x.status !== 200).length;
    const beforeMax = Math.max(0, ...before);
    const r = (x: number): number => Math.round(x);
    say(`  removal ${r(removalMs)} ms (target <= ${REMOVAL_TARGET_MS}) ${removalMs <= REMOVAL_TARGET_MS ? 'ok' : 'OVER TARGET'}`);
    say(`  longest write across the kill ${r(longestMs)} ms (target <= ${LONGEST_WRITE_TARGET_MS}) ${longestMs <= LONGEST_WRITE_TARGET_MS ? 'ok' : 'OVER TARGET'}; before the kill ${r(beforeMax)} ms`);
    say(`  writes after the kill: ${across.length}, failed ${failed}`);
    // How the survivors came to remove it (their log lines since the kill), so a slow removal can be
    // read afterwards: which detector fired, after how many refused dials, and when.
    say(`  killed at ${killWall}; the survivors' log lines about it:`);
    survivorMembers.forEach((m, i) => {
      const lines = m
        .stdout()
        .slice(logFrom[i] as number)
        .split('\n')
        .filter((l) => /suspect|remov|refus|claim|left the cluster|master/i.test(l))
        .slice(0, 12);
      for (const l of lines) say(`    ${m.port}: ${l.length > 300 ? `${l.slice(0, 300)}…` : l}`);
    });
    say(JSON.stringify({ bench: 'failover', members: 3, entries: o.entries, writers: o.writers, removalMs: r(removalMs), longestWriteMs: r(longestMs), longestWriteBeforeKillMs: r(beforeMax), writesAfterKill: across.length, failedAfterKill: failed, removalTargetMs: REMOVAL_TARGET_MS, longestWriteTargetMs: LONGEST_WRITE_TARGET_MS }));
    process.exitCode = failed > 0 ? 1 : 0;
  } finally {
    await killAll(members);
  }
}

await main();
