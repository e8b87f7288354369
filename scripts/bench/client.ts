// The client protocol against REST on one member (#15 "Benchmark"): map get and put through the
// official Node client (`hazelcast-client`, smart routing, 32 calls in flight, 100-byte String
// values, 10,000 keys) next to REST GET and POST through wrk (one thread, 32 connections, the same
// keys and values) on the same member, in alternating rounds. Prints calls/s, the ratio
// client / REST (target ≥ 1.5), and the member's CPU per call from /proc (target: below REST's).
//
// The client runs in this process: its own JavaScript (encoding, promises) is paid on the
// machine's second core, as wrk's C is for REST. `set` is the client's put here: `put` answers
// the old value (one more read and copy), which REST's POST does not.
//
// Usage: node --import tsx scripts/bench/client.ts [--duration S] [--rounds N]
import { createRequire } from 'node:module';
import { cpuTicks, delay, host, killAll, median, memberEntry, round, say, startServer, stopServer, track } from './common.js';
import { ensureWrk, runWrk, WrkScripts } from './wrk.js';

interface HzMap {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<void>;
}
interface HzClient {
  getMap(name: string): Promise<HzMap>;
  shutdown(): Promise<void>;
}
const hz = createRequire(import.meta.url)('hazelcast-client') as { Client: { newHazelcastClient(config: unknown): Promise<HzClient> } };

const KEYS = 10_000;
const VALUE_BYTES = 100;
const IN_FLIGHT = 32;
const TARGET = 1.5;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
  return v;
}

/** The member's CPU ticks; the bench needs /proc. */
function ticks(pid: number): number {
  const t = cpuTicks(pid);
  if (t === null) throw new Error('client bench: /proc is needed for the member CPU per call');
  return t;
}

async function clientRun(map: HzMap, method: 'GET' | 'POST', seconds: number, value: string): Promise<number> {
  let calls = 0;
  let seed = 42;
  const end = Date.now() + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (Date.now() < end) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      const key = `k${seed % KEYS}`;
      if (method === 'GET') await map.get(key);
      else await map.set(key, value);
      calls++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, () => loop()));
  return calls / ((Date.now() - started) / 1000);
}

async function main(): Promise<number> {
  const seconds = option('--duration', 5);
  const rounds = option('--rounds', 3);
  const wrkPath = ensureWrk(say);
  if (wrkPath === null) {
    say('client: wrk is not available; the client bench needs it for the REST side');
    return 1;
  }
  const member = await startServer('member', [memberEntry, '--port', '0', '--rest', '--rest-groups', 'DATA', '--cluster-name', 'bench-client'], false);
  const pid = member.child.pid!;
  const scripts = WrkScripts.create(KEYS, VALUE_BYTES, 42, '/grid/rest/maps/bench/k');
  let client: HzClient | null = null;
  try {
    client = await hz.Client.newHazelcastClient({
      clusterName: 'bench-client',
      network: { clusterMembers: [`${host}:${member.port}`] },
      properties: { 'hazelcast.logging.level': 'OFF' },
    });
    const map = await client.getMap('bench');
    const value = 'v'.repeat(VALUE_BYTES);
    // Preload every key through the client (REST reads them as text/plain).
    for (let i = 0; i < KEYS; i += IN_FLIGHT) await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, KEYS - i) }, (_, j) => map.set(`k${i + j}`, value)));
    interface Figures {
      client: number[];
      rest: number[];
      clientCpuUs: number[];
      restCpuUs: number[];
    }
    const results: Record<string, Figures> = {};
    for (const method of ['GET', 'POST'] as const) {
      const r: Figures = { client: [], rest: [], clientCpuUs: [], restCpuUs: [] };
      results[method] = r;
      await clientRun(map, method, 1, value); // warm-up
      await runWrk({ wrkPath, scriptPath: scripts.scriptFor(method), host, port: member.port, threads: 1, connections: IN_FLIGHT, durationS: 1, timeoutS: 2 }, track);
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? (['client', 'rest'] as const) : (['rest', 'client'] as const)) {
          await delay(300);
          const before = ticks(pid);
          let rate: number;
          if (side === 'client') {
            rate = await clientRun(map, method, seconds, value);
          } else {
            const w = await runWrk({ wrkPath, scriptPath: scripts.scriptFor(method), host, port: member.port, threads: 1, connections: IN_FLIGHT, durationS: seconds, timeoutS: 2 }, track);
            if (w.non2xx !== 0 || w.errors !== 0) throw new Error(`REST ${method}: non-2xx ${w.non2xx}, errors ${w.errors}`);
            rate = w.rps;
          }
          const cpuUs = ((ticks(pid) - before) * 10_000) / (rate * seconds);
          r[side].push(rate);
          r[side === 'client' ? 'clientCpuUs' : 'restCpuUs'].push(cpuUs);
          say(`${method.padEnd(4)} ${side.padEnd(6)} round ${round + 1}: ${Math.round(rate)} calls/s, member CPU ${cpuUs.toFixed(1)} µs per call`);
        }
      }
    }
    const summary: Record<string, unknown> = {};
    for (const [method, r] of Object.entries(results)) {
      const ratio = median(r.client) / median(r.rest);
      const clientCpu = median(r.clientCpuUs);
      const restCpu = median(r.restCpuUs);
      say(
        `summary:  ${method.padEnd(4)} client/REST = ${ratio.toFixed(2)} (target ≥ ${TARGET}: ${ratio >= TARGET ? 'PASS' : 'MISS'})  ` +
          `member CPU per call client ${clientCpu.toFixed(1)} µs, REST ${restCpu.toFixed(1)} µs (${clientCpu < restCpu ? 'below' : 'NOT below'})`,
      );
      summary[method.toLowerCase()] = {
        clientRps: Math.round(median(r.client)),
        restRps: Math.round(median(r.rest)),
        ratio: round(ratio, 3),
        target: TARGET,
        pass: ratio >= TARGET,
        clientCpuUsPerCall: round(clientCpu, 2),
        restCpuUsPerCall: round(restCpu, 2),
        clientRounds: r.client.map(Math.round),
        restRounds: r.rest.map(Math.round),
      };
    }
    process.stdout.write(`${JSON.stringify({ bench: 'client', inFlight: IN_FLIGHT, valueBytes: VALUE_BYTES, keys: KEYS, durationS: seconds, rounds, ...summary })}\n`);
    return 0;
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await stopServer(member);
    killAll('SIGKILL');
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`client bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAll('SIGKILL');
    process.exitCode = 1;
  },
);
