// The cluster benchmarks, run by run.ts:
//
// 1. cluster HTTP: `startCluster` starts 3 members (backup-count 1) that run.ts loads through the
//    first one, next to the bare server and the single member, in the same alternating rounds; with
//    271 partitions spread evenly, two thirds of the keys are owned elsewhere and every write waits
//    for one backup. run.ts prints the ratios (`clusterSummary`).
// 2. rebalance (`runRebalanceBench`): 3 members, `entries` entries preloaded through all three
//    (pipelined), then a steady GET+POST load on the first member while a fourth member starts. The
//    rebalance time runs from the fourth member's spawn until every one of the four answers
//    GET /grid/health with clusterSize 4, clusterSafe true and migrationQueueSize 0 (the same values
//    as /grid/health/cluster-safe and /grid/health/migration-queue-size). Failed requests of the load,
//    a read-back of a sample of keys through the new member and the entries held (owner + backup =
//    2 × entries) check that nothing was lost.
//
// Members are `node dist/member.js --config <tmp xml>` on ports taken from the OS first (bind to
// port 0, close, pass on), with an explicit tcp-ip member list, public-address 127.0.0.1, REST with
// DATA on, a cluster name unique to this run, and GRID_* variables removed from their environment.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  delay,
  host,
  httpGet,
  interrupted,
  median,
  memberEntry,
  round,
  say,
  startServer,
  stopServer,
  track,
  type Server,
} from './common.js';
import {
  entryValue,
  parseEntryValue,
  startLoadChild,
  type PreloadResult,
  type SteadyResult,
  type SteadyWrites,
} from './cluster-load.js';
import { makeRandom } from './loadgen.js';

// ---------------------------------------------------------------------------------------------
// Fixed shape of the cluster benchmarks (from the issue): change these only together with the README.

export const clusterMembers = 3;
export const clusterBackupCount = 1;
const memberStartDeadlineMs = 60_000;
const clusterFormDeadlineMs = 60_000;
const healthPollMs = 100;
const rebalanceTargetS = 30;
/** A rebalance that has not ended after this is a failure to run, not a slow measurement. */
const rebalanceDeadlineMs = 10 * 60 * 1000;
const rebalanceMap = 'rebalance';
const rebalanceValueBytes = 100;
const preloadConnectionsPerMember = 4;
const preloadPipeline = 64;
const preloadDeadlineMs = 20 * 60 * 1000;
const steadyGetConnections = 4;
const steadyPostConnections = 4;
const steadyRequestTimeoutMs = 10_000;
const steadyBeforeMs = 2000;
/** The load goes on this long after the rebalance, while cluster-safe is watched on every member. */
const steadyAfterMs = 3000;
const verifyRandomKeys = 10_000;
const verifyWrittenKeysMax = 2000;
const verifyConcurrency = 16;
/**
 * A member drops the data of a partition it no longer holds a replica of only some time after the
 * table says so (the hold timeout, 20 s), so the entries held reach owner + backups = 2 × entries
 * only then; waited for up to this long after the rebalance.
 */
const staleDropDeadlineMs = 60_000;
const seed = 42;
/** Node flags of the members (none needed: 1,000,000 entries fit in the default heap). */
const memberNodeArgs: readonly string[] = [];

// ---------------------------------------------------------------------------------------------
// Starting a cluster.

export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, resolve);
      });
      servers.push(server);
      ports.push((server.address() as net.AddressInfo).port);
    }
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
  return ports;
}

function memberXml(clusterName: string, port: number, peers: readonly number[]): string {
  return `<grid>
  <cluster-name>${clusterName}</cluster-name>
  <network>
    <public-address>${host}</public-address>
    <port auto-increment="false">${port}</port>
    <join><tcp-ip enabled="true"><member-list>${peers.map((p) => `<member>${host}:${p}</member>`).join('')}</member-list></tcp-ip></join>
    <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api>
  </network>
  <map name="default"><backup-count>${clusterBackupCount}</backup-count></map>
</grid>
`;
}

/** The runner's environment without GRID_* variables, so that the XML alone configures a member. */
function memberEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GRID_')) env[key] = value;
  return env;
}

/** A WARNING or SEVERE line a member logged, with when the runner saw it. */
export interface NotableLine {
  readonly member: string;
  readonly atMs: number;
  readonly line: string;
}

const notableKept = 2000;
const notablePattern = /\b(WARNING|SEVERE)\b/;

export class Cluster {
  readonly members: Server[] = [];
  /** WARNING and SEVERE lines of every member since it answered ready (the first 2000). */
  readonly notable: NotableLine[] = [];
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'grid-bench-cluster-'));

  constructor(
    readonly name: string,
    /** Every port the cluster may use; each member's join list holds them all. */
    readonly ports: readonly number[],
    private readonly labelPrefix: string,
    private readonly verbose: boolean,
  ) {}

  /** Starts the member on ports[index]; resolves once it answers /grid/health/ready (joined). */
  async startMember(index: number): Promise<Server> {
    const port = this.ports[index]!;
    const file = path.join(this.dir, `member-${index + 1}.xml`);
    writeFileSync(file, memberXml(this.name, port, this.ports));
    const server = await startServer(`${this.labelPrefix}${index + 1}`, [...memberNodeArgs, memberEntry, '--config', file], this.verbose, {
      env: memberEnv(),
      deadlineMs: memberStartDeadlineMs,
    });
    this.members.push(server);
    let partial = '';
    const onText = (text: string): void => {
      const parts = (partial + text).split('\n');
      partial = parts.pop() ?? '';
      if (partial.length > 64 * 1024) partial = '';
      for (const line of parts) {
        if (this.notable.length < notableKept && notablePattern.test(line)) this.notable.push({ member: server.label, atMs: Date.now(), line });
      }
    };
    server.child.stdout?.on('data', onText);
    server.child.stderr?.on('data', onText);
    return server;
  }

  /** Stops every member with SIGTERM; returns warnings. */
  async stop(): Promise<string[]> {
    // All at once: a member that is the last not leaving hands nothing off, so nobody copies data.
    const warnings = (await Promise.all(this.members.map((member) => stopServer(member)))).filter((w): w is string => w !== null);
    rmSync(this.dir, { recursive: true, force: true });
    return warnings;
  }

  /** Throws when a member died. */
  checkAlive(): void {
    for (const member of this.members) if (member.died !== null) throw new Error(member.died);
  }
}

/** Starts `count` members one after the other and waits until they form one safe cluster. */
export async function startCluster(count: number, labelPrefix: string, verbose: boolean, extraPorts = 0): Promise<Cluster> {
  const ports = await freePorts(count + extraPorts);
  const cluster = new Cluster(`bench-${process.pid}-${labelPrefix}`, ports, labelPrefix, verbose);
  try {
    for (let i = 0; i < count; i++) await cluster.startMember(i);
    await waitSettled(cluster, count, clusterFormDeadlineMs);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

interface Health {
  readonly clusterSafe: boolean;
  readonly migrationQueueSize: number;
  readonly clusterSize: number;
}

async function health(port: number): Promise<Health | null> {
  try {
    const answer = await httpGet(port, '/grid/health', 2000);
    if (answer.status !== 200) return null;
    return JSON.parse(answer.body.toString('utf8')) as Health;
  } catch {
    return null;
  }
}

function settled(h: Health | null, size: number): boolean {
  return h !== null && h.clusterSize === size && h.clusterSafe && h.migrationQueueSize === 0;
}

async function waitSettled(cluster: Cluster, size: number, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  let last: (Health | null)[] = [];
  while (Date.now() < end) {
    cluster.checkAlive();
    if (interrupted()) throw new Error('interrupted');
    last = await Promise.all(cluster.ports.slice(0, size).map((port) => health(port)));
    if (last.every((h) => settled(h, size))) return;
    await delay(healthPollMs);
  }
  throw new Error(`the cluster of ${size} did not become safe within ${deadlineMs} ms: ${JSON.stringify(last)}`);
}

// ---------------------------------------------------------------------------------------------
// Cluster HTTP summary (the runs themselves are run.ts's alternating rounds).

export interface ClusterRun {
  readonly rps: number;
  readonly p99Ms: number;
}

export interface ClusterWorkloadSummary {
  readonly clusterRps: number;
  readonly memberRps: number;
  readonly bareRps: number;
  readonly clusterToBare: number;
  readonly clusterToMember: number;
  readonly clusterP99Ms: number;
  readonly memberP99Ms: number;
  readonly bareP99Ms: number;
  readonly clusterRpsRounds: readonly number[];
  readonly non2xx: number;
  readonly errors: number;
}

export function clusterSummary(
  cluster: readonly ClusterRun[],
  member: readonly ClusterRun[],
  bare: readonly ClusterRun[],
  totals: { non2xx: number; errors: number },
): ClusterWorkloadSummary {
  const clusterRps = median(cluster.map((r) => r.rps));
  const memberRps = median(member.map((r) => r.rps));
  const bareRps = median(bare.map((r) => r.rps));
  return {
    clusterRps: Math.round(clusterRps),
    memberRps: Math.round(memberRps),
    bareRps: Math.round(bareRps),
    clusterToBare: round(bareRps > 0 ? clusterRps / bareRps : 0, 3),
    clusterToMember: round(memberRps > 0 ? clusterRps / memberRps : 0, 3),
    clusterP99Ms: round(median(cluster.map((r) => r.p99Ms)), 3),
    memberP99Ms: round(median(member.map((r) => r.p99Ms)), 3),
    bareP99Ms: round(median(bare.map((r) => r.p99Ms)), 3),
    clusterRpsRounds: cluster.map((r) => Math.round(r.rps)),
    non2xx: totals.non2xx,
    errors: totals.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// Rebalance.

export interface RebalanceOptions {
  readonly entries: number;
  /** Total GET+POST requests/s on the first member during the rebalance; 0 = unthrottled. */
  readonly loadRps: number;
  readonly verbose: boolean;
}

export interface BenchOutcome {
  readonly lines: string[];
  readonly failures: string[];
  readonly warnings: string[];
}

/** Resident set size of a process in bytes (Linux /proc), or null. */
function rssBytes(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

function mb(bytes: number | null): string {
  return bytes === null ? '?' : `${Math.round(bytes / 1048576)} MB`;
}

function thousands(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function metricsOf(port: number): Promise<Record<string, number> | null> {
  try {
    const answer = await httpGet(port, '/grid/rest/metrics', 5000);
    return answer.status === 200 ? (JSON.parse(answer.body.toString('utf8')) as Record<string, number>) : null;
  } catch {
    return null;
  }
}

interface VerifyResult {
  readonly checked: number;
  readonly wrong: number;
  readonly examples: string[];
}

/** Reads `keys` through `port` and compares each with the value it must have. */
async function verify(port: number, keys: readonly number[], acceptable: (key: number) => readonly number[], valueBytes: number): Promise<VerifyResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: verifyConcurrency });
  let next = 0;
  let wrong = 0;
  const examples: string[] = [];
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const gens = acceptable(key);
      let problem: string | null = null;
      try {
        const answer = await httpGet(port, `/grid/rest/maps/${rebalanceMap}/k${key}`, 10_000, agent);
        const body = answer.body.toString('latin1');
        const parsed = parseEntryValue(body);
        if (answer.status !== 200) problem = `status ${answer.status}`;
        else if (parsed === null || parsed.key !== key || !gens.includes(parsed.gen) || body !== entryValue(key, parsed.gen, valueBytes)) {
          problem = `value ${JSON.stringify(body.slice(0, 30))}, expected generation ${gens.join(' or ')}`;
        }
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
      }
      if (problem !== null) {
        wrong += 1;
        if (examples.length < 5) examples.push(`k${key}: ${problem}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: verifyConcurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  return { checked: keys.length, wrong, examples };
}

export async function runRebalanceBench(options: RebalanceOptions): Promise<BenchOutcome> {
  const failures: string[] = [];
  const warnings: string[] = [];
  const lines: string[] = [];
  const entries = options.entries;
  const loadDesc = options.loadRps > 0 ? `${thousands(options.loadRps)} req/s` : 'unthrottled';
  say(
    `\nrebalance bench: ${clusterMembers} members (backup-count ${clusterBackupCount}), ${thousands(entries)} entries of ` +
      `${rebalanceValueBytes}-byte values, then a 4th member joins while member 1 serves GET+POST ` +
      `(${steadyGetConnections}+${steadyPostConnections} connections, ${loadDesc}); target < ${rebalanceTargetS} s, no failed request`,
  );
  let cluster: Cluster | null = null;
  const scratch = mkdtempSync(path.join(tmpdir(), 'grid-bench-rebalance-'));
  let steady: ReturnType<typeof startLoadChild<SteadyResult>> | null = null;
  try {
    cluster = await startCluster(clusterMembers, 'r', options.verbose, 1);
    const c = cluster;
    const ports = c.ports;
    say(`members: ${c.members.map((m) => `${m.label} ${host}:${m.port}`).join(', ')}; joining later: r4 ${host}:${ports[3]}`);

    // Preload through all three members.
    say(`preloading ${thousands(entries)} entries through the 3 members (${preloadConnectionsPerMember} connections each, pipeline ${preloadPipeline})`);
    const preload = await startLoadChild<PreloadResult>(
      {
        mode: 'preload',
        host,
        ports: ports.slice(0, clusterMembers),
        mapName: rebalanceMap,
        keys: entries,
        valueBytes: rebalanceValueBytes,
        connectionsPerPort: preloadConnectionsPerMember,
        pipeline: preloadPipeline,
        deadlineMs: preloadDeadlineMs,
      },
      track,
    ).result;
    c.checkAlive();
    const preloadS = preload.elapsedMs / 1000;
    say(`preload: ${thousands(preload.ok)} entries in ${preloadS.toFixed(1)} s (${thousands(preload.rps)} writes/s), non-2xx ${preload.non2xx}, errors ${preload.errors}`);
    if (preload.ok !== entries || preload.non2xx !== 0 || preload.errors !== 0) {
      throw new Error(
        `preload stored ${preload.ok}/${entries} entries, non-2xx ${preload.non2xx} ${JSON.stringify(preload.statuses)}, ` +
          `errors ${preload.errors} (${preload.firstError ?? 'no error text'})`,
      );
    }
    await waitSettled(c, clusterMembers, clusterFormDeadlineMs);
    const heldBefore = await entriesHeld(ports.slice(0, clusterMembers));
    const rssAfterPreload = c.members.map((m) => rssBytes(m.child.pid));
    say(`entries held: ${heldBefore.perMember.map((n, i) => `r${i + 1} ${thousands(n)}`).join(', ')}; total ${thousands(heldBefore.total)} (expected ${thousands(2 * entries)})`);
    say(`RSS after preload: ${rssAfterPreload.map((b, i) => `r${i + 1} ${mb(b)}`).join(', ')}`);

    const metricsBefore = await Promise.all(ports.slice(0, clusterMembers).map((port) => metricsOf(port)));

    // Steady load on member 1, then the fourth member.
    const writesFile = path.join(scratch, 'writes.json');
    steady = startLoadChild<SteadyResult>(
      {
        mode: 'steady',
        host,
        port: ports[0]!,
        mapName: rebalanceMap,
        keys: entries,
        valueBytes: rebalanceValueBytes,
        getConnections: steadyGetConnections,
        postConnections: steadyPostConnections,
        rateRps: options.loadRps,
        requestTimeoutMs: steadyRequestTimeoutMs,
        maxDurationMs: rebalanceDeadlineMs + 2 * 60 * 1000,
        writesFile,
        seed,
      },
      track,
    );
    await delay(steadyBeforeMs);
    c.checkAlive();

    const t0 = Date.now();
    say(`r4: starting (t = 0)`);
    let joinedS: number | null = null;
    let startError: unknown = null;
    const starting = c.startMember(3).then(
      () => {
        joinedS = (Date.now() - t0) / 1000;
        say(`r4: joined (ready) at t = ${joinedS.toFixed(1)} s`);
      },
      (error: unknown) => {
        startError = error;
      },
    );
    let queueMax = 0;
    let lastPrint = t0;
    let t1: number | null = null;
    let last: (Health | null)[] = [];
    while (Date.now() - t0 < rebalanceDeadlineMs) {
      if (startError !== null) throw startError;
      c.checkAlive();
      if (interrupted()) throw new Error('interrupted');
      last = await Promise.all(ports.map((port) => health(port)));
      for (const h of last) if (h !== null) queueMax = Math.max(queueMax, h.migrationQueueSize);
      if (joinedS !== null && last.every((h) => settled(h, 4))) {
        t1 = Date.now();
        break;
      }
      if (Date.now() - lastPrint >= 2000) {
        lastPrint = Date.now();
        say(
          `  t = ${((lastPrint - t0) / 1000).toFixed(1)} s: ` +
            last.map((h, i) => (h === null ? `r${i + 1} -` : `r${i + 1} size ${h.clusterSize} queue ${h.migrationQueueSize} ${h.clusterSafe ? 'safe' : 'unsafe'}`)).join(', '),
        );
      }
      await delay(healthPollMs);
    }
    await starting;
    if (t1 === null) throw new Error(`the rebalance did not end within ${rebalanceDeadlineMs / 1000} s: ${JSON.stringify(last)}`);
    const rebalanceS = (t1 - t0) / 1000;
    say(`rebalance: ${rebalanceS.toFixed(1)} s from r4's start until all 4 members are safe with an empty migration queue (largest queue seen ${queueMax})`);

    // Afterwards, under the same load, the probe operators use should stay 200 on every member.
    const unsafe = ports.map(() => 0);
    let probes = 0;
    while (Date.now() - t1 < steadyAfterMs) {
      const answers = await Promise.all(ports.map((port) => httpGet(port, '/grid/health/cluster-safe', 2000).catch(() => null)));
      probes += 1;
      answers.forEach((answer, i) => {
        if (answer?.status !== 200) unsafe[i]! += 1;
      });
      await delay(healthPollMs);
    }
    const unsafeTotal = unsafe.reduce((a, b) => a + b, 0);
    say(
      `cluster-safe in the ${steadyAfterMs / 1000} s after, under the same load: ` +
        (unsafeTotal === 0 ? `200 on every member in all ${probes} rounds` : `not 200 in ${unsafe.map((n, i) => `r${i + 1} ${n}`).join(', ')} of ${probes} rounds`),
    );
    if (unsafeTotal > 0) warnings.push(`rebalance: cluster-safe went back to 503 after the rebalance ended (${unsafe.map((n, i) => `r${i + 1} ${n}`).join(', ')} of ${probes} probes)`);

    steady.stop();
    const load = await steady.result;
    steady = null;
    c.checkAlive();
    const inWindow = load.failures.filter((f) => f.sentAtMs >= t0 && f.sentAtMs <= t1).length;
    const windowNote = load.failuresTotal > load.failures.length ? ' (of the first 200 kept)' : '';
    const servedRps = ((load.get.requests + load.post.requests) * 1000) / load.elapsedMs;
    say(
      `load on r1 (${(load.elapsedMs / 1000).toFixed(1)} s from t = ${((load.startedAtMs - t0) / 1000).toFixed(1)} s, ${thousands(servedRps)} req/s served): ` +
        `GET ${thousands(load.get.requests)} (p99 ${load.get.p99Ms.toFixed(1)} ms, max ${load.get.maxMs.toFixed(0)} ms), ` +
        `POST ${thousands(load.post.requests)} (p99 ${load.post.p99Ms.toFixed(1)} ms, max ${load.post.maxMs.toFixed(0)} ms); ` +
        `failed ${load.failuresTotal} (during the rebalance ${inWindow}${windowNote})`,
    );
    for (const f of load.failures.slice(0, 10)) {
      say(`  failed: ${f.method} k${f.key} sent at t = ${((f.sentAtMs - t0) / 1000).toFixed(2)} s after ${f.latencyMs.toFixed(0)} ms: ${f.what}`);
    }

    // Read back through the new member.
    const writes = JSON.parse(readFileSync(writesFile, 'utf8')) as SteadyWrites;
    const acked = new Map<number, number>(writes.acked.map(([k, g]) => [k, g]));
    const uncertain = new Map<number, number[]>();
    for (const [k, g] of writes.uncertain) uncertain.set(k, [...(uncertain.get(k) ?? []), g]);
    const random = makeRandom(seed);
    const sample: number[] = [];
    for (let i = 0; i < verifyRandomKeys; i++) sample.push(random() % entries);
    const written = [...acked.keys()];
    for (let i = 0; i < Math.min(verifyWrittenKeysMax, written.length); i++) sample.push(written[random() % written.length]!);
    const check = await verify(ports[3]!, sample, (key) => [acked.get(key) ?? 0, ...(uncertain.get(key) ?? [])], rebalanceValueBytes);
    say(
      `read-back through r4: ${thousands(check.checked)} keys (${verifyRandomKeys} random, ${check.checked - verifyRandomKeys} written during the load): ` +
        `${check.wrong === 0 ? 'all correct' : `${check.wrong} WRONG`}`,
    );
    for (const example of check.examples) say(`  ${example}`);

    const rssAfter = c.members.map((m) => rssBytes(m.child.pid));
    const heldAtEnd = await entriesHeld(ports);
    say(
      `entries held right after: ${heldAtEnd.perMember.map((n, i) => `r${i + 1} ${thousands(n)}`).join(', ')}; ` +
        `total ${thousands(heldAtEnd.total)} (${thousands(2 * entries)} once copies no longer listed are dropped)`,
    );
    // Stale copies go after the hold timeout: wait for the count to come down to owner + backup.
    let heldAfter = heldAtEnd;
    while (heldAfter.total !== 2 * entries && Date.now() - t1 < staleDropDeadlineMs) {
      c.checkAlive();
      if (interrupted()) throw new Error('interrupted');
      await delay(500);
      heldAfter = await entriesHeld(ports);
    }
    const droppedS = (Date.now() - t1) / 1000;
    say(
      `entries held ${droppedS.toFixed(1)} s after the rebalance: ${heldAfter.perMember.map((n, i) => `r${i + 1} ${thousands(n)}`).join(', ')}; ` +
        `total ${thousands(heldAfter.total)} (expected ${thousands(2 * entries)})`,
    );
    const metrics = await Promise.all(ports.map((port) => metricsOf(port)));
    const rssDropped = c.members.map((m) => rssBytes(m.child.pid));
    say(`owned partitions: ${metrics.map((m, i) => `r${i + 1} ${m?.['ownedPartitions'] ?? '?'}`).join(', ')}`);
    // Counters of the rebalance alone: after minus before (r4 had none before).
    const sum = (name: string): number =>
      metrics.reduce((total, m) => total + (m?.[name] ?? 0), 0) - metricsBefore.reduce((total, m) => total + (m?.[name] ?? 0), 0);
    const migrations = {
      started: sum('migrationMigrationsStarted'),
      committed: sum('migrationMigrationsCommitted'),
      failed: sum('migrationMigrationsFailed'),
      backupAckTimeouts: sum('replicationBackupAckTimeouts'),
      resyncsRequested: sum('replicationResyncsRequested'),
    };
    say(
      `migrations: started ${migrations.started}, committed ${migrations.committed}, failed ${migrations.failed}; ` +
        `backup ack timeouts ${migrations.backupAckTimeouts}, resyncs requested ${migrations.resyncsRequested}`,
    );
    const logged = c.notable.filter((n) => n.atMs >= t0);
    if (logged.length > 0) {
      say(`members logged ${logged.length}${logged.length >= notableKept ? '+' : ''} WARNING/SEVERE line(s) since r4 started; the first ones:`);
      for (const n of logged.slice(0, 8)) say(`  [${n.member}] t = ${((n.atMs - t0) / 1000).toFixed(1)} s: ${n.line.slice(0, 300)}`);
    }
    say(`RSS right after the rebalance: ${rssAfter.map((b, i) => `r${i + 1} ${mb(b)}`).join(', ')}`);
    say(`RSS once stale copies are dropped: ${rssDropped.map((b, i) => `r${i + 1} ${mb(b)}`).join(', ')}`);

    const pass = rebalanceS < rebalanceTargetS;
    const noFailures = load.failuresTotal === 0;
    say(
      `summary:  rebalance ${rebalanceS.toFixed(1)} s (target < ${rebalanceTargetS} s: ${pass ? 'PASS' : 'MISS'}), ` +
        `failed requests ${load.failuresTotal} (target 0: ${noFailures ? 'PASS' : 'MISS'}), preload ${preloadS.toFixed(1)} s, ` +
        `read-back ${check.wrong === 0 ? 'correct' : `${check.wrong} wrong`}`,
    );
    if (!noFailures) {
      failures.push(`rebalance: ${load.failuresTotal} request(s) failed during the load on r1 (first: ${load.failures[0]?.what ?? '?'})`);
    }
    if (check.wrong !== 0) failures.push(`rebalance: ${check.wrong} of ${check.checked} keys read back wrong through r4 (${check.examples[0] ?? ''})`);
    if (heldAfter.total !== 2 * entries) {
      failures.push(
        `rebalance: the members hold ${heldAfter.total} entries ${staleDropDeadlineMs / 1000} s after the rebalance, ` +
          `expected ${2 * entries} (owner + ${clusterBackupCount} backup)`,
      );
    }
    const rssMb = (values: readonly (number | null)[]): (number | null)[] => values.map((b) => (b === null ? null : Math.round(b / 1048576)));
    lines.push(
      JSON.stringify({
        bench: 'rebalance',
        members: clusterMembers,
        backupCount: clusterBackupCount,
        entries,
        valueBytes: rebalanceValueBytes,
        preloadS: round(preloadS, 2),
        preloadWritesPerS: Math.round(preload.rps),
        rebalanceS: round(rebalanceS, 2),
        target: rebalanceTargetS,
        pass,
        joinS: joinedS === null ? null : round(joinedS, 2),
        migrationQueueMax: queueMax,
        load: {
          rps: options.loadRps,
          servedRps: Math.round(servedRps),
          getConnections: steadyGetConnections,
          postConnections: steadyPostConnections,
          get: { requests: load.get.requests, p50Ms: load.get.p50Ms, p99Ms: load.get.p99Ms, maxMs: load.get.maxMs },
          post: { requests: load.post.requests, p50Ms: load.post.p50Ms, p99Ms: load.post.p99Ms, maxMs: load.post.maxMs },
        },
        failedRequests: load.failuresTotal,
        failedRequestsDuringRebalance: inWindow,
        readBack: { checked: check.checked, wrong: check.wrong },
        entriesHeldRightAfter: heldAtEnd.total,
        entriesHeld: heldAfter.total,
        staleDroppedAfterS: heldAfter.total === 2 * entries ? round(droppedS, 1) : null,
        migrations,
        memberWarnings: logged.length,
        clusterSafeAfter: { probes, unsafe },
        rssMbAfterPreload: rssMb(rssAfterPreload),
        rssMbAfterRebalance: rssMb(rssAfter),
        rssMbAfterDrop: rssMb(rssDropped),
      }),
    );
  } catch (error) {
    failures.push(`rebalance: ${interrupted() ? 'interrupted' : error instanceof Error ? error.message : String(error)}`);
  } finally {
    if (steady !== null) {
      steady.stop();
      await steady.result.catch(() => null);
    }
    if (cluster !== null) warnings.push(...(await cluster.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
  return { lines, failures, warnings };
}

async function entriesHeld(ports: readonly number[]): Promise<{ perMember: number[]; total: number }> {
  const metrics = await Promise.all(ports.map((port) => metricsOf(port)));
  // Owned and backup copies: mapEntries counts owned entries only, mapEntriesBackup the rest.
  const perMember = metrics.map((m) => (m?.['mapEntries'] ?? 0) + (m?.['mapEntriesBackup'] ?? 0));
  return { perMember, total: perMember.reduce((a, b) => a + b, 0) };
}
