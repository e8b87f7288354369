// Micro-benchmarks of hot-path pieces, in operations per second: request-target splitting and
// decoding (src/http/path.ts), route lookup on a table shaped like the member's (src/http/router.ts),
// murmur3 partition hashing (src/partition/murmur3.ts, skipped when absent), member-protocol
// framing (frame.ts, frame-reader.ts, handshake.ts) and message bodies (messages.ts through the
// compiled schema codec: a map write's op and a WAN batch of 500 events, per message and per event),
// and the member's own HTTP request parser (src/http/parser.ts).
//
// Each case runs in timed batches after a warm-up; the best of `--rounds` rounds is reported, since
// noise only ever slows a round down. A sink consumes every result so the JIT cannot drop the work.
// Prints a table, then one line `{"bench":"micro","results":{<case>: ops per second, ...}}` for scripts to parse.
//
// Usage: node --import tsx scripts/bench/micro.ts [--time-ms 300] [--rounds 3] [--filter text]
import { performance } from 'node:perf_hooks';
import { splitTarget, joinTail } from '../../src/http/path.js';
import { Router } from '../../src/http/router.js';
import { encodeFrame, PREAMBLE, PROTOCOL_VERSION, PROTOCOL_VERSION_MIN } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { decodeHandshakeRequest, encodeHandshakeRequest } from '../../src/cluster/protocol/handshake.js';
import { decodeMessage, encodeBody, message, MESSAGE_TYPES } from '../../src/cluster/messages.js';
import { RequestParser } from '../../src/http/parser.js';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { Dispatcher } from '../../src/http/dispatch.js';
import { buildRoutes } from '../../src/http/routes.js';
import { LocalMember } from '../../src/member/local-member.js';
import { NO_RUNTIME_FIGURES } from '../../src/member/metrics-snapshot.js';
import { RestServer } from '../../src/runtime/http-server.js';
import { Logger } from '../../src/util/logger.js';

interface Case {
  readonly name: string;
  /** Operations done by one call of `run` (e.g. frames per chunk). */
  readonly opsPerCall: number;
  readonly run: () => unknown;
}

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback;
}

const timeMs = Number(option('--time-ms', '300'));
const rounds = Number(option('--rounds', '3'));
const filter = option('--filter', '');
let sink = 0;

function consume(v: unknown): void {
  if (typeof v === 'number') sink = (sink + v) | 0;
  else if (typeof v === 'string') sink = (sink + v.length) | 0;
  else if (v !== null && typeof v === 'object') sink = (sink + 1) | 0;
}

function measure(c: Case): number {
  // Calibrate a batch size that takes about 10 ms, warming the code up on the way.
  let batch = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) consume(c.run());
    if (performance.now() - t0 > 10 || batch >= 1 << 24) break;
    batch *= 2;
  }
  let best = 0;
  for (let r = 0; r < rounds; r++) {
    let calls = 0;
    const start = performance.now();
    let now = start;
    while (now - start < timeMs) {
      for (let i = 0; i < batch; i++) consume(c.run());
      calls += batch;
      now = performance.now();
    }
    best = Math.max(best, (calls * c.opsPerCall * 1000) / (now - start));
  }
  return best;
}

// A route table shaped like the member's (src/http/routes.ts): ~30 routes, static, :param and *tail.
function memberLikeRouter(): Router<string> {
  const r = new Router<string>();
  for (const p of ['/grid/rest/maps/:map', '/grid/rest/maps/:map/*key']) {
    r.on(['POST', 'PUT'], p, 'mapPut');
    r.on(['GET'], p, 'mapGet');
    r.on(['DELETE'], p, 'mapDelete');
  }
  r.on(['HEAD'], '/grid/rest/maps/*any', 'dataHead');
  for (const p of ['/grid/rest/queues/:queue', '/grid/rest/queues/:queue/*rest']) {
    r.on(['POST', 'PUT'], p, 'queueOffer');
    r.on(['GET'], p, 'queueGet');
    r.on(['DELETE'], p, 'queueDelete');
  }
  for (const p of ['cluster', 'instance', 'metrics', 'management/cluster/version', 'license', 'log-level', 'config/tcp-ip/member-list']) {
    r.on(['GET'], `/grid/rest/${p}`, p);
  }
  r.on(['GET', 'HEAD'], '/grid/health', 'health');
  for (const p of ['node-state', 'cluster-state', 'cluster-safe', 'migration-queue-size', 'cluster-size', 'ready']) r.on(['GET'], `/grid/health/${p}`, p);
  for (const a of ['state', 'changeState', 'version', 'clusterShutdown', 'memberShutdown', 'nodes', 'forceStart', 'partialStart', 'backup', 'backupInterrupt']) {
    r.on(['POST'], `/grid/rest/management/cluster/${a}`, a);
  }
  r.on(['POST'], '/grid/rest/log-level', 'setLogLevel').on(['POST'], '/grid/rest/log-level/reset', 'resetLogLevel');
  for (const a of ['clearWanQueues', 'pausePublisher', 'resumePublisher', 'stopPublisher', 'sync/map', 'sync/allmaps', 'addWanConfig']) {
    r.on(['POST'], `/grid/rest/wan/${a}`, a);
  }
  r.on(['GET'], '/grid/rest/wan/sync/progress/:uuid', 'wanProgress').on(['GET'], '/grid/rest/cp-subsystem/groups/:group', 'cp');
  return r;
}

async function murmurCases(): Promise<Case[]> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import('../../src/partition/murmur3.js' as string)) as Record<string, unknown>;
  } catch {
    return [];
  }
  // The partition hash: murmur3 over the length-prefixed UTF-8 key (cluster.md), without a copy.
  const hash = mod['murmurHash3x86LengthPrefixed'];
  if (typeof hash !== 'function') return [];
  const fn = hash as (data: Uint8Array, seed: number) => number;
  const key = Buffer.from('k000001234');
  const longKey = Buffer.alloc(1024, 0x61);
  return [
    { name: 'murmur3 10 B key', opsPerCall: 1, run: () => fn(key, 0x01000193) },
    { name: 'murmur3 string → utf8 → hash', opsPerCall: 1, run: () => fn(Buffer.from('k000001234', 'utf8'), 0x01000193) },
    { name: 'murmur3 1 KiB key', opsPerCall: 1, run: () => fn(longKey, 0x01000193) },
  ];
}

function protocolCases(): Case[] {
  const payload = Buffer.alloc(100, 1);
  const frames = Array.from({ length: 1000 }, (_, i) => encodeFrame({ messageType: 3, partitionId: i % 271, callId: i + 1 }, payload));
  const stream = Buffer.concat(frames);
  const request = encodeHandshakeRequest({
    protocolVersionMin: PROTOCOL_VERSION_MIN,
    protocolVersionMax: PROTOCOL_VERSION,
    clusterName: 'dev',
    memberUuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
    memberVersion: '0.1.0',
    partitionCount: 271,
    addresses: [{ host: '127.0.0.1', port: 5701 }],
    identity: null,
  });
  const preambled = Buffer.concat([PREAMBLE, stream]);
  return [
    { name: 'encodeFrame 100 B payload', opsPerCall: 1, run: () => encodeFrame({ messageType: 3, partitionId: 17, callId: 42 }, payload) },
    { name: 'FrameReader 1000 frames in one chunk (per frame)', opsPerCall: 1000, run: () => new FrameReader({ frameBytesMax: 1 << 26 }).push(preambled).length },
    {
      name: 'FrameReader 1000 frames in 1 KiB chunks (per frame)',
      opsPerCall: 1000,
      run: () => {
        const r = new FrameReader({ frameBytesMax: 1 << 26, preamble: false });
        let n = 0;
        for (let i = 0; i < stream.length; i += 1024) n += r.push(stream.subarray(i, i + 1024)).length;
        return n;
      },
    },
    { name: 'handshake request decode', opsPerCall: 1, run: () => decodeHandshakeRequest(request) },
  ];
}

function messageCases(): Case[] {
  const value = Buffer.alloc(100, 0x78);
  const op = message('invoke', { partitionId: 17, op: { code: 1, name: 'orders', key: Buffer.from('k000001234'), value, contentType: 'text/plain', timeoutMs: 0 } }, 42);
  const events = Array.from({ length: 500 }, (_, i) => ({
    partitionId: i % 271,
    version: 1_000_000 + i,
    kind: 1,
    map: 'orders',
    key: Buffer.from(`k${String(i).padStart(9, '0')}`),
    value,
    contentType: 'text/plain',
    creationTimeMs: 1.7e12,
    updateTimeMs: 1.7e12,
    lastAccessTimeMs: 1.7e12,
    entryVersion: 3,
    hits: 0,
    ttlMs: -1,
    maxIdleMs: -1,
    policy: 1,
    origin: 'a',
  }));
  const batch = message('wanBatch', { sourceCluster: 'a', sourceClusterId: '0f8fad5b-d9cb-469f-a165-70867728950e', replication: 'to-b', publisherId: 'b', ackOnReceipt: false, events }, 7);
  const opBytes = encodeBody(op);
  const batchBytes = encodeBody(batch);
  return [
    { name: 'invoke message (map put, 100 B) encode', opsPerCall: 1, run: () => encodeBody(op) },
    { name: 'invoke message (map put, 100 B) decode', opsPerCall: 1, run: () => decodeMessage(MESSAGE_TYPES.invoke, 42, opBytes) },
    { name: 'wanBatch of 500 events encode (per event)', opsPerCall: 500, run: () => encodeBody(batch) },
    { name: 'wanBatch of 500 events decode (per event)', opsPerCall: 500, run: () => decodeMessage(MESSAGE_TYPES.wanBatch, 7, batchBytes) },
  ];
}

function httpCases(): Case[] {
  const router = memberLikeRouter();
  const mapGet = splitTarget('/grid/rest/maps/orders/k000001234').segments;
  const queueSize = splitTarget('/grid/rest/queues/jobs/size').segments;
  const health = splitTarget('/grid/health/cluster-size').segments;
  const mgmt = splitTarget('/grid/rest/management/cluster/changeState').segments;
  const missing = splitTarget('/grid/rest/nothing/here').segments;
  // Distinct target strings, as a server sees them (a constant string could hit V8's caches).
  const targets = Array.from({ length: 1024 }, (_, i) => `/grid/rest/maps/orders/k${String(1234 + i * 7919).padStart(9, '0')}`);
  let t = 0;
  const nextTarget = (): string => targets[t++ & 1023] as string;
  return [
    { name: 'splitTarget plain map target', opsPerCall: 1, run: () => splitTarget(nextTarget()) },
    { name: 'splitTarget with query', opsPerCall: 1, run: () => splitTarget('/grid/health/ready?probe=1') },
    { name: 'splitTarget escaped (%2F %40 %C3%A9)', opsPerCall: 1, run: () => splitTarget('/grid/rest/maps/a%2Fb/k%40caf%C3%A9') },
    { name: 'joinTail 3 segments', opsPerCall: 1, run: () => joinTail(['maps', 'm', 'a', 'b', 'c'], 2) },
    { name: 'router.find GET map key (param + tail)', opsPerCall: 1, run: () => router.find('GET', mapGet) },
    { name: 'router.find HEAD map key (explicit HEAD tail)', opsPerCall: 1, run: () => router.find('HEAD', mapGet) },
    { name: 'router.find GET queue size', opsPerCall: 1, run: () => router.find('GET', queueSize) },
    { name: 'router.find GET health static', opsPerCall: 1, run: () => router.find('GET', health) },
    { name: 'router.find POST management static', opsPerCall: 1, run: () => router.find('POST', mgmt) },
    { name: 'router.find 404', opsPerCall: 1, run: () => router.find('GET', missing) },
    { name: 'router.find 405 (GET on POST-only)', opsPerCall: 1, run: () => router.find('GET', mgmt) },
    { name: 'splitTarget + find (map GET)', opsPerCall: 1, run: () => router.find('GET', splitTarget(nextTarget()).segments) },
  ];
}

/** The member's own request parser (src/http/parser.ts): whole requests, one parser per connection. */
function parserCases(): Case[] {
  const limits = { headBytesMax: 16 * 1024, headerCountMax: 100, bodyBytesMax: 16 * 1024 * 1024 };
  let seen = 0;
  const handler = { onHead: () => {}, onRequest: () => void seen++, onError: () => {} };
  const parser = new RequestParser(limits, handler);
  const get = Buffer.from('GET /grid/rest/maps/orders/k000001234 HTTP/1.1\r\nHost: 127.0.0.1:5701\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n', 'latin1');
  const post = Buffer.from(`POST /grid/rest/maps/orders/k000001234 HTTP/1.1\r\nHost: 127.0.0.1:5701\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n${'x'.repeat(100)}`, 'latin1');
  const chunked = Buffer.from(`POST /grid/rest/queues/jobs HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n${'y'.repeat(100)}\r\n0\r\n\r\n`, 'latin1');
  const pipelined = Buffer.concat(Array.from({ length: 16 }, () => get));
  return [
    { name: 'parser: GET request (4 fields)', opsPerCall: 1, run: () => (parser.push(get), seen) },
    { name: 'parser: POST with a 100-byte body', opsPerCall: 1, run: () => (parser.push(post), seen) },
    { name: 'parser: chunked POST, one 100-byte chunk', opsPerCall: 1, run: () => (parser.push(chunked), seen) },
    { name: 'parser: 16 pipelined GETs in one read (per request)', opsPerCall: 16, run: () => (parser.push(pipelined), seen) },
  ];
}

/**
 * A socket for the engine cases: it counts what is written and drops it, so the whole request path
 * of a member (parser, dispatcher, map, answer) is timed without the kernel.
 */
class SinkSocket extends EventEmitter {
  remoteAddress = '127.0.0.1';
  allowHalfOpen = false;
  destroyed = false;
  writableLength = 0;
  writableHighWaterMark = 16384;
  written = 0;
  write(data: string | Buffer): boolean {
    this.written += data.length;
    return true;
  }
  pause(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  cork(): void {}
  uncork(): void {}
  end(): this {
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
}

/**
 * The member's whole HTTP request path without sockets: bytes of a request into the connection
 * shell (src/runtime/http-server.ts), through parser, router and a one-member map, to the bytes of
 * the answer. Per request; the kernel's share (one read, one write) is what the HTTP bench adds.
 */
function engineCases(): Case[] {
  const r = loadConfig({ argv: ['--rest'], env: {}, cwd: '/', readFile: () => { throw new Error('no file'); }, fileExists: () => false, randomHex: () => 'abcd', version: '0.1.0' });
  if (r.kind !== 'run') throw new Error(`micro: config: ${JSON.stringify(r)}`);
  const config = { ...r.config, network: { ...r.config.network, restApi: { ...r.config.network.restApi, enabled: true, groups: { ...r.config.network.restApi.groups, DATA: true } } } };
  const member = new LocalMember(config, {
    clock: { nowMs: () => Date.now(), monotonicMs: () => performance.now() },
    logger: new Logger('OFF', 'text', { write: () => {} }),
    connections: () => ({ http: 1, member: 0 }),
    runtimeMetrics: () => NO_RUNTIME_FIGURES,
    requestStop: () => {},
    seed: 7,
  });
  member.setAddress('127.0.0.1', 5701);
  member.markActive();
  const dispatcher = new Dispatcher(buildRoutes(), member, { internalError: (e) => { throw e; } });
  const limits = { headerBytesMax: 16 * 1024, bodyBytesMax: 16 * 1024 * 1024, pipelineMax: 1000, headersTimeoutSeconds: 60, idleTimeoutSeconds: 300 };
  const server = new RestServer(dispatcher, limits, new Logger('OFF', 'text', { write: () => {} }).component('http'));
  const keys = 10_000;
  const value = 'v'.repeat(100);
  const gets = Array.from({ length: keys }, (_, i) => Buffer.from(`GET /grid/rest/maps/bench/k${i} HTTP/1.1\r\nHost: 127.0.0.1:5701\r\n\r\n`, 'latin1'));
  const posts = Array.from({ length: keys }, (_, i) => Buffer.from(`POST /grid/rest/maps/bench/k${i} HTTP/1.1\r\nHost: 127.0.0.1:5701\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n${value}`, 'latin1'));
  const socket = new SinkSocket();
  server.accept(socket as unknown as Socket, posts[0] as Buffer);
  for (const p of posts) socket.emit('data', p);
  const before = socket.written;
  socket.emit('data', gets[1] as Buffer);
  if (socket.written - before < 100) throw new Error('micro: the engine did not answer a GET with the value');
  let i = 0;
  const valueBytes = Buffer.from(value);
  const keyNames = Array.from({ length: keys }, (_, k) => `k${k}`);
  return [
    { name: 'engine part: member.mapGet (one member, local)', opsPerCall: 1, run: () => member.mapGet('bench', keyNames[(i = (i + 7919) % keys)] as string) },
    { name: 'engine part: member.mapPut (one member, local)', opsPerCall: 1, run: () => member.mapPut('bench', keyNames[(i = (i + 7919) % keys)] as string, valueBytes, 'text/plain') },
    { name: 'engine part: dispatcher.prepare (map target)', opsPerCall: 1, run: () => dispatcher.prepare('GET', `/grid/rest/maps/bench/${keyNames[(i = (i + 7919) % keys)] as string}`) },
    { name: 'engine: map GET, 100-byte value (per request)', opsPerCall: 1, run: () => (socket.emit('data', gets[(i = (i + 7919) % keys)] as Buffer), socket.written) },
    { name: 'engine: map POST, 100-byte value (per request)', opsPerCall: 1, run: () => (socket.emit('data', posts[(i = (i + 7919) % keys)] as Buffer), socket.written) },
  ];
}

async function main(): Promise<void> {
  const cases = [...httpCases(), ...parserCases(), ...engineCases(), ...(await murmurCases()), ...protocolCases(), ...messageCases()].filter((c) => c.name.includes(filter));
  const results: Record<string, number> = {};
  const width = Math.max(...cases.map((c) => c.name.length));
  process.stdout.write(`${'case'.padEnd(width)}  ${'ops/s'.padStart(14)}  ${'ns/op'.padStart(8)}\n`);
  for (const c of cases) {
    const ops = measure(c);
    results[c.name] = Math.round(ops);
    process.stdout.write(`${c.name.padEnd(width)}  ${Math.round(ops).toLocaleString('en-US').padStart(14)}  ${(1e9 / ops).toFixed(1).padStart(8)}\n`);
  }
  if (!cases.some((c) => c.name.startsWith('murmur3')) && 'murmur3'.includes(filter)) process.stdout.write('murmur3: src/partition/murmur3.ts not found, skipped\n');
  process.stdout.write(`${JSON.stringify({ bench: "micro", results, node: process.version, timeMs, rounds, sink: sink & 1 })}\n`);
}

await main();
