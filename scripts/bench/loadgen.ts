// The built-in load generator of the HTTP benchmark, used when wrk is not installed (or with
// `--generator node`). It speaks HTTP/1.1 over raw node:net sockets — no http module on the client
// side, so the client costs little next to the server — with keep-alive and one request in flight
// per connection, like wrk without pipelining.
//
// Two modes:
// - `random`: until the duration ends, each connection sends a request for a random key (a seeded
//   xorshift per connection, so two servers see the same key sequence), waits for the whole
//   response, records its latency and sends the next one. Responses that arrive after the deadline
//   are not counted.
// - `preload`: the connections share a counter and send each key once (POST), then stop; bounded by
//   the duration as a time limit.
//
// Latency goes into a log-linear histogram of microseconds (128 sub-buckets per power of two, so a
// percentile is within 1% of the true value). Every loop is bounded: the run stops at its deadline,
// a request without an answer after `requestTimeoutMs` is an error and its socket is replaced, and
// reconnections are capped.
//
// As a child process: node --import tsx scripts/bench/loadgen.ts '<LoadOptions as JSON>'
// prints one line `{"loadgen":<LoadResult>}` and exits 0 (also when the server answered with errors:
// the caller judges the counts). The runner uses `runLoadInChild` so that the generator never shares
// an event loop with anything else.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

export type LoadMethod = 'GET' | 'POST';
export type LoadMode = 'random' | 'preload';

export interface LoadOptions {
  readonly host: string;
  readonly port: number;
  readonly method: LoadMethod;
  readonly mode: LoadMode;
  readonly connections: number;
  readonly keys: number;
  readonly valueBytes: number;
  /** Run length in `random` mode; time limit in `preload` mode. */
  readonly durationMs: number;
  readonly requestTimeoutMs: number;
  readonly seed: number;
}

export interface LoadResult {
  /** Responses completed before the deadline. */
  readonly requests: number;
  readonly non2xx: number;
  /** Socket errors, timeouts, connections closed by the server, malformed responses. */
  readonly errors: number;
  readonly elapsedMs: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Count per non-2xx status code, e.g. {"404": 3}. */
  readonly statuses: Readonly<Record<string, number>>;
  readonly firstError: string | null;
}

export const mapPathPrefix = '/grid/rest/maps/bench/k';

const connectionsMax = 1024;
const keysMax = 10_000_000;
const valueBytesMax = 1024 * 1024;
const durationMsMax = 60 * 60 * 1000;
const headBytesMax = 64 * 1024;
const reconnectsMax = 1000;
const reconnectDelayMs = 20;
const timeoutCheckIntervalMs = 100;
const childGraceMs = 30_000;

/** The value every benchmark write sends: printable ASCII, the same for every key and generator. */
export function benchValue(valueBytes: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let text = '';
  for (let i = 0; i < valueBytes; i++) text += alphabet[(i * 7 + 3) % alphabet.length];
  return text;
}

// ---------------------------------------------------------------------------------------------
// Latency histogram: index(v) is v itself below 128 µs; above, 128 linear sub-buckets for each power
// of two. Values are capped at 2^31 - 1 µs (about 36 minutes), far above any request timeout.

const subBuckets = 128;
const subBucketBits = 7;
const histogramBuckets = subBuckets + (31 - subBucketBits) * subBuckets;

export class LatencyHistogram {
  private readonly counts = new Float64Array(histogramBuckets);
  private total = 0;
  private maxMicros = 0;

  record(micros: number): void {
    const value = Math.min(Math.max(Math.round(micros), 0), 0x7fffffff);
    this.counts[bucketOf(value)]! += 1;
    this.total += 1;
    if (value > this.maxMicros) this.maxMicros = value;
  }

  get count(): number {
    return this.total;
  }

  get maxMs(): number {
    return this.maxMicros / 1000;
  }

  /** The value (ms) at or below which `fraction` of the samples lie; 0 when empty. */
  percentileMs(fraction: number): number {
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil(fraction * this.total));
    let seen = 0;
    for (let index = 0; index < histogramBuckets; index++) {
      seen += this.counts[index]!;
      if (seen >= rank) return Math.min(bucketMidpointMicros(index), this.maxMicros) / 1000;
    }
    return this.maxMicros / 1000;
  }
}

function bucketOf(value: number): number {
  if (value < subBuckets) return value;
  const shift = 31 - Math.clz32(value) - subBucketBits;
  return subBuckets + shift * subBuckets + ((value >>> shift) - subBuckets);
}

function bucketMidpointMicros(index: number): number {
  if (index < subBuckets) return index;
  const shift = Math.floor((index - subBuckets) / subBuckets);
  const mantissa = subBuckets + ((index - subBuckets) % subBuckets);
  const low = mantissa * 2 ** shift;
  return low + (2 ** shift - 1) / 2;
}

// ---------------------------------------------------------------------------------------------
// Requests are built once per key, before the clock starts.

function buildRequests(options: LoadOptions): Buffer[] {
  const hostHeader = `${options.host}:${options.port}`;
  const body = benchValue(options.valueBytes);
  const requests: Buffer[] = new Array<Buffer>(options.keys);
  for (let key = 0; key < options.keys; key++) {
    const path = `${mapPathPrefix}${key}`;
    requests[key] =
      options.method === 'GET'
        ? Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n\r\n`, 'latin1')
        : Buffer.from(
            `POST ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\nContent-Type: text/plain\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            'latin1',
          );
  }
  return requests;
}

/** xorshift32: a fixed, cheap key sequence per connection; the same for every server. */
export function makeRandom(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

const contentLengthPattern = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?=\r\n|$)/i;
const chunkedPattern = /\r\ntransfer-encoding:[^\r\n]*chunked/i;
const crlfCrlf = Buffer.from('\r\n\r\n', 'latin1');

export interface ParsedResponse {
  readonly status: number;
  readonly totalBytes: number;
}

/** Parses one response at the start of `buffer`; null = incomplete; a string = protocol error. */
export function parseResponse(buffer: Buffer): ParsedResponse | null | string {
  const headEnd = buffer.indexOf(crlfCrlf);
  if (headEnd < 0) return buffer.length > headBytesMax ? 'response head too large' : null;
  if (headEnd < 12 || buffer.toString('latin1', 0, 5) !== 'HTTP/') return 'malformed status line';
  const status = (buffer[9]! - 48) * 100 + (buffer[10]! - 48) * 10 + (buffer[11]! - 48);
  if (!(status >= 100 && status <= 599)) return 'malformed status code';
  const head = buffer.toString('latin1', 0, headEnd);
  const match = contentLengthPattern.exec(head);
  let bodyBytes = 0;
  if (match !== null) {
    bodyBytes = Number(match[1]);
  } else if (chunkedPattern.test(head)) {
    return 'chunked responses are not supported by the built-in generator';
  } else if (!(status === 204 || status === 304 || status < 200)) {
    return `status ${status} without Content-Length`;
  }
  const totalBytes = headEnd + 4 + bodyBytes;
  return buffer.length < totalBytes ? null : { status, totalBytes };
}

// ---------------------------------------------------------------------------------------------

function checkOptions(options: LoadOptions): void {
  const bad = (what: string): never => {
    throw new Error(`loadgen: bad option ${what}`);
  };
  if (options.host !== '127.0.0.1' && options.host !== '::1') bad('host (loopback only)');
  if (!Number.isInteger(options.port) || options.port <= 0 || options.port > 65535) bad('port');
  if (options.method !== 'GET' && options.method !== 'POST') bad('method');
  if (options.mode !== 'random' && options.mode !== 'preload') bad('mode');
  if (!Number.isInteger(options.connections) || options.connections < 1 || options.connections > connectionsMax) {
    bad('connections');
  }
  if (!Number.isInteger(options.keys) || options.keys < 1 || options.keys > keysMax) bad('keys');
  if (!Number.isInteger(options.valueBytes) || options.valueBytes < 0 || options.valueBytes > valueBytesMax) {
    bad('valueBytes');
  }
  if (!(options.durationMs > 0 && options.durationMs <= durationMsMax)) bad('durationMs');
  if (!(options.requestTimeoutMs > 0 && options.requestTimeoutMs <= durationMsMax)) bad('requestTimeoutMs');
  if (!Number.isInteger(options.seed)) bad('seed');
}

/** Runs the load in this process. Prefer `runLoadInChild` for measurements. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  checkOptions(options);
  const requests = buildRequests(options);
  const histogram = new LatencyHistogram();
  const statuses: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  let reconnects = 0;
  let firstError: string | null = null;
  let nextPreloadKey = 0;
  let stopped = false;
  let startMs = 0;
  let endMs = 0;

  return new Promise<LoadResult>((resolve) => {
    const connections: Connection[] = [];

    const fail = (message: string): void => {
      errors += 1;
      if (firstError === null) firstError = message;
    };

    const finish = (): void => {
      if (stopped) return;
      stopped = true;
      endMs = performance.now();
      clearTimeout(deadline);
      clearInterval(watchdog);
      for (const connection of connections) connection.socket?.destroy();
      const elapsedMs = Math.max(endMs - startMs, 1);
      resolve({
        requests: histogram.count,
        non2xx,
        errors,
        elapsedMs,
        rps: (histogram.count * 1000) / elapsedMs,
        p50Ms: histogram.percentileMs(0.5),
        p99Ms: histogram.percentileMs(0.99),
        maxMs: histogram.maxMs,
        statuses,
        firstError,
      });
    };

    /** The next request of a connection, or null when it has nothing left to send. */
    const nextRequest = (connection: Connection): Buffer | null => {
      if (options.mode === 'random') return requests[connection.random() % options.keys]!;
      if (nextPreloadKey >= options.keys) return null;
      const key = nextPreloadKey;
      nextPreloadKey += 1;
      return requests[key]!;
    };

    class Connection {
      socket: net.Socket | null = null;
      pending: Buffer | null = null;
      sentAtMs = 0;
      inFlight = false;
      readonly random: () => number;

      constructor(index: number) {
        this.random = makeRandom(options.seed * 7919 + index + 1);
      }

      open(): void {
        const socket = net.connect({ host: options.host, port: options.port, noDelay: true });
        this.socket = socket;
        this.pending = null;
        this.inFlight = false;
        socket.on('connect', () => this.send());
        socket.on('data', (chunk: Buffer) => this.onData(chunk));
        socket.on('error', (error: Error) => {
          if (!stopped && firstError === null) firstError = `socket: ${error.message}`;
        });
        socket.on('close', () => this.onClose(socket));
      }

      send(): void {
        if (stopped || this.socket === null) return;
        const request = nextRequest(this);
        if (request === null) {
          this.socket.end();
          if (connections.every((c) => !c.inFlight) && nextPreloadKey >= options.keys) finish();
          return;
        }
        this.inFlight = true;
        this.sentAtMs = performance.now();
        this.socket.write(request);
      }

      onData(chunk: Buffer): void {
        if (stopped) return;
        const buffer = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
        this.pending = null;
        const parsed = parseResponse(buffer);
        if (parsed === null) {
          this.pending = buffer;
          return;
        }
        if (typeof parsed === 'string' || !this.inFlight || buffer.length !== parsed.totalBytes) {
          const reason = typeof parsed === 'string' ? parsed : 'bytes beyond the response to the one request';
          fail(`protocol: ${reason}`);
          this.socket?.destroy();
          return;
        }
        if (parsed.status < 200) return; // an interim response; the final one follows
        histogram.record((performance.now() - this.sentAtMs) * 1000);
        this.inFlight = false;
        if (parsed.status >= 300) {
          non2xx += 1;
          const key = String(parsed.status);
          statuses[key] = (statuses[key] ?? 0) + 1;
        }
        this.send();
      }

      onClose(socket: net.Socket): void {
        if (stopped || socket !== this.socket) return;
        const wasExpected = options.mode === 'preload' && !this.inFlight && nextPreloadKey >= options.keys;
        this.socket = null;
        if (wasExpected) {
          if (connections.every((c) => !c.inFlight)) finish();
          return;
        }
        fail(this.inFlight ? 'connection closed with a request in flight' : 'connection closed by the server');
        // In preload mode the key of a lost request is not retried: the preload then reports fewer
        // requests than keys, and the runner treats that as a failure.
        this.inFlight = false;
        if (reconnects >= reconnectsMax) {
          fail('too many reconnections');
          finish();
          return;
        }
        reconnects += 1;
        setTimeout(() => {
          if (!stopped) this.open();
        }, reconnectDelayMs);
      }
    }

    const watchdog = setInterval(() => {
      const now = performance.now();
      for (const connection of connections) {
        if (connection.inFlight && now - connection.sentAtMs > options.requestTimeoutMs) {
          fail(`timeout: no response within ${options.requestTimeoutMs} ms`);
          connection.socket?.destroy(); // its close handler reconnects
        }
      }
    }, timeoutCheckIntervalMs);
    const deadline = setTimeout(finish, options.durationMs);

    startMs = performance.now();
    for (let index = 0; index < options.connections; index++) {
      const connection = new Connection(index);
      connections.push(connection);
      connection.open();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Child-process plumbing.

const selfPath = fileURLToPath(import.meta.url);

/**
 * Runs the load in a child process (`node --import tsx loadgen.ts`) and returns its result.
 * `track` receives the child so that the caller can kill it on SIGINT or errors.
 */
export function runLoadInChild(options: LoadOptions, track: (child: ChildProcess) => void): Promise<LoadResult> {
  checkOptions(options);
  return runJsonChild<LoadResult>(selfPath, options, 'loadgen', options.durationMs + childGraceMs, track, 'ignore').result;
}

/**
 * Runs a bench script as `node --import tsx <script> '<options JSON>'` and resolves with the value
 * under `key` of the last `{"<key>":...}` line it prints; rejects with the tail of its stderr when it
 * exits otherwise. Killed after `limitMs`. With stdin 'pipe', the caller may write to `child.stdin`.
 */
export function runJsonChild<R>(
  script: string,
  options: unknown,
  key: string,
  limitMs: number,
  track: (child: ChildProcess) => void,
  stdin: 'ignore' | 'pipe',
): { child: ChildProcess; result: Promise<R> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(options)], { stdio: [stdin, 'pipe', 'pipe'] });
  track(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    if (stdout.length < 10_000_000) stdout += text;
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 100_000) stderr += text;
  });
  child.stdin?.on('error', () => {
    // the child is gone; its exit is reported below
  });
  const marker = `{"${key}":`;
  const result = new Promise<R>((resolve, reject) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      const line = stdout
        .split('\n')
        .reverse()
        .find((text) => text.startsWith(marker));
      if (code !== 0 || line === undefined) {
        reject(new Error(`${path.basename(script)} exited with ${signal ?? String(code)}: ${stderr.trim().slice(-2000)}`));
        return;
      }
      resolve((JSON.parse(line) as Record<string, R>)[key] as R);
    });
  });
  return { child, result };
}

async function main(): Promise<void> {
  const text = process.argv[2];
  if (text === undefined) {
    process.stderr.write("usage: node --import tsx scripts/bench/loadgen.ts '<LoadOptions JSON>'\n");
    process.exit(2);
  }
  const options = JSON.parse(text) as LoadOptions;
  // Bounded even if something inside hangs: the child never outlives its run by much.
  setTimeout(() => {
    process.stderr.write('loadgen: did not finish in time\n');
    process.exit(3);
  }, options.durationMs + childGraceMs / 2).unref();
  const result = await runLoad(options);
  process.stdout.write(JSON.stringify({ loadgen: result }) + '\n');
  process.exit(0);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`loadgen: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
