// Persistence benchmark (issue #13), real member processes on loopback and real files:
// - POST ratio: one member with three maps, `plain` (no data-persistence), `durable` (fsync false)
//   and `synced` (fsync true). Alternating closed-loop runs, medians: durable / plain with 24
//   connections (target >= 0.85) and synced / plain with 32 connections (target >= 0.5, group commit).
// - restart time per GB: a member is filled with `--entries` entries of `--value-bytes` (default
//   1,000,000 x 1,000 bytes, about 1 GB of log) in a persistent map, stopped, and started again; the
//   member's own log line gives the time it took to read its log back. Seconds per GB of log
//   (target <= 10 s/GB); the time until /grid/health/ready answers 200 is printed too; sampled
//   entries are read back.
// - memory per entry: two members, one writing a persistent map, one a plain map, each filled with
//   `--memory-entries` entries of 100 bytes; resident bytes per entry (from /proc) of each and their
//   ratio (the log is on disk and no index is added per entry: target about 1.0).
//
//   npm run build && node --import tsx scripts/bench/persistence.ts [--phases ratio,restart,memory]
//     [--entries N] [--value-bytes N] [--memory-entries N]
//
// The last line is JSON: {"bench":"persistence",...}. Exit 1 when something failed to run (a write
// that was not 200, an entry missing after the restart); missed targets are reported.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { forEachConcurrent, freePorts, KeepAliveClient, killAll, until } from '../../tests/harness/cluster.js';
import { startMember, type MemberProcess } from '../../tests/harness/member-process.js';
import { SeededRandom } from '../../src/util/prng.js';
import { findOnPath, runWrk, WrkScripts } from './wrk.js';

const TARGET_RATIO_FSYNC_OFF = 0.85;
const TARGET_RATIO_FSYNC_ON = 0.5;
const TARGET_RESTART_S_PER_GB = 10;
const ROUNDS = 3;
const RUN_MS = 5000;
const PHASES = ['ratio', 'restart', 'memory'] as const;

interface Options {
  phases: Set<string>;
  entries: number;
  valueBytes: number;
  memoryEntries: number;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { phases: new Set(PHASES), entries: 1_000_000, valueBytes: 1000, memoryEntries: 500_000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (flag === '--phases') {
      const list = (argv[++i] ?? '').split(',');
      for (const p of list) if (!(PHASES as readonly string[]).includes(p)) throw new Error(`--phases takes a list of ${PHASES.join(', ')}`);
      o.phases = new Set(list);
      continue;
    }
    const v = Number(argv[++i]);
    if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${flag} takes a positive integer`);
    if (flag === '--entries') o.entries = v;
    else if (flag === '--value-bytes') o.valueBytes = v;
    else if (flag === '--memory-entries') o.memoryEntries = v;
    else throw new Error(`unknown flag ${flag} (--phases, --entries, --value-bytes, --memory-entries)`);
  }
  return o;
}

const say = (line: string): void => void process.stdout.write(`${line}\n`);

function memberXml(port: number, baseDir: string): string {
  return `<grid><cluster-name>bench</cluster-name>
  <network><public-address>127.0.0.1</public-address><port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list><member>127.0.0.1:${port}</member></member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api></network>
  <persistence enabled="true"><base-dir>${baseDir}</base-dir></persistence>
  <map name="durable"><data-persistence enabled="true" fsync="false"/></map>
  <map name="synced"><data-persistence enabled="true" fsync="true"/></map>
  </grid>`;
}

function start(port: number, baseDir: string): Promise<MemberProcess> {
  return startMember({ xml: memberXml(port, baseDir), args: ['--port', String(port)], stdoutCharsMax: 50_000 });
}

async function ready(port: number): Promise<true | null> {
  const c = new KeepAliveClient(port);
  try {
    return (await c.request('GET', '/grid/health/ready')).status === 200 ? true : null;
  } catch {
    return null;
  } finally {
    c.close();
  }
}

/** wrk when it is installed (the load generator then costs little CPU beside the member), else null. */
const WRK = findOnPath('wrk');
const wrkScripts = new Map<string, WrkScripts>();

async function postRate(port: number, map: string, connections: number, ms: number, seed: number, value: string): Promise<number> {
  if (WRK !== null) {
    let scripts = wrkScripts.get(map);
    if (scripts === undefined) wrkScripts.set(map, (scripts = WrkScripts.create(10_000, value.length, 7, `/grid/rest/maps/${map}/k`)));
    const r = await runWrk({ wrkPath: WRK, scriptPath: scripts.postPath, host: '127.0.0.1', port, threads: 1, connections, durationS: Math.max(1, Math.round(ms / 1000)), timeoutS: 10 }, () => {});
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`POST ${map}: ${r.non2xx} answers not 2xx, ${r.errors} socket errors (${r.firstError ?? ''})`);
    return r.rps;
  }
  return postRateNode(port, map, connections, ms, seed, value);
}

async function postRateNode(port: number, map: string, connections: number, ms: number, seed: number, value: string): Promise<number> {
  let done = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      const c = new KeepAliveClient(port);
      const rnd = new SeededRandom(seed * 100 + w);
      try {
        while (performance.now() < end) {
          const r = await c.request('POST', `/grid/rest/maps/${map}/k${rnd.nextInt(10_000)}`, { body: value, headers: { 'Content-Type': 'text/plain' } });
          if (r.status !== 200) throw new Error(`POST ${map} answered ${r.status}`);
          done++;
        }
      } finally {
        c.close();
      }
    }),
  );
  return done / (ms / 1000);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return n;
}

/** CPU time (user + system) a process used so far, in ms. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function rssBytes(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m === null ? NaN : Number(m[1]) * 1024;
}

async function fill(port: number, map: string, entries: number, value: string, prefix = 'e'): Promise<number> {
  const t0 = performance.now();
  const clients = Array.from({ length: 32 }, () => new KeepAliveClient(port));
  const chunks = Array.from({ length: Math.ceil(entries / 1000) }, (_, k) => k);
  try {
    await forEachConcurrent(chunks, clients.length, async (k, w) => {
      const c = clients[w] as KeepAliveClient;
      for (let i = k * 1000; i < Math.min(entries, (k + 1) * 1000); i++) {
        const r = await c.request('POST', `/grid/rest/maps/${map}/${prefix}${i}`, { body: value, headers: { 'Content-Type': 'text/plain' } });
        if (r.status !== 200) throw new Error(`filling ${map}: ${r.status}`);
      }
    });
  } finally {
    for (const c of clients) c.close();
  }
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const out: Record<string, number | string> = { bench: 'persistence' };
  const members: MemberProcess[] = [];
  const dirs: string[] = [];
  const tempDir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-bench-persist-'));
    dirs.push(d);
    return d;
  };
  let failed = false;
  try {
    if (o.phases.has('ratio')) {
      const [port] = (await freePorts(1)) as [number];
      const m = await start(port, tempDir());
      members.push(m);
      await until('the member is ready', 60_000, () => ready(port));
      const value = 'x'.repeat(100);
      for (const map of ['plain', 'durable', 'synced']) await postRate(port, map, 24, 1500, 1, value);
      const plain24: number[] = [];
      const durable: number[] = [];
      const plain32: number[] = [];
      const synced: number[] = [];
      const cpu = { plain: { ms: 0, writes: 0 }, durable: { ms: 0, writes: 0 }, synced: { ms: 0, writes: 0 } };
      const measured = async (map: 'plain' | 'durable' | 'synced', connections: number, seed: number): Promise<number> => {
        const c0 = cpuMs(m.child.pid);
        const rate = await postRate(port, map, connections, RUN_MS, seed, value);
        cpu[map].ms += cpuMs(m.child.pid) - c0;
        cpu[map].writes += (rate * RUN_MS) / 1000;
        return rate;
      };
      for (let r = 0; r < ROUNDS; r++) {
        plain24.push(await measured('plain', 24, 10 + r));
        durable.push(await measured('durable', 24, 20 + r));
        plain32.push(await measured('plain', 32, 30 + r));
        synced.push(await measured('synced', 32, 40 + r));
        say(`  round ${r + 1}: plain ${Math.round(plain24[r] as number)}/s, fsync false ${Math.round(durable[r] as number)}/s; plain (32 connections) ${Math.round(plain32[r] as number)}/s, fsync true ${Math.round(synced[r] as number)}/s`);
      }
      const us = (c: { ms: number; writes: number }): string => ((c.ms * 1000) / c.writes).toFixed(1);
      say(`  load generator: ${WRK === null ? 'Node client (wrk not installed)' : 'wrk, 1 thread'}; member CPU µs per write: plain ${us(cpu.plain)}, fsync false ${us(cpu.durable)}, fsync true ${us(cpu.synced)}`);
      const off = median(durable) / median(plain24);
      const on = median(synced) / median(plain32);
      say(`  POST ratio with persistence, fsync false: ${off.toFixed(2)} (${Math.round(median(durable))} vs ${Math.round(median(plain24))}/s; target >= ${TARGET_RATIO_FSYNC_OFF}) ${off >= TARGET_RATIO_FSYNC_OFF ? 'ok' : 'UNDER TARGET'}`);
      say(`  POST ratio with persistence, fsync true, 32 connections: ${on.toFixed(2)} (${Math.round(median(synced))} vs ${Math.round(median(plain32))}/s; target >= ${TARGET_RATIO_FSYNC_ON}) ${on >= TARGET_RATIO_FSYNC_ON ? 'ok' : 'UNDER TARGET'}`);
      Object.assign(out, { ratioFsyncOff: Number(off.toFixed(3)), ratioFsyncOn: Number(on.toFixed(3)), plainPerS: Math.round(median(plain24)), fsyncOffPerS: Math.round(median(durable)), plain32PerS: Math.round(median(plain32)), fsyncOnPerS: Math.round(median(synced)) });
      await m.stop('SIGTERM', 30_000);
      members.length = 0;
    }

    if (o.phases.has('restart')) {
      const [port] = (await freePorts(1)) as [number];
      const base = tempDir();
      let m = await start(port, base);
      members.push(m);
      await until('the member is ready', 60_000, () => ready(port));
      const value = 'v'.repeat(o.valueBytes);
      const fillMs = await fill(port, 'durable', o.entries, value);
      say(`  filled ${o.entries} entries of ${o.valueBytes} bytes in ${Math.round(fillMs)} ms`);
      await m.stop('SIGTERM', 120_000);
      members.length = 0;
      const logBytes = dirBytes(base);
      const t0 = performance.now();
      m = await start(port, base);
      members.push(m);
      const loaded = await m.waitForOutput(/loaded (\d+) record\(s\) from (\d+) segment\(s\), (\d+) bytes, in (\d+) ms/, 600_000);
      await until('the restarted member is ready', 600_000, () => ready(port));
      const readyMs = performance.now() - t0;
      const loadMs = Number(loaded[4]);
      const gb = logBytes / 1e9;
      const perGb = loadMs / 1000 / gb;
      say(`  restart: ${Math.round(logBytes / 1e6)} MB of log (${loaded[1]} records, ${loaded[2]} segments) read back in ${loadMs} ms = ${perGb.toFixed(1)} s/GB (target <= ${TARGET_RESTART_S_PER_GB}) ${perGb <= TARGET_RESTART_S_PER_GB ? 'ok' : 'OVER TARGET'}; ready ${Math.round(readyMs)} ms after the start`);
      const c = new KeepAliveClient(port);
      const rnd = new SeededRandom(5);
      let missing = 0;
      try {
        for (let i = 0; i < 2000; i++) {
          const k = rnd.nextInt(o.entries);
          const r = await c.request('GET', `/grid/rest/maps/durable/e${k}`);
          if (r.status !== 200 || r.text() !== value) missing++;
        }
      } finally {
        c.close();
      }
      if (missing > 0) {
        failed = true;
        say(`  FAILED: ${missing} of 2000 sampled entries missing or wrong after the restart`);
      }
      Object.assign(out, { restartEntries: o.entries, restartLogBytes: logBytes, restartLoadMs: loadMs, restartSecondsPerGb: Number(perGb.toFixed(2)), restartReadyMs: Math.round(readyMs), restartMissing: missing });
      await m.stop('SIGTERM', 60_000);
      members.length = 0;
    }

    if (o.phases.has('memory')) {
      const ports = await freePorts(2);
      const value = 'm'.repeat(100);
      const perEntry: number[] = [];
      for (const [i, map] of (['durable', 'plain'] as const).entries()) {
        const port = ports[i] as number;
        const m = await start(port, tempDir());
        members.push(m);
        await until('the member is ready', 60_000, () => ready(port));
        const before = rssBytes(m.child.pid);
        await fill(port, map, o.memoryEntries, value, 'k');
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const after = rssBytes(m.child.pid);
        perEntry.push((after - before) / o.memoryEntries);
        await m.stop('SIGTERM', 60_000);
        members.length = 0;
      }
      const [withLog, without] = perEntry as [number, number];
      say(`  resident bytes per entry (${o.memoryEntries} entries of 100 bytes): with persistence ${withLog.toFixed(1)}, without ${without.toFixed(1)}; ratio ${(withLog / without).toFixed(2)}`);
      Object.assign(out, { memoryEntries: o.memoryEntries, rssPerEntryPersistent: Number(withLog.toFixed(1)), rssPerEntryPlain: Number(without.toFixed(1)), rssRatio: Number((withLog / without).toFixed(3)) });
    }
  } catch (e) {
    failed = true;
    say(`persistence bench failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    await killAll(members);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    for (const w of wrkScripts.values()) w.dispose();
  }
  say(JSON.stringify(out));
  process.exit(failed ? 1 : 0);
}

void main();
