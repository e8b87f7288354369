// What the web console costs the cluster it shows (spec/console.md "Cost"): 3 members, map GETs of
// 10,000 preloaded keys through the first one with wrk, in alternating rounds with the console
// closed and open. "Open" is a page on every member at a 2 s refresh: the requests a page makes,
// replayed by this process on keep-alive connections with X-Grid-Console: 1 (the cluster screen,
// the default: one cluster view per refresh; the charts screen, the heaviest: 11 metric histories
// (the points after the last the page holds), the cluster view and the timeline). The browser's own rendering runs on the operator's machine,
// not on the members', so it is not replayed. Targets: GET throughput falls by less than 2 %, and
// the members' event-loop delay p99 rises by less than 1 ms.
//
// On 2 shared cores the throughput of one round moves by 10-20 % from round to round, more than
// the console can cost; so the benchmark also measures the cost directly: the members' CPU time
// (from /proc) over 30 s without load, with the console closed and open. That share of a core is
// the most an open console can take from the GET throughput of a CPU-bound member.
//
//   node --import tsx scripts/bench/console.ts [--rounds 3] [--duration 10]
import http from 'node:http';
import { HISTORY_SERIES } from '../../src/console/metrics-history.js';
import { clusterMembers, startCluster, type Cluster } from './cluster.js';
import { cpuTicks, delay, host, httpGet, median, round, say, track } from './common.js';
import { ensureWrk, runWrk, WrkScripts, type WrkResult } from './wrk.js';

const KEYS = 10_000;
const VALUE_BYTES = 100;
const REFRESH_MS = 2000;
const CONNECTIONS = 32;
const THREADS = 2;


/** The requests one refresh of a screen makes (src/console/ui/screens/); the charts page asks for the points after those it holds. */
const SCREEN_REQUESTS: Readonly<Record<string, () => readonly string[]>> = {
  cluster: () => ['/grid/rest/cluster/view'],
  charts: () => ['/grid/rest/cluster/view', '/grid/rest/events?limit=200', ...HISTORY_SERIES.map((s) => `/grid/rest/metrics/history?series=${s}&since=${Date.now() - REFRESH_MS - 1000}`)],
};

export interface ConsoleBenchRound {
  readonly round: number;
  readonly screen: string | null;
  readonly rps: number;
  readonly p99Ms: number;
  /** The largest event-loop delay p99 of the three members (ms) at the end of the round. */
  readonly eventLoopP99Ms: number;
  readonly pageRequests: number;
}

export interface IdleCost {
  readonly screen: string | null;
  /** CPU time the 3 members used per second of the window, in ms (1000 = one core). */
  readonly membersCpuMsPerS: number;
  readonly pageRequests: number;
}

export interface ConsoleBenchResult {
  readonly idle: readonly IdleCost[];
  readonly rounds: readonly ConsoleBenchRound[];
  /** Median over rounds, per screen (null: closed); `ratio`: the median of each round's GET/s open over closed. */
  readonly summary: readonly { readonly screen: string | null; readonly rps: number; readonly ratio: number; readonly eventLoopP99Ms: number; readonly pageRequestsPerS: number }[];
}

/** Every member polled as a page on `screen` would, until stopped; counts the requests made. */
function openPages(cluster: Cluster, screen: string): { stop: () => Promise<number> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let stopped = false;
  let made = 0;
  const loops = cluster.members.map(async (m) => {
    while (!stopped) {
      const started = Date.now();
      await Promise.all(
        (SCREEN_REQUESTS[screen]?.() ?? []).map(
          (p) =>
            new Promise<void>((resolve) => {
              const r = http.get({ host, port: m.port, path: p, agent, headers: { 'x-grid-console': '1' } }, (res) => {
                res.resume();
                res.on('end', () => resolve());
              });
              r.on('error', () => resolve());
              made++;
            }),
        ),
      );
      await delay(Math.max(0, REFRESH_MS - (Date.now() - started)));
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
      return made;
    },
  };
}

async function eventLoopP99Ms(cluster: Cluster): Promise<number> {
  let worst = 0;
  for (const m of cluster.members) {
    const a = await httpGet(m.port, '/grid/rest/metrics', 5000);
    const v = (JSON.parse(a.body.toString('utf8')) as { eventLoopDelayP99Seconds?: number }).eventLoopDelayP99Seconds ?? 0;
    worst = Math.max(worst, v * 1000);
  }
  return worst;
}

async function preload(port: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const value = 'v'.repeat(VALUE_BYTES);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < KEYS) {
      const k = next++;
      await new Promise<void>((resolve, reject) => {
        const r = http.request({ host, port, path: `/grid/rest/maps/bench/k${k}`, method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': VALUE_BYTES } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`preload: ${res.statusCode}`))));
        });
        r.on('error', reject);
        r.end(value);
      });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  agent.destroy();
}

const IDLE_WINDOW_S = 30;

/** The members' CPU time over a window without load, console closed or open on `screen`. */
async function idleCost(cluster: Cluster, screen: string | null): Promise<IdleCost> {
  const ticks = (): number => cluster.members.reduce((sum, m) => sum + (cpuTicks(m.child.pid ?? 0) ?? 0), 0);
  const pages = screen === null ? null : openPages(cluster, screen);
  await delay(2000);
  const t0 = ticks();
  const started = Date.now();
  await delay(IDLE_WINDOW_S * 1000);
  const used = ticks() - t0;
  const seconds = (Date.now() - started) / 1000;
  const made = pages === null ? 0 : await pages.stop();
  // A tick is 10 ms of CPU.
  return { screen, membersCpuMsPerS: round((used * 10) / seconds, 1), pageRequests: made };
}

export async function runConsoleBench(rounds: number, durationS: number, verbose: boolean): Promise<ConsoleBenchResult> {
  const wrkPath = ensureWrk(say);
  if (wrkPath === null) throw new Error('the console benchmark needs wrk (apt-get install wrk)');
  const cluster = await startCluster(clusterMembers, 'console-', verbose);
  const scripts = WrkScripts.create(KEYS, VALUE_BYTES, 42);
  const out: ConsoleBenchRound[] = [];
  const idle: IdleCost[] = [];
  try {
    const target = cluster.members[0]?.port as number;
    await preload(target);
    for (const screen of [null, 'cluster', 'charts', null] as const) {
      const c = await idleCost(cluster, screen);
      idle.push(c);
      say(`console idle cost, ${screen === null ? 'console closed' : `a ${screen} page on every member`}: the 3 members used ${c.membersCpuMsPerS} ms of CPU per second${c.pageRequests > 0 ? ` (${c.pageRequests} page requests)` : ''}`);
    }
    // Warm-up, not counted.
    await runWrk({ wrkPath, scriptPath: scripts.getPath, host, port: target, threads: THREADS, connections: CONNECTIONS, durationS: 3, timeoutS: 5 }, track);
    for (let r = 0; r < rounds; r++) {
      // Each round measures the three states back to back, in an order that rotates from round to
      // round, so that drift (the machine warming, other processes) falls on each state alike.
      const states = [null, 'cluster', 'charts'] as const;
      const order = [0, 1, 2].map((i) => states[(i + r) % 3] as (typeof states)[number]);
      for (const screen of order) {
        const pages = screen === null ? null : openPages(cluster, screen);
        // Let the pages' first refreshes and the members' 10 s delay window see the new load.
        await delay(screen === null ? 0 : 1000);
        const w: WrkResult = await runWrk({ wrkPath, scriptPath: scripts.getPath, host, port: target, threads: THREADS, connections: CONNECTIONS, durationS, timeoutS: 5 }, track);
        const eld = await eventLoopP99Ms(cluster);
        const made = pages === null ? 0 : await pages.stop();
        if (w.non2xx > 0 || w.errors > 0) throw new Error(`round ${r + 1} (${screen ?? 'closed'}): ${w.non2xx} non-2xx, ${w.errors} errors (${w.firstError ?? ''})`);
        out.push({ round: r, screen, rps: Math.round(w.rps), p99Ms: round(w.p99Ms, 2), eventLoopP99Ms: round(eld, 2), pageRequests: made });
        say(`console round ${r + 1}, ${screen === null ? 'console closed' : `a ${screen} page on every member`}: ${Math.round(w.rps)} GET/s, p99 ${round(w.p99Ms, 2)} ms, members' event-loop p99 ≤ ${round(eld, 2)} ms${made > 0 ? `, ${made} page requests` : ''}`);
        await delay(1000);
      }
    }
  } finally {
    scripts.dispose();
    await cluster.stop();
  }
  const summary = ([null, 'cluster', 'charts'] as const).map((screen) => {
    const rs = out.filter((r) => r.screen === screen);
    const ratios = rs.map((r) => r.rps / (out.find((c) => c.round === r.round && c.screen === null)?.rps ?? r.rps));
    return { screen, rps: median(rs.map((r) => r.rps)), ratio: round(median(ratios), 3), eventLoopP99Ms: median(rs.map((r) => r.eventLoopP99Ms)), pageRequestsPerS: round(median(rs.map((r) => r.pageRequests)) / (durationS + 1), 1) };
  });
  return { idle, rounds: out, summary };
}

export function consoleSummary(r: ConsoleBenchResult): string[] {
  const closed = r.summary.find((s) => s.screen === null);
  if (closed === undefined) return [];
  const idleClosed = median(r.idle.filter((c) => c.screen === null).map((c) => c.membersCpuMsPerS));
  const idleLines = r.idle
    .filter((c) => c.screen !== null)
    .map((c) => `console open (${c.screen} screen on all ${clusterMembers} members): the members use ${round(c.membersCpuMsPerS - idleClosed, 1)} ms of CPU per second more than closed (${c.membersCpuMsPerS} vs ${idleClosed}), ${round((c.membersCpuMsPerS - idleClosed) / 10 / clusterMembers, 2)} % of a core per member`);
  return [...idleLines, ...r.summary
    .filter((s) => s.screen !== null)
    .map((s) => {
      const change = (s.ratio - 1) * 100;
      const eld = s.eventLoopP99Ms - closed.eventLoopP99Ms;
      return `console open (${s.screen} screen on all ${clusterMembers} members, ${REFRESH_MS / 1000} s refresh, ${s.pageRequestsPerS} requests/s): GET ${s.rps}/s vs ${closed.rps}/s closed (medians); the median of each round's open/closed ratio ${s.ratio} (${change >= 0 ? '+' : ''}${change.toFixed(1)} %, target > -2 %); event-loop p99 ${s.eventLoopP99Ms} ms vs ${closed.eventLoopP99Ms} ms (${eld >= 0 ? '+' : ''}${eld.toFixed(2)} ms, target < +1 ms)`;
    })];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const num = (flag: string, fallback: number): number => {
    const i = args.indexOf(flag);
    return i < 0 ? fallback : Number(args[i + 1]);
  };
  const result = await runConsoleBench(num('--rounds', 3), num('--duration', 10), args.includes('--verbose'));
  for (const line of consoleSummary(result)) say(line);
  console.log(JSON.stringify({ bench: 'console', ...result }));
}
