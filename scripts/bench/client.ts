// The client protocol against REST on one member (#15 "Benchmark"): map get and put through the
// official Node client (`hazelcast-client`, smart routing, 32 calls in flight in all, 100-byte
// String values, 10,000 keys) next to REST GET and POST through wrk (one thread, 32 connections,
// the same keys and values) on the same member, in alternating rounds. Prints calls/s, the ratio
// client / REST (target ≥ 1.5), and the member's CPU per call from /proc (target: below REST's).
//
// The clients run in --client-processes processes (default 2, 16 calls in flight each): one Node
// client saturates its own core at about 135,000 calls/s (its JavaScript encodes, decodes and
// resolves a promise per call) while the member, the thing measured, is about half busy; wrk's C
// does the same work for REST in one thread. With 1 process the bench measures the client
// library rather than the member. `set` is the client's put here: `put` answers the old value (one
// more read and copy), which REST's POST does not.
//
// Usage: node --import tsx scripts/bench/client.ts [--duration S] [--rounds N] [--client-processes N]
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { benchDir, cpuTicks, delay, host, killAll, median, memberEntry, round, say, startServer, stopServer, track } from './common.js';
import { ensureWrk, runWrk, WrkScripts } from './wrk.js';
import type { WorkerCommand, WorkerReply } from './client-worker.js';

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

/** A client process (client-worker.ts) and the next reply it sends. */
class ClientProcess {
  private waiting: ((r: WorkerReply) => void) | null = null;
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (r: WorkerReply) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(r);
    });
    child.on('exit', (code) => {
      const w = this.waiting;
      this.waiting = null;
      w?.({ kind: 'error', message: `client process exited with ${code}` });
    });
  }

  static async start(address: string, clusterName: string, inFlight: number, seed: number): Promise<ClientProcess> {
    const child = fork(path.join(benchDir, 'client-worker.ts'), [address, clusterName, String(inFlight), String(KEYS), String(VALUE_BYTES), String(seed)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    track(child);
    const p = new ClientProcess(child);
    await p.next();
    return p;
  }

  private next(): Promise<WorkerReply & { kind: 'done' | 'ready' }> {
    return new Promise((resolve, reject) => {
      this.waiting = (r) => (r.kind === 'error' ? reject(new Error(`client process: ${r.message}`)) : resolve(r));
    });
  }

  ask(c: WorkerCommand): Promise<WorkerReply & { kind: 'done' | 'ready' }> {
    const answer = this.next();
    this.child.send(c);
    return answer;
  }

  stop(): void {
    if (this.child.connected) this.child.send({ cmd: 'stop' } satisfies WorkerCommand);
  }
}

/** Every client process runs the loop at once; calls/s of all together. */
async function clientRun(clients: readonly ClientProcess[], method: 'GET' | 'POST', seconds: number): Promise<number> {
  const answers = await Promise.all(clients.map((c) => c.ask({ cmd: 'run', method, seconds })));
  return answers.reduce((sum, a) => sum + (a.kind === 'done' ? a.calls / a.seconds : 0), 0);
}

async function main(): Promise<number> {
  const seconds = option('--duration', 5);
  const rounds = option('--rounds', 5);
  const wrkPath = ensureWrk(say);
  if (wrkPath === null) {
    say('client: wrk is not available; the client bench needs it for the REST side');
    return 1;
  }
  const member = await startServer('member', [memberEntry, '--port', '0', '--rest', '--rest-groups', 'DATA', '--cluster-name', 'bench-client'], false);
  const pid = member.child.pid!;
  const scripts = WrkScripts.create(KEYS, VALUE_BYTES, 42, '/grid/rest/maps/bench/k');
  const processes = option('--client-processes', 2);
  if (!Number.isInteger(processes) || processes > IN_FLIGHT) throw new Error(`--client-processes: a whole number up to ${IN_FLIGHT}`);
  const clients: ClientProcess[] = [];
  try {
    // The 32 calls in flight, shared out as evenly as they go.
    for (let i = 0; i < processes; i++) clients.push(await ClientProcess.start(`${host}:${member.port}`, 'bench-client', Math.floor(((i + 1) * IN_FLIGHT) / processes) - Math.floor((i * IN_FLIGHT) / processes), 42 + i));
    // Preload every key through the clients (REST reads them as text/plain).
    await Promise.all(clients.map((c, i) => c.ask({ cmd: 'preload', from: Math.floor((i * KEYS) / processes), to: Math.floor(((i + 1) * KEYS) / processes) })));
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
      await clientRun(clients, method, 1); // warm-up
      await runWrk({ wrkPath, scriptPath: scripts.scriptFor(method), host, port: member.port, threads: 1, connections: IN_FLIGHT, durationS: 1, timeoutS: 2 }, track);
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? (['client', 'rest'] as const) : (['rest', 'client'] as const)) {
          await delay(300);
          const before = ticks(pid);
          let rate: number;
          if (side === 'client') {
            rate = await clientRun(clients, method, seconds);
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
      // Each round runs both sides back to back, so a slow phase of the machine (which hurts the
      // syscall-bound REST side more) tends to hit both runs of a round: the ratio by round moves
      // less than the ratio of the medians. PASS needs both, as the HTTP bench does.
      const roundRatios = r.client.map((c, i) => c / (r.rest[i] as number));
      const pairedRatio = median(roundRatios);
      const pass = ratio >= TARGET && pairedRatio >= TARGET;
      const clientCpu = median(r.clientCpuUs);
      const restCpu = median(r.restCpuUs);
      say(
        `summary:  ${method.padEnd(4)} client/REST = ${ratio.toFixed(2)}, by round ${pairedRatio.toFixed(2)} [${roundRatios.map((x) => x.toFixed(2)).join(' ')}] (target ≥ ${TARGET} for both: ${pass ? 'PASS' : 'MISS'})  ` +
          `member CPU per call client ${clientCpu.toFixed(1)} µs, REST ${restCpu.toFixed(1)} µs (${clientCpu < restCpu ? 'below' : 'NOT below'})`,
      );
      summary[method.toLowerCase()] = {
        clientRps: Math.round(median(r.client)),
        restRps: Math.round(median(r.rest)),
        ratio: round(ratio, 3),
        pairedRatio: round(pairedRatio, 3),
        roundRatios: roundRatios.map((x) => round(x, 3)),
        target: TARGET,
        pass,
        clientCpuUsPerCall: round(clientCpu, 2),
        restCpuUsPerCall: round(restCpu, 2),
        clientRounds: r.client.map(Math.round),
        restRounds: r.rest.map(Math.round),
      };
    }
    process.stdout.write(`${JSON.stringify({ bench: 'client', inFlight: IN_FLIGHT, clientProcesses: processes, valueBytes: VALUE_BYTES, keys: KEYS, durationS: seconds, rounds, ...summary })}\n`);
    return 0;
  } finally {
    for (const c of clients) c.stop();
    await delay(200);
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
