// The CP benchmark of issue #30 (part 7): locks, and writes that survive a crash.
//
// - FencedLock lock/unlock pairs per second on 3 members (no CP persistence): through the official
//   Node client (32 loops, each on its own lock, every lock call a new owner as that client makes
//   them) and over REST (32 keep-alive loops through the leader's member, each with its own
//   session and lock: POST …/lock then POST …/unlock with the fence).
// - Durable writes: 3 members with CP persistence (every batch fsynced before it is acknowledged;
//   base-dir on the machine's disk) against etcd 3.4 with its data on the same disk (etcd always
//   fsyncs), in the same run, both with wrk (1 thread, 32 connections): AtomicLong incrementAndGet
//   against `POST /v3/kv/put`. Rounds alternate; medians compared. Target (issue #30): Grid's
//   durable writes/s ≥ 1.5 × etcd's puts/s. Missing it is reported, not an error.
//
//   npm run build && node --import tsx scripts/bench/cp-durable.ts [--rounds N] [--seconds S]
//
// The last line is JSON: {"bench":"cp-durable",...}.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import os from 'node:os';
import { freePorts, killAll as killMembers, startClusterMembers, until, waitSettled } from '../../tests/harness/cluster.js';
import type { MemberProcess } from '../../tests/harness/member-process.js';
import { delay, host, killAll as killTracked, median, round, say, track } from './common.js';
import { ensureWrk, findOnPath, runWrk, type WrkResult } from './wrk.js';
import { startEtcd, stopEtcd, type Etcd } from './etcd.js';

const CONNECTIONS = 32;
const DURABLE_TARGET = 1.5;
const CP_XML = '<cp-member-count>3</cp-member-count>';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
  return v;
}

async function cpLeader(ports: readonly number[]): Promise<number> {
  return until('CP discovery and a default leader', 60_000, async () => {
    const inc = await fetch(`http://127.0.0.1:${ports[0]}/grid/rest/cp/atomiclongs/bench/incrementAndGet`, { method: 'POST' });
    await inc.arrayBuffer();
    if (inc.status !== 200) return null;
    const g = (await (await fetch(`http://127.0.0.1:${ports[0]}/grid/rest/cp-subsystem/groups/default`)).json()) as { leader: { address: string } | null };
    return g.leader === null ? null : Number(g.leader.address.split(':').pop());
  });
}

/** One keep-alive POST; status and body. */
function post(agent: http.Agent, port: number, urlPath: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path: urlPath, method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** REST lock/unlock pairs: each loop its own session and lock. Pairs per second and p99 of a pair (ms). */
async function restLocks(port: number, seconds: number): Promise<{ rps: number; p99Ms: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, i) => {
        const s = await post(agent, port, '/grid/rest/cp/sessions/default', '');
        if (s.status !== 201) throw new Error(`session: ${s.status} ${s.text}`);
        const session = (JSON.parse(s.text) as { sessionId: number }).sessionId;
        while (performance.now() < end) {
          const t = performance.now();
          const l = await post(agent, port, `/grid/rest/cp/locks/bench-${i}/lock`, `${session}`);
          if (l.status !== 200) throw new Error(`lock: ${l.status} ${l.text}`);
          const fence = (JSON.parse(l.text) as { fence: number }).fence;
          const u = await post(agent, port, `/grid/rest/cp/locks/bench-${i}/unlock`, `${session}&${fence}`);
          if (u.status !== 200) throw new Error(`unlock: ${u.status} ${u.text}`);
          latencies.push(performance.now() - t);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    return { rps: latencies.length / seconds, p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
  } finally {
    agent.destroy();
  }
}

interface HzLock {
  lock(): Promise<unknown>;
  unlock(fence: unknown): Promise<void>;
}
interface HzClient {
  getCPSubsystem(): { getLock(name: string): Promise<HzLock> };
  shutdown(): Promise<void>;
}

/** Node client lock/unlock pairs, each loop on its own lock. */
async function clientLocks(ports: readonly number[], seconds: number): Promise<{ rps: number; p99Ms: number }> {
  const hz = createRequire(import.meta.url)('hazelcast-client') as { Client: { newHazelcastClient(c: unknown): Promise<HzClient> } };
  const client = await hz.Client.newHazelcastClient({ clusterName: 'dev', network: { clusterMembers: ports.map((p) => `127.0.0.1:${p}`) }, properties: { 'hazelcast.logging.level': 'OFF' } });
  try {
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, i) => {
        const lock = await client.getCPSubsystem().getLock(`client-${i}`);
        while (performance.now() < end) {
          const t = performance.now();
          const fence = await lock.lock();
          await lock.unlock(fence);
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

async function wrk(wrkPath: string, dir: string, port: number, urlPath: string, body: string | null, seconds: number): Promise<WrkResult> {
  const script = path.join(dir, `s-${port}-${urlPath.replace(/\W/g, '_')}.lua`);
  writeFileSync(script, `wrk.method = "POST"\nwrk.path = "${urlPath}"\n${body === null ? '' : `wrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`}`);
  return runWrk({ wrkPath, scriptPath: script, host, port, threads: 1, connections: CONNECTIONS, durationS: seconds, timeoutS: 10 }, track);
}

async function main(): Promise<number> {
  const rounds = option('--rounds', 3);
  const seconds = option('--seconds', 10);
  const wrkPath = ensureWrk((l) => say(`cp-durable: ${l}`));
  if (wrkPath === null) throw new Error('cp-durable: wrk is needed');
  // The CP bench (cp.ts) installs etcd when it is missing and it can.
  const etcdPath = findOnPath('etcd');
  // On the machine's disk, not tmpfs: both sides fsync for real.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grid-bench-cp-durable-'));
  let members: MemberProcess[] = [];
  let etcd: Etcd | null = null;
  const failures: string[] = [];
  try {
    // Locks, on members without CP persistence.
    const ports = await freePorts(3);
    members = await startClusterMembers(ports, { cpXml: CP_XML });
    await waitSettled(ports, 3, 60_000);
    const leader = await cpLeader(ports);
    await restLocks(leader, 2); // warm-up
    const restLock = await restLocks(leader, seconds);
    say(`cp-durable: REST lock/unlock pairs through the leader's member  ${round(restLock.rps, 0)}/s  p99 ${restLock.p99Ms.toFixed(2)} ms`);
    const clientLock = await clientLocks(ports, seconds);
    say(`cp-durable: Node client lock/unlock pairs                       ${round(clientLock.rps, 0)}/s  p99 ${clientLock.p99Ms.toFixed(2)} ms`);
    await killMembers(members);
    members = [];

    // Durable writes: CP persistence against etcd with fsync, both on this disk.
    const dports = await freePorts(3);
    members = await startClusterMembers(dports, { cpXml: `${CP_XML}<persistence-enabled>true</persistence-enabled><base-dir>${path.join(dir, 'grid')}</base-dir>` });
    await waitSettled(dports, 3, 60_000);
    const dleader = await cpLeader(dports);
    say(`cp-durable: Grid with CP persistence under ${path.join(dir, 'grid')}, default leader on ${dleader}`);
    if (etcdPath === null) say('cp-durable: etcd is not installed: Grid figures only');
    else {
      etcd = await startEtcd(etcdPath, path.join(dir, 'etcd'));
      say(`cp-durable: etcd 3.4 leader on ${etcd.leaderPort} (data under ${etcd.dir}, fsync on)`);
    }
    const inc = '/grid/rest/cp/atomiclongs/bench/incrementAndGet';
    const put = ['/v3/kv/put', '{"key":"YmVuY2g=","value":"MQ=="}'] as const;
    await wrk(wrkPath, dir, dleader, inc, null, 3);
    if (etcd !== null) await wrk(wrkPath, dir, etcd.leaderPort, put[0], put[1], 3);
    const grid: WrkResult[] = [];
    const et: WrkResult[] = [];
    for (let r = 0; r < rounds; r++) {
      const g = await wrk(wrkPath, dir, dleader, inc, null, seconds);
      grid.push(g);
      say(`cp-durable: round ${r + 1}: Grid durable writes ${round(g.rps, 0)}/s p99 ${g.p99Ms.toFixed(2)} ms`);
      if (g.non2xx > 0 || g.errors > 0) failures.push(`grid durable writes: ${g.non2xx} non-2xx, ${g.errors} errors (${g.firstError ?? ''})`);
      if (etcd !== null) {
        const e = await wrk(wrkPath, dir, etcd.leaderPort, put[0], put[1], seconds);
        et.push(e);
        say(`cp-durable: round ${r + 1}: etcd puts (fsync)     ${round(e.rps, 0)}/s p99 ${e.p99Ms.toFixed(2)} ms`);
        if (e.non2xx > 0 || e.errors > 0) failures.push(`etcd puts: ${e.non2xx} non-2xx, ${e.errors} errors (${e.firstError ?? ''})`);
      }
      await delay(300);
    }
    const gridRps = median(grid.map((x) => x.rps));
    const etcdRps = et.length === 0 ? null : median(et.map((x) => x.rps));
    const ratio = etcdRps === null ? null : gridRps / etcdRps;
    const gridP99 = median(grid.map((x) => x.p99Ms));
    const etcdP99 = et.length === 0 ? null : median(et.map((x) => x.p99Ms));
    if (ratio !== null) say(`cp-durable: durable writes ${ratio.toFixed(2)}× etcd's fsynced puts (target ${DURABLE_TARGET}×), p99 ${gridP99.toFixed(2)} vs ${(etcdP99 ?? 0).toFixed(2)} ms: ${ratio >= DURABLE_TARGET ? 'met' : 'MISSED'}`);
    const summary = {
      bench: 'cp-durable',
      rounds,
      seconds,
      connections: CONNECTIONS,
      restLockPairs: round(restLock.rps, 0),
      restLockPairP99Ms: round(restLock.p99Ms, 2),
      clientLockPairs: round(clientLock.rps, 0),
      clientLockPairP99Ms: round(clientLock.p99Ms, 2),
      gridDurableWrites: round(gridRps, 0),
      gridDurableWriteP99Ms: round(gridP99, 2),
      etcdFsyncPuts: etcdRps === null ? null : round(etcdRps, 0),
      etcdFsyncPutP99Ms: etcdP99 === null ? null : round(etcdP99, 2),
      durableRatio: ratio === null ? null : round(ratio, 2),
      durableTarget: DURABLE_TARGET,
      durableTargetMet: ratio !== null && ratio >= DURABLE_TARGET,
      failures,
    };
    process.stdout.write(JSON.stringify(summary) + '\n');
    return failures.length === 0 ? 0 : 1;
  } finally {
    await killMembers(members);
    killTracked('SIGKILL');
    if (etcd !== null) {
      await stopEtcd(etcd);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`cp-durable bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
