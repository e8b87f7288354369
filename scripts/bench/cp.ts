// The CP benchmark (issue #29, part 8): linearizable writes and reads of Grid's CP subsystem against
// etcd 3.4 in the same run, on the same machine, under the same load generator.
//
// - Grid: 3 members with cp-member-count 3 (no CP persistence); AtomicLong `incrementAndGet`
//   (POST /grid/rest/cp/atomiclongs/bench/incrementAndGet) and `get` (GET …/bench), wrk with one
//   thread and 32 connections, through the member of the `default` group's leader and through
//   another member; then the official Node client (32 calls in flight) through the cluster.
// - etcd 3.4 (Debian's etcd-server, installed with apt-get when missing and we are root): 3 members
//   on loopback with their data directories on tmpfs (/dev/shm: etcd always fsyncs, Grid's CP runs
//   without persistence here), wrk on its JSON gateway through the leader: `POST /v3/kv/put` and
//   linearizable `POST /v3/kv/range`.
// Runs alternate (Grid, etcd, Grid, …) for `--rounds` rounds; the medians are compared. Targets
// (issue #29): Grid's writes/s ≥ 2.5 × etcd's puts/s, reads/s ≥ 3 × etcd's ranges/s, p99 no
// worse. Missing a target is reported, not an error; a run with non-2xx answers or errors fails.
//
//   npm run build && node --import tsx scripts/bench/cp.ts [--rounds N] [--seconds S]
//
// The last line is JSON: {"bench":"cp",...}.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePorts, killAll as killMembers, startClusterMembers, until, waitSettled } from '../../tests/harness/cluster.js';
import type { MemberProcess } from '../../tests/harness/member-process.js';
import { delay, host, killAll as killTracked, median, round, say, track } from './common.js';
import { ensureWrk, runWrk, type WrkResult } from './wrk.js';
import { ensureEtcd, startEtcd, stopEtcd, type Etcd } from './etcd.js';

const CONNECTIONS = 32;
const WRITE_TARGET = 2.5;
const READ_TARGET = 3;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
  return v;
}

/** One wrk run against a fixed method, path and body. */
async function wrk(wrkPath: string, dir: string, port: number, method: string, urlPath: string, body: string | null, seconds: number): Promise<WrkResult> {
  const script = path.join(dir, `s-${method}-${port}-${urlPath.replace(/\W/g, '_')}.lua`);
  writeFileSync(script, `wrk.method = "${method}"\nwrk.path = "${urlPath}"\n${body === null ? '' : `wrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`}`);
  return runWrk({ wrkPath, scriptPath: script, host, port, threads: 1, connections: CONNECTIONS, durationS: seconds, timeoutS: 10 }, track);
}

interface HzClient {
  getCPSubsystem(): { getAtomicLong(name: string): Promise<{ incrementAndGet(): Promise<unknown>; get(): Promise<unknown> }> };
  shutdown(): Promise<void>;
}

/** The Node client: `inFlight` loops for `seconds`; calls per second and p99 (ms). */
async function clientRun(ports: readonly number[], op: 'incrementAndGet' | 'get', seconds: number): Promise<{ rps: number; p99Ms: number }> {
  const hz = createRequire(import.meta.url)('hazelcast-client') as { Client: { newHazelcastClient(c: unknown): Promise<HzClient> } };
  const client = await hz.Client.newHazelcastClient({ clusterName: 'dev', network: { clusterMembers: ports.map((p) => `127.0.0.1:${p}`) }, properties: { 'hazelcast.logging.level': 'OFF' } });
  try {
    const counter = await client.getCPSubsystem().getAtomicLong('bench');
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          await counter[op]();
          latencies.push(performance.now() - t);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    return { rps: latencies.length / seconds, p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
  } finally {
    await client.shutdown();
  }
}

async function main(): Promise<number> {
  const rounds = option('--rounds', 3);
  const seconds = option('--seconds', 10);
  const wrkPath = ensureWrk((l) => say(`cp: ${l}`));
  if (wrkPath === null) throw new Error('cp: wrk is needed');
  const etcdPath = ensureEtcd();
  const dir = mkdtempSync(path.join('/tmp', 'grid-bench-cp-'));
  let members: MemberProcess[] = [];
  let etcd: Etcd | null = null;
  const failures: string[] = [];
  try {
    const ports = await freePorts(3);
    members = await startClusterMembers(ports, { cpXml: '<cp-member-count>3</cp-member-count>' });
    await waitSettled(ports, 3, 60_000);
    const leader = await until('CP discovery and a default leader', 60_000, async () => {
      const inc = await fetch(`http://127.0.0.1:${ports[0]}/grid/rest/cp/atomiclongs/bench/incrementAndGet`, { method: 'POST' });
      await inc.arrayBuffer();
      if (inc.status !== 200) return null;
      const g = (await (await fetch(`http://127.0.0.1:${ports[0]}/grid/rest/cp-subsystem/groups/default`)).json()) as { leader: { address: string } | null };
      return g.leader === null ? null : Number(g.leader.address.split(':').pop());
    });
    const other = ports.find((p) => p !== leader) as number;
    say(`cp: Grid default leader on ${leader}, another member ${other}`);
    if (etcdPath === null) say('cp: etcd is not installed and cannot be (not root with apt-get): Grid figures only');
    else {
      etcd = await startEtcd(etcdPath, mkdtempSync('/dev/shm/grid-bench-etcd-'));
      say(`cp: etcd 3.4 leader on ${etcd.leaderPort} (data on tmpfs ${etcd.dir})`);
    }
    const runs: Record<string, WrkResult[]> = {};
    const add = (name: string, r: WrkResult): void => {
      (runs[name] ??= []).push(r);
      if (r.non2xx > 0 || r.errors > 0) failures.push(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors (${r.firstError ?? ''})`);
      say(`cp: ${name.padEnd(24)} ${round(r.rps, 0).toString().padStart(8)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms`);
    };
    const inc = '/grid/rest/cp/atomiclongs/bench/incrementAndGet';
    const get = '/grid/rest/cp/atomiclongs/bench';
    // Warm-up.
    await wrk(wrkPath, dir, leader, 'POST', inc, null, 3);
    if (etcd !== null) await wrk(wrkPath, dir, etcd.leaderPort, 'POST', '/v3/kv/put', '{"key":"YmVuY2g=","value":"MQ=="}', 3);
    for (let r = 0; r < rounds; r++) {
      say(`cp: round ${r + 1} of ${rounds}`);
      add('grid write via leader', await wrk(wrkPath, dir, leader, 'POST', inc, null, seconds));
      if (etcd !== null) add('etcd put', await wrk(wrkPath, dir, etcd.leaderPort, 'POST', '/v3/kv/put', '{"key":"YmVuY2g=","value":"MQ=="}', seconds));
      add('grid read via leader', await wrk(wrkPath, dir, leader, 'GET', get, null, seconds));
      if (etcd !== null) add('etcd range', await wrk(wrkPath, dir, etcd.leaderPort, 'POST', '/v3/kv/range', '{"key":"YmVuY2g="}', seconds));
      add('grid write via other', await wrk(wrkPath, dir, other, 'POST', inc, null, seconds));
      add('grid read via other', await wrk(wrkPath, dir, other, 'GET', get, null, seconds));
      await delay(500);
    }
    const clientWrite = await clientRun(ports, 'incrementAndGet', seconds);
    const clientRead = await clientRun(ports, 'get', seconds);
    say(`cp: Node client incrementAndGet ${round(clientWrite.rps, 0)}/s p99 ${clientWrite.p99Ms.toFixed(2)} ms; get ${round(clientRead.rps, 0)}/s p99 ${clientRead.p99Ms.toFixed(2)} ms`);
    const med = (name: string, f: (r: WrkResult) => number): number => median((runs[name] ?? []).map(f));
    const rps = (n: string): number => med(n, (r) => r.rps);
    const p99 = (n: string): number => med(n, (r) => r.p99Ms);
    const writeRatio = etcd === null ? null : rps('grid write via leader') / rps('etcd put');
    const readRatio = etcd === null ? null : rps('grid read via leader') / rps('etcd range');
    // Each round's own ratio too: Grid and etcd ran back to back, so a slow moment of the machine hits both.
    const roundRatio = (a: string, b: string): number | null => (etcd === null ? null : median((runs[a] ?? []).map((r, i) => r.rps / ((runs[b] ?? [])[i]?.rps ?? Infinity))));
    const writeRoundRatio = roundRatio('grid write via leader', 'etcd put');
    const readRoundRatio = roundRatio('grid read via leader', 'etcd range');
    const summary = {
      bench: 'cp',
      rounds,
      seconds,
      connections: CONNECTIONS,
      gridWriteLeader: round(rps('grid write via leader'), 0),
      gridWriteOther: round(rps('grid write via other'), 0),
      gridReadLeader: round(rps('grid read via leader'), 0),
      gridReadOther: round(rps('grid read via other'), 0),
      gridWriteP99Ms: round(p99('grid write via leader'), 2),
      gridReadP99Ms: round(p99('grid read via leader'), 2),
      clientWrite: round(clientWrite.rps, 0),
      clientRead: round(clientRead.rps, 0),
      etcdPut: etcd === null ? null : round(rps('etcd put'), 0),
      etcdRange: etcd === null ? null : round(rps('etcd range'), 0),
      etcdPutP99Ms: etcd === null ? null : round(p99('etcd put'), 2),
      etcdRangeP99Ms: etcd === null ? null : round(p99('etcd range'), 2),
      writeRatio: writeRatio === null ? null : round(writeRatio, 2),
      readRatio: readRatio === null ? null : round(readRatio, 2),
      writeRoundRatio: writeRoundRatio === null ? null : round(writeRoundRatio, 2),
      readRoundRatio: readRoundRatio === null ? null : round(readRoundRatio, 2),
      writeTarget: WRITE_TARGET,
      readTarget: READ_TARGET,
      writeTargetMet: writeRatio !== null && writeRatio >= WRITE_TARGET && p99('grid write via leader') <= p99('etcd put'),
      readTargetMet: readRatio !== null && readRatio >= READ_TARGET && p99('grid read via leader') <= p99('etcd range'),
      failures,
    };
    if (writeRatio !== null && readRatio !== null) {
      say(`cp: per-round ratios (median): writes ${writeRoundRatio?.toFixed(2)}×, reads ${readRoundRatio?.toFixed(2)}×`);
      say(`cp: writes ${writeRatio.toFixed(2)}× etcd's puts (target ${WRITE_TARGET}×), p99 ${p99('grid write via leader').toFixed(2)} vs ${p99('etcd put').toFixed(2)} ms: ${summary.writeTargetMet ? 'met' : 'MISSED'}`);
      say(`cp: reads ${readRatio.toFixed(2)}× etcd's ranges (target ${READ_TARGET}×), p99 ${p99('grid read via leader').toFixed(2)} vs ${p99('etcd range').toFixed(2)} ms: ${summary.readTargetMet ? 'met' : 'MISSED'}`);
    }
    process.stdout.write(JSON.stringify(summary) + '\n');
    return failures.length === 0 ? 0 : 1;
  } finally {
    await killMembers(members);
    killTracked('SIGKILL');
    if (etcd !== null) {
      await stopEtcd(etcd);
      rmSync(etcd.dir, { recursive: true, force: true });
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`cp bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
