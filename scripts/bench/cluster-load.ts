// Load for the rebalance benchmark (cluster.ts), run as a child process so that it never shares an
// event loop with the runner. HTTP/1.1 over raw node:net sockets, like loadgen.ts, whose response
// parser, histogram and xorshift it reuses. Two modes:
//
// - `preload`: writes keys 0 … keys-1 once each (POST, value `entryValue(key, 0)`), spread over
//   every port in `ports` with `connectionsPerPort` keep-alive connections each and up to `pipeline`
//   requests in flight per connection (HTTP pipelining; answers come back in request order). Lost
//   requests are not retried: the result then counts fewer `ok` than keys and the runner fails.
// - `steady`: until the runner writes `stop` on stdin (or `maxDurationMs` passes), GET connections
//   read random keys and check the answer (200, the value of THAT key, `valueBytes` long; 204 is a
//   missing entry), POST connections overwrite random keys with a new generation of their value.
//   Each POST connection owns the keys `key % postConnections == its index` and has one request in
//   flight, so the last acknowledged generation of a key is its value. `rateRps` caps the total rate
//   (0 = as fast as the answers come). On stop, nothing new is sent and requests in flight get up to
//   `requestTimeoutMs` to answer, so every request sent is counted. Failures are kept with their
//   time; the acknowledged generations go to `writesFile` for the runner's read-back check.
//
// As a child: node --import tsx scripts/bench/cluster-load.ts '<options JSON>' prints one line
// `{"clusterload":<result>}` and exits 0 (also when requests failed: the runner judges the counts).
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchValue, LatencyHistogram, makeRandom, parseResponse, runJsonChild } from './loadgen.js';

export interface PreloadOptions {
  readonly mode: 'preload';
  readonly host: string;
  readonly ports: readonly number[];
  readonly mapName: string;
  readonly keys: number;
  readonly valueBytes: number;
  readonly connectionsPerPort: number;
  readonly pipeline: number;
  readonly deadlineMs: number;
}

export interface SteadyOptions {
  readonly mode: 'steady';
  readonly host: string;
  readonly port: number;
  readonly mapName: string;
  readonly keys: number;
  readonly valueBytes: number;
  readonly getConnections: number;
  readonly postConnections: number;
  /** Total requests/s over every connection; 0 = unthrottled (closed loop). */
  readonly rateRps: number;
  readonly requestTimeoutMs: number;
  readonly maxDurationMs: number;
  readonly writesFile: string;
  readonly seed: number;
}

export type ClusterLoadOptions = PreloadOptions | SteadyOptions;

export interface PreloadResult {
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly elapsedMs: number;
  readonly rps: number;
  readonly firstError: string | null;
}

export interface FailureRecord {
  /** Milliseconds since the epoch when the request was sent. */
  readonly sentAtMs: number;
  readonly method: 'GET' | 'POST';
  readonly key: number;
  /** `status 503`, `missing (204)`, `wrong value …`, `timeout`, `connection closed`. */
  readonly what: string;
  readonly latencyMs: number;
}

export interface MethodStats {
  readonly requests: number;
  readonly ok: number;
  readonly non2xx: number;
  /** GET only: 204 for a key that was preloaded. */
  readonly missing: number;
  /** GET only: 200 with a value that is not this key's. */
  readonly wrongValue: number;
  /** Timeouts and connections closed with the request in flight. */
  readonly errors: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface SteadyResult {
  readonly startedAtMs: number;
  readonly elapsedMs: number;
  readonly get: MethodStats;
  readonly post: MethodStats;
  /** Requests that failed, in order of sending (the first 200). */
  readonly failures: readonly FailureRecord[];
  readonly failuresTotal: number;
  /** Answered requests per second since the start: [ok, failed]. */
  readonly perSecond: readonly (readonly [number, number])[];
}

/** What a steady run wrote: the last acknowledged generation per key, and unanswered ones. */
export interface SteadyWrites {
  readonly acked: readonly (readonly [number, number])[];
  /** Writes whose answer never came (or was not 2xx): they may or may not have taken effect. */
  readonly uncertain: readonly (readonly [number, number])[];
}

const valuePattern = /^g(\d+):k(\d+):/;
const reconnectsMax = 1000;
const reconnectDelayMs = 20;
const watchdogIntervalMs = 100;
const childGraceMs = 60_000;
const failuresKept = 200;

/** The value of `key` at generation `gen`: `g<gen>:k<key>:` filled up to `valueBytes` ASCII bytes. */
export function entryValue(key: number, gen: number, valueBytes: number): string {
  const prefix = `g${gen}:k${key}:`;
  if (prefix.length > valueBytes) throw new Error(`entryValue: ${valueBytes} bytes cannot hold ${prefix}`);
  return prefix + benchValue(valueBytes).slice(prefix.length);
}

/** Parses a value written by `entryValue`: its key and generation, or null. */
export function parseEntryValue(text: string): { key: number; gen: number } | null {
  const match = valuePattern.exec(text);
  return match === null ? null : { gen: Number(match[1]), key: Number(match[2]) };
}

function postRequest(hostHeader: string, path: string, body: string): Buffer {
  return Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    'latin1',
  );
}

function getRequest(hostHeader: string, path: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n\r\n`, 'latin1');
}

// ---------------------------------------------------------------------------------------------
// preload

export function runPreload(o: PreloadOptions): Promise<PreloadResult> {
  const prefix = `/grid/rest/maps/${o.mapName}/k`;
  let nextKey = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let firstError: string | null = null;
  const statuses: Record<string, number> = {};
  const start = performance.now();
  let finished = false;
  return new Promise<PreloadResult>((resolve) => {
    const sockets = new Set<net.Socket>();
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      for (const s of sockets) s.destroy();
      const elapsedMs = Math.max(performance.now() - start, 1);
      resolve({ ok, non2xx, errors, statuses, elapsedMs, rps: (ok * 1000) / elapsedMs, firstError });
    };
    const deadline = setTimeout(() => {
      if (firstError === null) firstError = `preload did not finish within ${o.deadlineMs} ms`;
      finish();
    }, o.deadlineMs);
    let open = 0;
    const connect = (port: number): void => {
      const hostHeader = `${o.host}:${port}`;
      const socket = net.connect({ host: o.host, port, noDelay: true });
      sockets.add(socket);
      open += 1;
      let inFlight = 0;
      let pending: Buffer | null = null;
      const fill = (): void => {
        const batch: Buffer[] = [];
        while (inFlight < o.pipeline && nextKey < o.keys) {
          const key = nextKey++;
          batch.push(postRequest(hostHeader, `${prefix}${key}`, entryValue(key, 0, o.valueBytes)));
          inFlight += 1;
        }
        if (batch.length > 0) socket.write(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
        else if (inFlight === 0) socket.end();
      };
      socket.on('connect', fill);
      socket.on('data', (chunk: Buffer) => {
        let buffer = pending === null ? chunk : Buffer.concat([pending, chunk]);
        pending = null;
        for (;;) {
          const parsed = parseResponse(buffer);
          if (parsed === null) {
            if (buffer.length > 0) pending = buffer;
            break;
          }
          if (typeof parsed === 'string') {
            errors += 1;
            if (firstError === null) firstError = `protocol: ${parsed}`;
            socket.destroy();
            return;
          }
          buffer = buffer.subarray(parsed.totalBytes);
          if (parsed.status < 200) continue;
          inFlight -= 1;
          if (parsed.status < 300) ok += 1;
          else {
            non2xx += 1;
            statuses[String(parsed.status)] = (statuses[String(parsed.status)] ?? 0) + 1;
          }
        }
        fill();
      });
      socket.on('error', (error: Error) => {
        if (firstError === null) firstError = `socket: ${error.message}`;
      });
      socket.on('close', () => {
        sockets.delete(socket);
        open -= 1;
        if (inFlight > 0) {
          errors += inFlight;
          if (firstError === null) firstError = `connection closed with ${inFlight} request(s) in flight`;
        }
        if (open === 0) finish();
      });
    };
    for (const port of o.ports) for (let i = 0; i < o.connectionsPerPort; i++) connect(port);
  });
}

// ---------------------------------------------------------------------------------------------
// steady

class Stats {
  requests = 0;
  ok = 0;
  non2xx = 0;
  missing = 0;
  wrongValue = 0;
  errors = 0;
  readonly statuses: Record<string, number> = {};
  readonly histogram = new LatencyHistogram();

  result(): MethodStats {
    return {
      requests: this.requests,
      ok: this.ok,
      non2xx: this.non2xx,
      missing: this.missing,
      wrongValue: this.wrongValue,
      errors: this.errors,
      statuses: this.statuses,
      p50Ms: this.histogram.percentileMs(0.5),
      p99Ms: this.histogram.percentileMs(0.99),
      maxMs: this.histogram.maxMs,
    };
  }
}

export function runSteady(o: SteadyOptions, stopSignal: Promise<void>): Promise<SteadyResult> {
  const prefix = `/grid/rest/maps/${o.mapName}/k`;
  const hostHeader = `${o.host}:${o.port}`;
  const startedAtMs = Date.now();
  const start = performance.now();
  const stats = { GET: new Stats(), POST: new Stats() };
  const failures: FailureRecord[] = [];
  let failuresTotal = 0;
  const perSecond: [number, number][] = [];
  const acked = new Map<number, number>();
  const uncertain = new Map<number, number[]>();
  const total = o.getConnections + o.postConnections;
  const intervalMs = o.rateRps > 0 ? (1000 * total) / o.rateRps : 0;
  let stopping = false;
  let stopped = false;
  let reconnects = 0;

  const second = (): [number, number] => {
    const index = Math.floor((performance.now() - start) / 1000);
    while (perSecond.length <= index) perSecond.push([0, 0]);
    return perSecond[index]!;
  };

  return new Promise<SteadyResult>((resolve) => {
    const connections: Connection[] = [];

    const finish = (): void => {
      if (stopped) return;
      stopped = true;
      clearInterval(watchdog);
      clearTimeout(maxTimer);
      for (const c of connections) {
        if (c.timer !== null) clearTimeout(c.timer);
        c.socket?.destroy();
      }
      const writes: SteadyWrites = { acked: [...acked], uncertain: [...uncertain].flatMap(([k, gens]) => gens.map((g) => [k, g] as const)) };
      writeFileSync(o.writesFile, JSON.stringify(writes));
      resolve({
        startedAtMs,
        elapsedMs: performance.now() - start,
        get: stats.GET.result(),
        post: stats.POST.result(),
        failures,
        failuresTotal,
        perSecond,
      });
    };

    const maybeFinish = (): void => {
      if (stopping && connections.every((c) => !c.inFlight)) finish();
    };

    class Connection {
      socket: net.Socket | null = null;
      pending: Buffer | null = null;
      inFlight = false;
      sentAt = 0;
      sentAtEpoch = 0;
      key = 0;
      gen = 0;
      sent = 0;
      timer: NodeJS.Timeout | null = null;
      private readonly random: () => number;
      private nextGen = 1;

      constructor(
        readonly method: 'GET' | 'POST',
        readonly index: number,
        private readonly firstAt: number,
      ) {
        this.random = makeRandom(o.seed * 7919 + (method === 'GET' ? 0 : 100_000) + index + 1);
      }

      open(): void {
        const socket = net.connect({ host: o.host, port: o.port, noDelay: true });
        this.socket = socket;
        this.pending = null;
        socket.on('connect', () => this.schedule());
        socket.on('data', (chunk: Buffer) => this.onData(chunk));
        socket.on('error', () => {
          // counted by the close handler
        });
        socket.on('close', () => this.onClose(socket));
      }

      schedule(): void {
        if (stopping || stopped || this.socket === null || this.inFlight || this.timer !== null) return;
        const due = this.firstAt + this.sent * intervalMs;
        const wait = due - performance.now();
        if (intervalMs > 0 && wait > 1) {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.schedule();
          }, wait);
          return;
        }
        this.send();
      }

      private send(): void {
        if (this.socket === null) return;
        this.sent += 1;
        let request: Buffer;
        if (this.method === 'GET') {
          this.key = this.random() % o.keys;
          request = getRequest(hostHeader, `${prefix}${this.key}`);
        } else {
          const slots = Math.ceil((o.keys - this.index) / o.postConnections);
          this.key = this.index + o.postConnections * (this.random() % slots);
          this.gen = this.nextGen++;
          request = postRequest(hostHeader, `${prefix}${this.key}`, entryValue(this.key, this.gen, o.valueBytes));
        }
        this.inFlight = true;
        this.sentAt = performance.now();
        this.sentAtEpoch = Date.now();
        stats[this.method].requests += 1;
        this.socket.write(request);
      }

      private fail(what: string): void {
        failuresTotal += 1;
        second()[1] += 1;
        if (failures.length < failuresKept) {
          failures.push({ sentAtMs: this.sentAtEpoch, method: this.method, key: this.key, what, latencyMs: performance.now() - this.sentAt });
        }
        if (this.method === 'POST') {
          const list = uncertain.get(this.key) ?? [];
          list.push(this.gen);
          uncertain.set(this.key, list);
        }
      }

      private onData(chunk: Buffer): void {
        if (stopped) return;
        const buffer = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
        this.pending = null;
        const parsed = parseResponse(buffer);
        if (parsed === null) {
          this.pending = buffer;
          return;
        }
        const s = stats[this.method];
        if (typeof parsed === 'string' || !this.inFlight || buffer.length !== parsed.totalBytes) {
          s.errors += 1;
          this.fail(`protocol: ${typeof parsed === 'string' ? parsed : 'bytes beyond the one response'}`);
          this.inFlight = false;
          this.socket?.destroy();
          return;
        }
        if (parsed.status < 200) return;
        s.histogram.record((performance.now() - this.sentAt) * 1000);
        this.inFlight = false;
        const status = parsed.status;
        if (status >= 300) {
          s.non2xx += 1;
          s.statuses[String(status)] = (s.statuses[String(status)] ?? 0) + 1;
          const body = buffer.subarray(buffer.indexOf('\r\n\r\n') + 4).toString('latin1');
          this.fail(`status ${status} ${body.replace(/\s+/g, ' ').slice(0, 160)}`.trimEnd());
        } else if (this.method === 'GET' && status === 204) {
          s.missing += 1;
          this.fail('missing (204)');
        } else if (this.method === 'GET') {
          const body = buffer.subarray(buffer.indexOf('\r\n\r\n') + 4).toString('latin1');
          const value = parseEntryValue(body);
          if (value === null || value.key !== this.key || body.length !== o.valueBytes) {
            s.wrongValue += 1;
            this.fail(`wrong value: ${JSON.stringify(body.slice(0, 40))}`);
          } else {
            s.ok += 1;
            second()[0] += 1;
          }
        } else {
          s.ok += 1;
          second()[0] += 1;
          acked.set(this.key, this.gen);
        }
        if (stopping) maybeFinish();
        else this.schedule();
      }

      onClose(socket: net.Socket): void {
        if (stopped || socket !== this.socket) return;
        this.socket = null;
        if (this.timer !== null) {
          clearTimeout(this.timer);
          this.timer = null;
        }
        if (this.inFlight) {
          stats[this.method].errors += 1;
          this.fail('connection closed with the request in flight');
          this.inFlight = false;
        }
        if (stopping) {
          maybeFinish();
          return;
        }
        if (reconnects >= reconnectsMax) return;
        reconnects += 1;
        setTimeout(() => {
          if (!stopping && !stopped) this.open();
        }, reconnectDelayMs);
      }

      /** A request without an answer after the timeout: an error; the socket is replaced. */
      checkTimeout(now: number): void {
        if (!this.inFlight || now - this.sentAt <= o.requestTimeoutMs) return;
        stats[this.method].errors += 1;
        this.fail(`timeout: no answer within ${o.requestTimeoutMs} ms`);
        this.inFlight = false;
        this.socket?.destroy();
      }
    }

    const watchdog = setInterval(() => {
      const now = performance.now();
      for (const c of connections) c.checkTimeout(now);
      maybeFinish();
    }, watchdogIntervalMs);
    const maxTimer = setTimeout(() => {
      stopping = true;
      maybeFinish();
    }, o.maxDurationMs);
    void stopSignal.then(() => {
      stopping = true;
      for (const c of connections) {
        if (c.timer !== null) {
          clearTimeout(c.timer);
          c.timer = null;
        }
      }
      maybeFinish();
    });

    // Spread the connections' first sends over one interval so the paced load is even.
    for (let i = 0; i < o.getConnections; i++) connections.push(new Connection('GET', i, start + (intervalMs * connections.length) / total));
    for (let i = 0; i < o.postConnections; i++) connections.push(new Connection('POST', i, start + (intervalMs * connections.length) / total));
    for (const c of connections) c.open();
  });
}

// ---------------------------------------------------------------------------------------------
// Child-process plumbing.

const selfPath = fileURLToPath(import.meta.url);

export interface LoadChild<R> {
  readonly child: ChildProcess;
  /** Steady mode: tells the child to stop sending and report. */
  stop(): void;
  readonly result: Promise<R>;
}

/** Starts the load in a child process (`node --import tsx cluster-load.ts`). */
export function startLoadChild<R extends PreloadResult | SteadyResult>(options: ClusterLoadOptions, track: (child: ChildProcess) => void): LoadChild<R> {
  const limitMs = (options.mode === 'preload' ? options.deadlineMs : options.maxDurationMs) + childGraceMs;
  const { child, result } = runJsonChild<R>(selfPath, options, 'clusterload', limitMs, track, 'pipe');
  return {
    child,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.stdin?.end('stop\n');
    },
    result,
  };
}

async function main(): Promise<void> {
  const text = process.argv[2];
  if (text === undefined) {
    process.stderr.write("usage: node --import tsx scripts/bench/cluster-load.ts '<options JSON>'\n");
    process.exit(2);
  }
  const options = JSON.parse(text) as ClusterLoadOptions;
  if (options.host !== '127.0.0.1' && options.host !== '::1') throw new Error('cluster-load: loopback only');
  const limitMs = (options.mode === 'preload' ? options.deadlineMs : options.maxDurationMs) + childGraceMs / 2;
  setTimeout(() => {
    process.stderr.write('cluster-load: did not finish in time\n');
    process.exit(3);
  }, limitMs).unref();
  let result: PreloadResult | SteadyResult;
  if (options.mode === 'preload') {
    result = await runPreload(options);
  } else {
    const stopSignal = new Promise<void>((resolve) => {
      process.stdin.setEncoding('utf8');
      process.stdin.on('data', (chunk: string) => {
        if (chunk.includes('stop')) resolve();
      });
      process.stdin.on('end', () => resolve());
      process.stdin.on('error', () => resolve());
    });
    result = await runSteady(options, stopSignal);
  }
  process.stdout.write(JSON.stringify({ clusterload: result }) + '\n');
  process.exit(0);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`cluster-load: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
