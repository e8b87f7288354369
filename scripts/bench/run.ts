// The HTTP benchmark: a Grid member against a bare node:http server, in the same run, under the same
// load (DESIGN.md habit 8); with them, a 3-member cluster (backup-count 1) loaded through its first
// member (cluster.ts). Then the rebalance benchmark (a 4th member joins 3 holding 1,000,000 entries,
// cluster.ts), and the memory, micro, failover (kill -9 of one of 3 members, failover.ts) and WAN
// (wan.ts: a cluster of 3 replicating to one of 2) and CP (cp.ts: AtomicLong on 3 members against
// etcd 3.4; cp-durable.ts: lock/unlock pairs, and CP persistence against etcd fsyncing to disk)
// benchmarks, when their scripts exist.
//
// Flow: start the servers as child processes (bare-server.ts, net-server.ts (the node:net ceiling)
// and `node dist/member.js`), wait for each to be ready, preload the 10,000 keys into bare and the
// member (not the ceiling, which stores nothing), then for map GET and map POST: a warm-up run per
// server, and rounds of alternating runs, each round starting one server later (bare, net, member;
// net, member, bare; ...), each run starting once every server's processes are quiet (settle()).
// Then, unless skipped, the cluster phase: start the 3-member cluster, preload it, and run rounds of
// bare, member and cluster the same way (named c1, c2, ...). Ratios are of the medians over the
// rounds: member/bare and member/net from the first phase (member/bare also as the median of each
// round's own ratio; both must meet #14's targets), cluster/bare and cluster/member from the second.
// Each run reports requests/s, p50/p99 latency, non-2xx answers and errors. A table streams while
// it runs; a summary and one JSON line per benchmark end the output.
//
// Exit code: 0 when everything ran (targets missed or not: this is a measurement, not a test); 1 when
// something failed to run (a server missing or dying, a generator failing, non-2xx answers or socket
// errors in any run, including a failed request of the load during the rebalance, a key read back
// wrong after it, a rebalance that does not end within 10 minutes, a failing memory/micro script);
// 2 for bad flags; 130 on SIGINT.
//
// Hygiene: loopback only; every wait has a deadline; every child process is tracked and killed in a
// finally block, on SIGINT/SIGTERM and at exit.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { clusterBackupCount, clusterMembers, clusterSummary, runRebalanceBench, startCluster, type Cluster, type ClusterWorkloadSummary } from './cluster.js';
import {
  benchDir,
  cpuTicks,
  delay,
  host,
  httpGet,
  interrupted,
  killAll,
  median,
  memberEntry,
  onSignal,
  OutputTail,
  repoRoot,
  round,
  say,
  startServer,
  stopServer,
  track,
  type Server,
} from './common.js';
import { benchValue, mapPathPrefix, runLoadInChild, type LoadMethod, type LoadOptions } from './loadgen.js';
import { ensureWrk, runWrk, WrkScripts } from './wrk.js';

// ---------------------------------------------------------------------------------------------
// Fixed shape of the benchmark (from the issue): change these only together with the README.

const connections = 32;
/**
 * One wrk thread (issue #14's shape): on a 2-core machine the generator takes one core and the
 * server the other. With two threads wrk takes CPU from the server it measures, and the ratios then
 * measure the machine's scheduling more than the servers.
 */
const wrkThreads = 1;
const valueBytes = 100;
const keys = 10_000;
const seed = 42;
const requestTimeoutS = 2;
const preloadDeadlineMs = 60_000;
const sideBenchDeadlineMs = 10 * 60 * 1000;
const pauseBetweenRunsMs = 200;
/** member / bare node:http (issue #14: the member's own HTTP engine beats a node:http server that does nothing). */
const targets: Readonly<Record<LoadMethod, number>> = { GET: 1.3, POST: 1.2 };

const defaultRebalanceEntries = 1_000_000;
const defaultRebalanceRps = 2000;

// ---------------------------------------------------------------------------------------------
// Flags.

type GeneratorChoice = 'auto' | 'node' | 'wrk';

interface Flags {
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly generator: GeneratorChoice;
  readonly skipMemory: boolean;
  readonly skipMicro: boolean;
  readonly skipFailover: boolean;
  readonly skipWan: boolean;
  readonly skipPersistence: boolean;
  readonly skipClient: boolean;
  readonly skipCp: boolean;
  readonly skipConsole: boolean;
  readonly skipCluster: boolean;
  readonly skipRebalance: boolean;
  readonly onlyRebalance: boolean;
  readonly rebalanceEntries: number;
  readonly rebalanceRps: number;
  readonly bareVsBare: boolean;
  readonly verbose: boolean;
}

const usage = `usage: npm run bench -- [flags]
  --duration S      seconds per measured run (default 5)
  --warmup S        seconds of warm-up per server and workload (default 2)
  --rounds N        alternating bare/net/member/cluster rounds per workload (default 7)
  --generator G     node | wrk (default: wrk when installed or installable, else node)
  --skip-memory     do not run scripts/bench/memory.ts
  --skip-micro      do not run scripts/bench/micro.ts
  --skip-failover   do not run scripts/bench/failover.ts (kill -9 of one of 3 members holding 1,000,000 entries)
  --skip-wan        do not run scripts/bench/wan.ts (3 members replicating to 2: POST ratio, lag, full and delta sync of 1,000,000 entries)
  --skip-persistence  do not run scripts/bench/persistence.ts (POST ratios with fsync off and on, restart time per GB, memory per entry)
  --skip-client     do not run scripts/bench/client.ts (the official Node client's map get/set against REST GET/POST on one member)
  --skip-console    do not run scripts/bench/console.ts (map GETs on 3 members with the web console closed and open on every member)
  --skip-cp         do not run scripts/bench/cp.ts (CP AtomicLong writes and reads on 3 members against etcd 3.4 on tmpfs)
                    nor scripts/bench/cp-durable.ts (lock/unlock pairs; CP persistence against etcd fsyncing to disk)
  --skip-cluster    no cluster benchmarks (neither the 3-member HTTP runs nor the rebalance)
  --skip-rebalance  the 3-member HTTP runs, but not the rebalance (which takes a few minutes)
  --only-rebalance  only the rebalance (no HTTP runs, no memory, no micro)
  --rebalance-entries N  entries preloaded before the 4th member joins (default 1000000)
  --rebalance-rps N      GET+POST requests/s on member 1 during the rebalance (default 2000; 0 = unthrottled)
  --cluster         accepted for compatibility: the cluster benchmarks run unless skipped
  --bare-vs-bare    a second bare server in place of the member (measures the noise: ratio ~1.0; no cluster)
  --verbose         pass the servers' output through`;

class UsageError extends Error {}

function parseFlags(argv: readonly string[]): Flags {
  let durationS = 5;
  let warmupS = 2;
  let rounds = 7;
  let generator: GeneratorChoice = 'auto';
  let skipMemory = false;
  let skipMicro = false;
  let skipFailover = false;
  let skipWan = false;
  let skipPersistence = false;
  let skipClient = false;
  let skipCp = false;
  let skipConsole = false;
  let skipCluster = false;
  let skipRebalance = false;
  let onlyRebalance = false;
  let rebalanceEntries = defaultRebalanceEntries;
  let rebalanceRps = defaultRebalanceRps;
  let bareVsBare = false;
  let verbose = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    const value = (): string => {
      if (inline !== undefined) return inline;
      index += 1;
      const next = argv[index];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      return next;
    };
    const number = (min: number, max: number, integer: boolean): number => {
      const text = value();
      const parsed = Number(text);
      if (!Number.isFinite(parsed) || parsed < min || parsed > max || (integer && !Number.isInteger(parsed))) {
        throw new UsageError(`${name} ${text}: expected ${integer ? 'an integer' : 'a number'} in [${min}, ${max}]`);
      }
      return parsed;
    };
    switch (name) {
      case '--duration':
        durationS = number(0.1, 600, false);
        break;
      case '--warmup':
        warmupS = number(0, 600, false);
        break;
      case '--rounds':
        rounds = number(1, 50, true);
        break;
      case '--generator': {
        const text = value();
        if (text !== 'node' && text !== 'wrk') throw new UsageError(`--generator ${text}: expected node or wrk`);
        generator = text;
        break;
      }
      case '--skip-memory':
        skipMemory = true;
        break;
      case '--skip-micro':
        skipMicro = true;
        break;
      case '--skip-failover':
        skipFailover = true;
        break;
      case '--skip-wan':
        skipWan = true;
        break;
      case '--skip-persistence':
        skipPersistence = true;
        break;
      case '--skip-client':
        skipClient = true;
        break;
      case '--skip-console':
        skipConsole = true;
        break;
      case '--skip-cp':
        skipCp = true;
        break;
      case '--skip-cluster':
        skipCluster = true;
        break;
      case '--skip-rebalance':
        skipRebalance = true;
        break;
      case '--only-rebalance':
        onlyRebalance = true;
        break;
      case '--rebalance-entries':
        rebalanceEntries = number(1000, 10_000_000, true);
        break;
      case '--rebalance-rps':
        rebalanceRps = number(0, 1_000_000, true);
        break;
      case '--cluster':
        break;
      case '--bare-vs-bare':
        bareVsBare = true;
        break;
      case '--verbose':
        verbose = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(usage + '\n');
        process.exit(0);
        break;
      default:
        throw new UsageError(`unknown flag ${arg}`);
    }
  }
  if (onlyRebalance && (skipCluster || skipRebalance || bareVsBare)) {
    throw new UsageError('--only-rebalance cannot be combined with --skip-cluster, --skip-rebalance or --bare-vs-bare');
  }
  return {
    durationS,
    warmupS,
    rounds,
    generator,
    skipMemory,
    skipMicro,
    skipFailover: skipFailover || skipCluster || bareVsBare,
    skipWan: skipWan || skipCluster || bareVsBare,
    skipPersistence: skipPersistence || bareVsBare,
    skipClient: skipClient || bareVsBare,
    skipCp: skipCp || bareVsBare,
    skipConsole: skipConsole || bareVsBare,
    skipCluster: skipCluster || bareVsBare,
    skipRebalance: skipRebalance || skipCluster || bareVsBare,
    onlyRebalance,
    rebalanceEntries,
    rebalanceRps,
    bareVsBare,
    verbose,
  };
}

// ---------------------------------------------------------------------------------------------
// Runs.

interface RunResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly firstError: string | null;
}

interface Generator {
  readonly name: 'node' | 'wrk';
  run(port: number, method: LoadMethod, durationS: number): Promise<RunResult>;
  dispose(): void;
}

function nodeGenerator(): Generator {
  return {
    name: 'node',
    run: async (port, method, durationS) => {
      const result = await runLoadInChild(loadOptions(port, method, 'random', durationS * 1000), track);
      const detail = Object.keys(result.statuses).length === 0 ? '' : ` statuses ${JSON.stringify(result.statuses)}`;
      return { ...result, firstError: result.firstError === null && detail === '' ? null : `${result.firstError ?? ''}${detail}` };
    },
    dispose: () => {},
  };
}

function wrkGenerator(wrkPath: string): Generator {
  const scripts = WrkScripts.create(keys, valueBytes, seed);
  return {
    name: 'wrk',
    run: (port, method, durationS) =>
      runWrk(
        {
          wrkPath,
          scriptPath: scripts.scriptFor(method),
          host,
          port,
          threads: wrkThreads,
          connections,
          durationS,
          timeoutS: requestTimeoutS,
        },
        track,
      ),
    dispose: () => scripts.dispose(),
  };
}

function loadOptions(port: number, method: LoadMethod, mode: 'random' | 'preload', durationMs: number): LoadOptions {
  return { host, port, method, mode, connections, keys, valueBytes, durationMs, requestTimeoutMs: requestTimeoutS * 1000, seed };
}

function chooseGenerator(choice: GeneratorChoice): Generator {
  if (choice === 'node') return nodeGenerator();
  const wrkPath = ensureWrk((line) => say(line));
  if (wrkPath !== null) return wrkGenerator(wrkPath);
  if (choice === 'wrk') throw new Error('--generator wrk: wrk is not available');
  say('falling back to the built-in node:net load generator (scripts/bench/loadgen.ts)');
  return nodeGenerator();
}

/** Writes every key once into a server with the built-in generator, then reads one back. */
async function preload(server: Target): Promise<void> {
  const result = await runLoadInChild(loadOptions(server.port, 'POST', 'preload', preloadDeadlineMs), track);
  if (result.requests !== keys || result.non2xx !== 0 || result.errors !== 0) {
    throw new Error(
      `${server.label}: preload stored ${result.requests}/${keys} keys, non-2xx ${result.non2xx} ` +
        `${JSON.stringify(result.statuses)}, errors ${result.errors} (${result.firstError ?? 'no error text'})`,
    );
  }
  const answer = await httpGet(server.port, `${mapPathPrefix}${keys - 1}`, 2000);
  const expected = benchValue(valueBytes);
  if (answer.status !== 200 || answer.body.toString('latin1') !== expected || !answer.contentType?.startsWith('text/plain')) {
    throw new Error(
      `${server.label}: GET of a preloaded key answered ${answer.status}, content-type ${String(answer.contentType)}, ` +
        `${answer.body.length} bytes; expected 200, text/plain, the ${valueBytes} bytes written`,
    );
  }
}

/** What a run loads: a server, or the first member of the cluster under the label `cluster`. */
interface Target {
  readonly label: string;
  readonly port: number;
}

interface Row {
  readonly workload: LoadMethod;
  readonly server: string;
  readonly round: string;
  readonly result: RunResult;
}

const columns = ['workload', 'server', 'round', 'req/s', 'p50 ms', 'p99 ms', 'non2xx', 'errors'] as const;
const widths = [9, 8, 6, 10, 8, 8, 8, 7] as const;

function tableLine(cells: readonly string[]): string {
  return cells.map((cell, index) => cell.padEnd(widths[index] ?? 8)).join('').trimEnd();
}

function formatRow(row: Row): string {
  const r = row.result;
  return tableLine([
    row.workload,
    row.server,
    row.round,
    Math.round(r.rps).toString(),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    String(r.non2xx),
    String(r.errors),
  ]);
}

interface WorkloadSummary {
  readonly memberRps: number;
  readonly bareRps: number;
  /** Median member rps over median bare rps. */
  readonly ratio: number;
  /**
   * Median of the rounds' own ratios (member / bare of the same round). A slow phase of the machine
   * (this VM has some, of a minute or so) hits both runs of a round alike, so this figure moves less
   * than the ratio of medians when one server's rounds fall into one and the other's do not.
   */
  readonly pairedRatio: number;
  readonly roundRatios: readonly number[];
  readonly target: number;
  /** Both ratios meet the target. */
  readonly pass: boolean;
  readonly memberP99Ms: number;
  readonly bareP99Ms: number;
  readonly memberRpsRounds: readonly number[];
  readonly bareRpsRounds: readonly number[];
  readonly non2xx: number;
  readonly errors: number;
}

/** Rounds of the cluster phase: half the single servers' (at least 3); it has no target to check. */
function clusterRounds(rounds: number): number {
  return Math.max(3, Math.ceil(rounds / 2));
}

/** A measured run of phase 1 (the single servers): not a warm-up, not of the cluster phase. */
function phaseOne(row: Row): boolean {
  return row.round !== 'warm' && !row.round.startsWith('c');
}

function summarize(rows: readonly Row[], workload: LoadMethod, bareLabel: string, otherLabel: string): WorkloadSummary {
  const measured = rows.filter((row) => row.workload === workload && phaseOne(row));
  const of = (label: string): RunResult[] => measured.filter((row) => row.server === label).map((row) => row.result);
  const bare = of(bareLabel);
  const member = of(otherLabel);
  const bareRps = median(bare.map((r) => r.rps));
  const memberRps = median(member.map((r) => r.rps));
  const ratio = bareRps > 0 ? memberRps / bareRps : 0;
  const roundRatios: number[] = [];
  for (const row of measured) {
    if (row.server !== otherLabel) continue;
    const pair = measured.find((other) => other.server === bareLabel && other.round === row.round);
    if (pair !== undefined && pair.result.rps > 0) roundRatios.push(row.result.rps / pair.result.rps);
  }
  const pairedRatio = median(roundRatios);
  const all = rows
    .filter((row) => row.workload === workload && !row.round.startsWith('c') && (row.server === bareLabel || row.server === otherLabel))
    .map((row) => row.result);
  return {
    memberRps: Math.round(memberRps),
    bareRps: Math.round(bareRps),
    ratio: round(ratio, 3),
    pairedRatio: round(pairedRatio, 3),
    roundRatios: roundRatios.map((r) => round(r, 3)),
    target: targets[workload],
    pass: ratio >= targets[workload] && pairedRatio >= targets[workload],
    memberP99Ms: round(median(member.map((r) => r.p99Ms)), 3),
    bareP99Ms: round(median(bare.map((r) => r.p99Ms)), 3),
    memberRpsRounds: member.map((r) => Math.round(r.rps)),
    bareRpsRounds: bare.map((r) => Math.round(r.rps)),
    non2xx: all.reduce((sum, r) => sum + r.non2xx, 0),
    errors: all.reduce((sum, r) => sum + r.errors, 0),
  };
}

const settleDeadlineMs = 10_000;
const settleWindowMs = 250;

/**
 * Waits until the processes together use less than one clock tick (10 ms of CPU) in a 250 ms window,
 * at most settleDeadlineMs; false if they never did. Without /proc it waits one window.
 */
async function settle(pids: readonly number[]): Promise<boolean> {
  const total = (): number | null => {
    let sum = 0;
    for (const pid of pids) {
      const t = cpuTicks(pid);
      if (t === null) return null;
      sum += t;
    }
    return sum;
  };
  const deadline = Date.now() + settleDeadlineMs;
  let before = total();
  for (;;) {
    await delay(settleWindowMs);
    const after = total();
    if (before === null || after === null) return true;
    if (after - before < 1) return true;
    if (Date.now() > deadline) return false;
    before = after;
  }
}

/** The node:net ceiling against the member and the bare node:http server (medians over the rounds). */
interface CeilingSummary {
  readonly netRps: number;
  readonly netP99Ms: number;
  readonly netRpsRounds: readonly number[];
  readonly memberToNet: number;
  readonly bareToNet: number;
}

function ceilingSummary(rows: readonly Row[], workload: LoadMethod, netLabel: string, bareLabel: string, memberLabel: string): CeilingSummary {
  const measured = rows.filter((row) => row.workload === workload && phaseOne(row));
  const of = (label: string): RunResult[] => measured.filter((row) => row.server === label).map((row) => row.result);
  const net = of(netLabel);
  const netRps = median(net.map((r) => r.rps));
  const ratio = (label: string): number => (netRps > 0 ? round(median(of(label).map((r) => r.rps)) / netRps, 3) : 0);
  return {
    netRps: Math.round(netRps),
    netP99Ms: round(median(net.map((r) => r.p99Ms)), 3),
    netRpsRounds: net.map((r) => Math.round(r.rps)),
    memberToNet: ratio(memberLabel),
    bareToNet: ratio(bareLabel),
  };
}

// ---------------------------------------------------------------------------------------------
// The memory and micro benchmarks, written elsewhere: run as children, their JSON lines kept.

interface SideBenchOutcome {
  readonly lines: readonly string[];
  /** The script failed to run: the bench exits 1. */
  readonly failure: string | null;
  /** It ran but gave nothing to fold into the output. */
  readonly warning: string | null;
}

async function runSideBench(name: 'memory' | 'micro' | 'failover' | 'wan' | 'persistence' | 'client' | 'cp' | 'cp-durable' | 'console', nodeArgs: readonly string[]): Promise<SideBenchOutcome> {
  const script = path.join(benchDir, `${name}.ts`);
  if (!existsSync(script)) {
    say(`${name}: scripts/bench/${name}.ts does not exist; skipped`);
    return { lines: [], failure: null, warning: null };
  }
  say(`\n${name}: node ${[...nodeArgs, `scripts/bench/${name}.ts`].join(' ')}`);
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  const lines: string[] = [];
  const onLine = (line: string): void => {
    if (line.trim().startsWith('{')) {
      try {
        const parsed = JSON.parse(line) as { bench?: unknown };
        if (parsed.bench === name) {
          lines.push(line.trim());
          return;
        }
      } catch {
        // not JSON after all: echo it like any other line
      }
    }
    say(`[${name}] ${line}`);
  };
  const stdout = new OutputTail(null);
  const stderr = new OutputTail(`[${name}] `);
  child.stdout.setEncoding('utf8').on('data', (text: string) => stdout.push(text, onLine));
  child.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
  const killer = setTimeout(() => child.kill('SIGKILL'), sideBenchDeadlineMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on('error', () => resolve([null, null]));
    child.on('close', (c, s) => resolve([c, s]));
  });
  clearTimeout(killer);
  stdout.flush(onLine);
  stderr.flush();
  if (code !== 0) return { lines, failure: `${name} exited with ${signal ?? String(code)}`, warning: null };
  if (lines.length === 0) {
    return { lines, failure: null, warning: `${name} printed no {"bench":"${name}",...} line; nothing of it in the JSON output` };
  }
  return { lines, failure: null, warning: null };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${usage}\n`);
    return 2;
  }
  if (!flags.bareVsBare && !existsSync(memberEntry)) {
    process.stderr.write(
      `dist/member.js is missing: build the member first (npm run build), or use --bare-vs-bare to check the bench itself\n`,
    );
    return 1;
  }
  if (flags.rounds < 3 && !flags.onlyRebalance) say(`note: ${flags.rounds} round(s); the issue asks for at least 3 for a stable median`);

  const failures: string[] = [];
  const warnings: string[] = [];
  const jsonLines: string[] = [];
  if (!flags.onlyRebalance) await runHttpBench(flags, failures, warnings, jsonLines);

  if (!interrupted() && !flags.skipRebalance) {
    const outcome = await runRebalanceBench({ entries: flags.rebalanceEntries, loadRps: flags.rebalanceRps, verbose: flags.verbose });
    jsonLines.push(...outcome.lines);
    failures.push(...outcome.failures);
    warnings.push(...outcome.warnings);
    killAll('SIGKILL'); // anything left (a load child after an error)
  }

  if (!interrupted() && !flags.onlyRebalance) {
    for (const [name, skip, nodeArgs] of [
      ['memory', flags.skipMemory, ['--expose-gc', '--import', 'tsx']],
      ['micro', flags.skipMicro, ['--import', 'tsx']],
      ['failover', flags.skipFailover, ['--import', 'tsx']],
      ['wan', flags.skipWan, ['--import', 'tsx']],
      ['persistence', flags.skipPersistence, ['--import', 'tsx']],
      ['client', flags.skipClient, ['--import', 'tsx']],
      ['cp', flags.skipCp, ['--import', 'tsx']],
      ['cp-durable', flags.skipCp, ['--import', 'tsx']],
      ['console', flags.skipConsole, ['--import', 'tsx']],
    ] as const) {
      if (skip) continue;
      const side = await runSideBench(name, nodeArgs);
      jsonLines.push(...side.lines);
      if (side.failure !== null) failures.push(side.failure);
      if (side.warning !== null) warnings.push(side.warning);
    }
  }

  say('');
  for (const warning of warnings) say(`warning: ${warning}`);
  for (const failure of failures) say(`FAILED: ${failure}`);
  for (const line of jsonLines) say(line);
  if (interrupted()) return 130;
  return failures.length === 0 ? 0 : 1;
}

/** The HTTP benchmark: bare, member and (unless skipped) the 3-member cluster in alternating rounds. */
async function runHttpBench(flags: Flags, failures: string[], warnings: string[], jsonLines: string[]): Promise<void> {
  const servers: Server[] = [];
  let cluster: Cluster | null = null;
  let generator: Generator | null = null;
  try {
    generator = chooseGenerator(flags.generator);
    // wrk takes whole seconds.
    const durationS = generator.name === 'wrk' ? Math.max(1, Math.ceil(flags.durationS)) : flags.durationS;
    const warmupS = flags.warmupS === 0 ? 0 : generator.name === 'wrk' ? Math.max(1, Math.ceil(flags.warmupS)) : flags.warmupS;

    const bareLabel = 'bare';
    const netLabel = 'net';
    const otherLabel = flags.bareVsBare ? 'bare2' : 'member';
    const clusterLabel = 'cluster';
    const bareArgs = ['--import', 'tsx', path.join(benchDir, 'bare-server.ts'), '--port', '0'];
    const memberArgs = flags.bareVsBare ? bareArgs : [memberEntry, '--port', '0', '--rest', '--rest-groups', 'DATA'];
    const bare = await startServer(bareLabel, bareArgs, flags.verbose);
    servers.push(bare);
    // The ceiling: node:net answering a fixed response, no parsing, no routing, no storing.
    const net = await startServer(netLabel, ['--import', 'tsx', path.join(benchDir, 'net-server.ts'), '--port', '0'], flags.verbose);
    servers.push(net);
    const member = await startServer(otherLabel, memberArgs, flags.verbose);
    servers.push(member);
    const targetsInRound: Target[] = [bare, net, member];

    say(
      `http bench: node ${process.version}, ${cpus().length} cpus, generator ${generator.name}` +
        `${generator.name === 'wrk' ? ` (-t${wrkThreads})` : ''}, ${connections} connections, ` +
        `${valueBytes}-byte values, ${keys} keys, ${durationS} s per run, ${warmupS} s warm-up, ${flags.rounds} rounds`,
    );
    say(`servers: ${bareLabel} ${host}:${bare.port}, ${netLabel} ${host}:${net.port}, ${otherLabel} ${host}:${member.port}`);
    say(`preloading ${keys} keys into ${bareLabel} and ${otherLabel}`);
    // The ceiling stores nothing: it answers every request with the same 100 bytes.
    for (const target of targetsInRound) if (target !== net) await preload(target);

    const rows: Row[] = [];
    const checkAlive = (): void => {
      for (const server of servers) if (server.died !== null) throw new Error(server.died);
      cluster?.checkAlive();
      if (interrupted()) throw new Error('interrupted');
    };
    const measure = async (workload: LoadMethod, target: Target, roundName: string, seconds: number): Promise<void> => {
      checkAlive();
      const result = await generator!.run(target.port, workload, seconds);
      checkAlive();
      const row: Row = { workload, server: target.label, round: roundName, result };
      rows.push(row);
      say(formatRow(row));
      if (result.non2xx !== 0 || result.errors !== 0) {
        failures.push(
          `${workload} ${target.label} round ${roundName}: non-2xx ${result.non2xx}, errors ${result.errors}` +
            `${result.firstError === null ? '' : ` (${result.firstError})`}`,
        );
      }
      await delay(pauseBetweenRunsMs);
      // Every server's processes quiet before the next run: a server still busy after its own run
      // (the cluster's replication catch-up and GC) would otherwise slow whichever server follows it.
      const settled = await settle(serverPids());
      if (!settled) warnings.push(`${workload} after ${target.label} round ${roundName}: the servers were still busy after ${settleDeadlineMs} ms`);
    };
    const serverPids = (): number[] => [...servers, ...(cluster?.members ?? [])].map((s) => s.child.pid ?? 0).filter((pid) => pid > 0);

    const runRounds = async (targets: readonly Target[], rounds: number, prefix: string): Promise<void> => {
      for (const workload of ['GET', 'POST'] as const) {
        if (warmupS > 0) for (const target of targets) await measure(workload, target, `${prefix}warm`, warmupS);
        for (let roundIndex = 1; roundIndex <= rounds; roundIndex++) {
          // Each round starts one server later: no server always runs first.
          const shift = (roundIndex - 1) % targets.length;
          for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) await measure(workload, target, `${prefix}${roundIndex}`, durationS);
        }
      }
    };

    // Phase 1: the single servers, while no cluster process exists. With the cluster's three members
    // alive (even idle, even stopped with SIGSTOP) the bare node:http server ran about 20% slower
    // (72,000 against 91,000 GETs/s), the member about 6% and the ceiling 2%; the cause is not known,
    // so the targets are measured without them.
    say('');
    say(tableLine([...columns]));
    await runRounds(targetsInRound, flags.rounds, '');

    const get = summarize(rows, 'GET', bareLabel, otherLabel);
    const post = summarize(rows, 'POST', bareLabel, otherLabel);
    const getNet = ceilingSummary(rows, 'GET', netLabel, bareLabel, otherLabel);
    const postNet = ceilingSummary(rows, 'POST', netLabel, bareLabel, otherLabel);
    say('');
    for (const [name, summary, ceiling] of [['GET', get, getNet], ['POST', post, postNet]] as const) {
      say(
        `summary:  ${name.padEnd(4)} ${otherLabel}/bare = ${summary.ratio.toFixed(2)}, by round ${summary.pairedRatio.toFixed(2)} ` +
          `[${summary.roundRatios.map((r) => r.toFixed(2)).join(' ')}] ` +
          `(target ≥ ${summary.target.toFixed(2)} for both: ${summary.pass ? 'PASS' : 'MISS'})  ` +
          `p99 ${otherLabel} ${summary.memberP99Ms.toFixed(2)} ms, bare ${summary.bareP99Ms.toFixed(2)} ms ` +
          `(${summary.memberP99Ms <= summary.bareP99Ms ? 'no worse' : 'WORSE'})  ` +
          `req/s ${otherLabel} ${summary.memberRps} [${summary.memberRpsRounds.join(' ')}], ` +
          `bare ${summary.bareRps} [${summary.bareRpsRounds.join(' ')}]`,
      );
      say(
        `          ${name.padEnd(4)} ${otherLabel}/net = ${ceiling.memberToNet.toFixed(2)}, bare/net = ${ceiling.bareToNet.toFixed(2)} ` +
          `(net: node:net with a fixed answer, the ceiling)  p99 net ${ceiling.netP99Ms.toFixed(2)} ms  ` +
          `req/s net ${ceiling.netRps} [${ceiling.netRpsRounds.join(' ')}]`,
      );
    }
    jsonLines.push(
      JSON.stringify({
        bench: 'http',
        generator: generator.name,
        connections,
        valueBytes,
        keys,
        durationS,
        warmupS,
        rounds: flags.rounds,
        ...(flags.bareVsBare ? { against: 'bare' } : {}),
        wrkThreads: generator.name === 'wrk' ? wrkThreads : null,
        get: { ...get, ceiling: getNet },
        post: { ...post, ceiling: postNet },
      }),
    );

    if (!flags.skipCluster) {
      // Phase 2: the cluster, in rounds with the member and bare of its own (cluster.ts). The net
      // ceiling is not run again: it has no part in the cluster's ratios.
      say('');
      cluster = await startCluster(clusterMembers, 'c', flags.verbose);
      const clusterTarget: Target = { label: clusterLabel, port: cluster.members[0]!.port };
      say(
        `${clusterLabel}: ${clusterMembers} members (backup-count ${clusterBackupCount}) ` +
          `${cluster.members.map((m) => `${m.label} ${host}:${m.port}`).join(' ')}, loaded through ${cluster.members[0]!.label}; ` +
          `rounds c1..c${clusterRounds(flags.rounds)} with ${bareLabel} and ${otherLabel}`,
      );
      say(`preloading ${keys} keys into the cluster`);
      await preload(clusterTarget);
      say('');
      say(tableLine([...columns]));
      await runRounds([bare, member, clusterTarget], clusterRounds(flags.rounds), 'c');
      say('');
      const clusterOf = (workload: LoadMethod): ClusterWorkloadSummary => {
        const measured = rows.filter((row) => row.workload === workload && row.round !== 'cwarm' && row.round.startsWith('c'));
        const of = (label: string): RunResult[] => measured.filter((row) => row.server === label).map((row) => row.result);
        const all = rows.filter((row) => row.workload === workload && row.server === clusterLabel).map((row) => row.result);
        return clusterSummary(of(clusterLabel), of(otherLabel), of(bareLabel), {
          non2xx: all.reduce((sum, r) => sum + r.non2xx, 0),
          errors: all.reduce((sum, r) => sum + r.errors, 0),
        });
      };
      const clusterGet = clusterOf('GET');
      const clusterPost = clusterOf('POST');
      for (const [name, summary] of [['GET', clusterGet], ['POST', clusterPost]] as const) {
        say(
          `summary:  ${name.padEnd(4)} cluster/bare = ${summary.clusterToBare.toFixed(2)}, cluster/member = ` +
            `${summary.clusterToMember.toFixed(2)} (no target)  p99 cluster ${summary.clusterP99Ms.toFixed(2)} ms, ` +
            `member ${summary.memberP99Ms.toFixed(2)} ms, bare ${summary.bareP99Ms.toFixed(2)} ms  ` +
            `req/s cluster ${summary.clusterRps} [${summary.clusterRpsRounds.join(' ')}]`,
        );
      }
      jsonLines.push(
        JSON.stringify({
          bench: 'cluster-http',
          members: clusterMembers,
          backupCount: clusterBackupCount,
          loadedThrough: 1,
          generator: generator.name,
          connections,
          valueBytes,
          keys,
          durationS,
          warmupS,
          rounds: clusterRounds(flags.rounds),
          get: clusterGet,
          post: clusterPost,
        }),
      );
    }
  } catch (error) {
    failures.push(interrupted() ? 'interrupted' : error instanceof Error ? error.message : String(error));
  } finally {
    for (const server of servers) {
      const warning = await stopServer(server);
      if (warning !== null) warnings.push(warning);
    }
    if (cluster !== null) warnings.push(...(await cluster.stop()));
    generator?.dispose();
    killAll('SIGKILL'); // anything left (a generator child after an error)
  }
}

process.on('SIGINT', () => onSignal('SIGINT'));
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('exit', () => killAll('SIGKILL'));

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll('SIGKILL');
    process.exitCode = 1;
  },
);
