// Two builds of the member side by side: is a change free? Starts `dist/member.js` of two checkouts
// (each built with `npm run build`), loads them in alternating rounds with the same wrk load as the
// HTTP bench (one thread, 32 connections, 100-byte values, 10,000 keys; POST, then GET of the keys
// the POSTs wrote), and prints each build's requests/s and its member CPU per request from /proc,
// with the ratio B / A of both. A refactor that must not cost anything shows B / A within the
// noise of A against itself (run it with the same checkout twice to see that noise).
//
// Usage: node --import tsx scripts/bench/builds.ts --a DIR --b DIR [--duration S] [--rounds N]
import path from 'node:path';
import { existsSync } from 'node:fs';
import { cpuTicks, delay, host, killAll, median, round, say, startServer, stopServer, track, type Server } from './common.js';
import { ensureWrk, runWrk, WrkScripts } from './wrk.js';

const KEYS = 10_000;
const VALUE_BYTES = 100;
const CONNECTIONS = 32;

function arg(name: string): string | null {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? null) : null;
}

function positive(name: string, fallback: number): number {
  const raw = arg(name);
  const v = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name}: expected a positive whole number`);
  return v;
}

function ticks(pid: number): number {
  const t = cpuTicks(pid);
  if (t === null) throw new Error('builds bench: /proc is needed for the member CPU per request');
  return t;
}

async function main(): Promise<number> {
  const dirs = { A: arg('--a'), B: arg('--b') };
  if (dirs.A === null || dirs.B === null) {
    say('usage: node --import tsx scripts/bench/builds.ts --a DIR --b DIR [--duration S] [--rounds N]');
    return 2;
  }
  for (const d of [dirs.A, dirs.B]) {
    if (!existsSync(path.join(d, 'dist', 'member.js'))) {
      say(`builds bench: ${d}/dist/member.js is missing (run npm run build there)`);
      return 2;
    }
  }
  const seconds = positive('--duration', 5);
  const rounds = positive('--rounds', 7);
  const wrkPath = ensureWrk(say);
  if (wrkPath === null) {
    say('builds bench: wrk is not available');
    return 1;
  }
  const scripts = WrkScripts.create(KEYS, VALUE_BYTES, 42);
  const servers: Record<'A' | 'B', Server> = {
    A: await startServer('A', [path.join(dirs.A, 'dist', 'member.js'), '--port', '0', '--rest', '--rest-groups', 'DATA'], false),
    B: await startServer('B', [path.join(dirs.B, 'dist', 'member.js'), '--port', '0', '--rest', '--rest-groups', 'DATA'], false),
  };
  try {
    const figures: Record<string, { rps: number[]; cpuUs: number[] }> = {};
    for (const method of ['POST', 'GET'] as const) {
      // Warm-up (and, for POST, the keys the GETs read).
      for (const side of ['A', 'B'] as const) await runWrk({ wrkPath, scriptPath: scripts.scriptFor(method), host, port: servers[side].port, threads: 1, connections: CONNECTIONS, durationS: 3, timeoutS: 2 }, track);
      for (const side of ['A', 'B'] as const) figures[`${method} ${side}`] = { rps: [], cpuUs: [] };
      for (let r = 0; r < rounds; r++) {
        for (const side of r % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
          await delay(300);
          const pid = servers[side].child.pid as number;
          const before = ticks(pid);
          const w = await runWrk({ wrkPath, scriptPath: scripts.scriptFor(method), host, port: servers[side].port, threads: 1, connections: CONNECTIONS, durationS: seconds, timeoutS: 2 }, track);
          if (w.non2xx !== 0 || w.errors !== 0) throw new Error(`${side} ${method}: non-2xx ${w.non2xx}, errors ${w.errors}`);
          const cpuUs = ((ticks(pid) - before) * 10_000) / w.requests;
          const f = figures[`${method} ${side}`] as { rps: number[]; cpuUs: number[] };
          f.rps.push(w.rps);
          f.cpuUs.push(cpuUs);
          say(`${method.padEnd(4)} ${side} round ${r + 1}: ${Math.round(w.rps)} requests/s, member CPU ${cpuUs.toFixed(2)} µs per request`);
        }
      }
    }
    const summary: Record<string, unknown> = {};
    for (const method of ['GET', 'POST'] as const) {
      const a = figures[`${method} A`] as { rps: number[]; cpuUs: number[] };
      const b = figures[`${method} B`] as { rps: number[]; cpuUs: number[] };
      const rpsRatio = median(b.rps) / median(a.rps);
      const cpuRatio = median(b.cpuUs) / median(a.cpuUs);
      say(`summary: ${method.padEnd(4)} A ${Math.round(median(a.rps))} req/s ${median(a.cpuUs).toFixed(2)} µs, B ${Math.round(median(b.rps))} req/s ${median(b.cpuUs).toFixed(2)} µs; B/A requests/s ${rpsRatio.toFixed(3)}, CPU per request ${cpuRatio.toFixed(3)}`);
      summary[method.toLowerCase()] = {
        aRps: Math.round(median(a.rps)),
        bRps: Math.round(median(b.rps)),
        aCpuUs: round(median(a.cpuUs), 2),
        bCpuUs: round(median(b.cpuUs), 2),
        rpsRatio: round(rpsRatio, 3),
        cpuRatio: round(cpuRatio, 3),
        aCpuRounds: a.cpuUs.map((x) => round(x, 2)),
        bCpuRounds: b.cpuUs.map((x) => round(x, 2)),
      };
    }
    process.stdout.write(`${JSON.stringify({ bench: 'builds', a: dirs.A, b: dirs.B, durationS: seconds, rounds, ...summary })}\n`);
    return 0;
  } finally {
    scripts.dispose();
    await stopServer(servers.A);
    await stopServer(servers.B);
    killAll('SIGKILL');
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`builds bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll('SIGKILL');
    process.exitCode = 1;
  },
);
