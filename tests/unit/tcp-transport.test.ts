// Checks src/runtime/tcp-transport.ts, the real twin of the Transport seam, with real sockets on
// loopback: messages flow both ways and in order over one connection per member pair (an inbound
// connection is used for answers, no second dial); members that dial each other at the same moment
// end with exactly one connection each and lose no message; a foreign cluster is refused softly
// (onRefused, nothing delivered, both keep running, the log line is not repeated), an incompatible one
// hard; security requires accepted credentials; oversize or malformed frames close only that
// connection and are counted; a dial to a closed port returns true, then backs off (sends drop) and
// succeeds once the peer listens; write queues are capped in bytes; disconnect and close; TLS-only
// ports are dialled with TLS; frames carry the type number, call id and URGENT flag; with a source
// address (grid.socket.bind.any=false) outgoing connections leave from it, over TCP and TLS, both
// ends log the socket's two addresses, and an address the machine does not have fails the dial
// without throwing. Failed dials say whether they were refused (ECONNREFUSED: a dead process) or
// failed otherwise (a peer that accepts and closes), a refused handshake is neither, and a closed
// member connection is reported once (issue #11).
// How: TcpTransport instances behind the real Listener (sniffing, TLS) on OS-chosen ports, and raw
// sockets speaking the protocol by hand where a peer must misbehave. Every wait polls a condition
// with a deadline; no test sleeps or asserts on durations.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { TlsOptions } from 'node:tls';
import { message, MESSAGE_TYPES, type Message } from '../../src/cluster/messages.js';
import type { Peer } from '../../src/cluster/transport.js';
import { encodeFrame, FLAG_RESPONSE, FLAG_URGENT, PREAMBLE, PROTOCOL_VERSION, type Frame } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import {
  decodeHandshakeRequest,
  decodeHandshakeResponse,
  encodeHandshakeRequest,
  encodeHandshakeResponse,
  type HandshakeRequest,
  type HandshakeResponse,
} from '../../src/cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';
import { Listener } from '../../src/runtime/listener.js';
import { parseAddress, REFUSED_DIAL_BACKOFF_MS, TcpTransport, type TcpTransportOptions } from '../../src/runtime/tcp-transport.js';
import { Logger } from '../../src/util/logger.js';
import { waitFor } from '../harness/connection.js';
import { sampleHandshake } from '../harness/handshake-fixture.js';
import { REPO_ROOT } from '../harness/member-process.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const C = '00000000-0000-4000-8000-00000000000c';
const RAW = '00000000-0000-4000-8000-0000000000ff';

interface Node {
  readonly t: TcpTransport;
  readonly uuid: string;
  readonly port: number;
  readonly address: string;
  readonly received: { from: Peer; message: Message }[];
  readonly refused: { address: string; reason: string; hard: boolean }[];
  readonly unreachable: { address: string; refused: boolean }[];
  readonly disconnected: Peer[];
  readonly lines: string[];
  stop(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startNode(uuid: string, options: Partial<TcpTransportOptions> = {}, extra: { tls?: TlsOptions; port?: number } = {}): Promise<Node> {
  const lines: string[] = [];
  const logger = new Logger('FINE', 'text', { write: (l) => lines.push(l) });
  const log = logger.component('member-protocol');
  const t = new TcpTransport({
    clusterName: 'dev',
    memberUuid: uuid,
    memberVersion: '0.1.0',
    partitionCount: 271,
    localAddress: null,
    identity: null,
    frameBytesMax: 1024 * 1024,
    tls: null,
    log,
    ...options,
  });
  const received: Node['received'] = [];
  const refused: Node['refused'] = [];
  const unreachable: Node['unreachable'] = [];
  const disconnected: Node['disconnected'] = [];
  t.setHandler({
    onMessage: (from, m) => received.push({ from, message: m }),
    onRefused: (address, reason, hard) => refused.push({ address, reason, hard }),
    onUnreachable: (address, isRefused) => unreachable.push({ address, refused: isRefused }),
    onDisconnected: (peer) => disconnected.push(peer),
  });
  const listener = new Listener({
    name: 'test port',
    host: '127.0.0.1',
    port: { port: extra.port ?? 0, autoIncrement: false, portCount: 1 },
    sniffTimeoutMs: 10_000,
    connectionsMax: 1000,
    http: null,
    client: null,
    member: (socket, head) => t.accept(socket, head),
    tls: extra.tls ?? null,
    log,
  });
  const port = await listener.listen();
  t.setLocalAddress('127.0.0.1', port);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    t.close();
    await listener.close();
  };
  cleanups.push(stop);
  return { t, uuid, port, address: `127.0.0.1:${port}`, received, refused, unreachable, disconnected, lines, stop };
}

const cancel = (n: number): Message => message('pollCancel', { callId: n }, n);
const callIdsFrom = (node: Node, uuid: string): number[] => node.received.filter((r) => r.from.uuid === uuid).map((r) => r.message.callId);
const range = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => from + i);

function bigResult(bytes: number): Message {
  return message('invokeResult', {
    status: 0,
    found: true,
    value: new Uint8Array(bytes),
    contentType: null,
    count: 0,
    errorCode: '',
    message: '',
    retryAfterSeconds: 0,
  });
}

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A hand-driven peer: dials `port`, handshakes with `request`, then collects frames. */
async function rawDial(port: number, request: HandshakeRequest): Promise<{ socket: net.Socket; response: HandshakeResponse; frames: Frame[]; closed: () => boolean }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  cleanups.push(() => void socket.destroy());
  const reader = new FrameReader({ frameBytesMax: 1 << 24 });
  const frames: Frame[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    for (const f of reader.push(chunk)) frames.push({ ...f, payload: Buffer.from(f.payload) });
  });
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  socket.write(Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 1 }, encodeHandshakeRequest(request))]));
  await waitFor(() => frames.length > 0 || closed, 'the handshake answer');
  const first = frames.shift();
  assert.ok(first !== undefined, 'a handshake answer arrived');
  assert.equal(first.messageType, HANDSHAKE_RESPONSE);
  return { socket, response: decodeHandshakeResponse(first.payload), frames, closed: () => closed };
}

/** A hand-driven listening peer that accepts every handshake as `uuid` and collects the frames after it. */
async function rawServer(uuid: string): Promise<{ port: number; frames: Frame[]; requests: HandshakeRequest[] }> {
  const frames: Frame[] = [];
  const requests: HandshakeRequest[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const reader = new FrameReader({ frameBytesMax: 1 << 24 });
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) {
        if (f.messageType !== HANDSHAKE_REQUEST) {
          frames.push({ ...f, payload: Buffer.from(f.payload) });
          continue;
        }
        requests.push(decodeHandshakeRequest(f.payload));
        const answer = encodeHandshakeResponse({ kind: 'accepted', memberUuid: uuid, memberVersion: '0.1.0', protocolVersion: PROTOCOL_VERSION });
        socket.write(Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_RESPONSE, flags: FLAG_RESPONSE, callId: f.callId }, answer)]));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as net.AddressInfo).port, frames, requests };
}

test('messages flow both ways, in order, over the one connection the first sender dialled', async () => {
  const a = await startNode(A);
  const b = await startNode(B);
  for (const n of range(300)) assert.equal(a.t.send(b.address, cancel(n)), true);
  await waitFor(() => b.received.length === 300, 'B to receive 300 messages');
  assert.deepEqual(callIdsFrom(b, A), range(300));
  assert.deepEqual(b.received[0]?.from, { uuid: A, address: a.address }, 'the peer as it advertised itself');
  // B answers A at the address A advertised: the inbound connection carries it, no dial.
  for (const n of range(300, 1000)) assert.equal(b.t.send(a.address, cancel(n)), true);
  await waitFor(() => a.received.length === 300, 'A to receive 300 answers');
  assert.deepEqual(callIdsFrom(a, B), range(300, 1000));
  assert.deepEqual(a.received[0]?.from, { uuid: B, address: b.address });
  assert.equal(b.t.counters.dials, 0, 'B never dialled');
  assert.equal(a.t.connectionCount(), 1);
  assert.equal(b.t.connectionCount(), 1);
  assert.equal(a.t.socketCount() + b.t.socketCount(), 2);
});

test('frames carry the message type number, the call id and URGENT for membership control', async () => {
  const a = await startNode(A);
  const peer = await rawServer(RAW);
  const address = `127.0.0.1:${peer.port}`;
  assert.equal(a.t.send(address, message('notMember', { membersVersion: 3 }, 0)), true);
  assert.equal(a.t.send(address, cancel(77)), true);
  await waitFor(() => peer.frames.length === 2, 'two frames at the raw peer');
  const [urgent, plain] = peer.frames as [Frame, Frame];
  assert.equal(urgent.messageType, MESSAGE_TYPES.notMember);
  assert.equal(urgent.flags & FLAG_URGENT, FLAG_URGENT);
  assert.equal(plain.messageType, MESSAGE_TYPES.pollCancel);
  assert.equal(plain.callId, 77);
  assert.equal(plain.flags, 0);
  const request = peer.requests[0];
  assert.ok(request !== undefined);
  assert.equal(request.memberUuid, A);
  assert.deepEqual(request.addresses, [{ host: '127.0.0.1', port: a.port }], 'the handshake advertises the address set after binding');
});

test('members dialling each other at the same moment end with one connection each and lose nothing', async () => {
  for (let round = 0; round < 5; round++) {
    const a = await startNode(A);
    const b = await startNode(B);
    // Both sides send before either connection exists, so each dials the other.
    for (const n of range(100)) {
      assert.equal(a.t.send(b.address, cancel(n)), true);
      assert.equal(b.t.send(a.address, cancel(n)), true);
    }
    await waitFor(() => a.received.length === 100 && b.received.length === 100, `round ${round}: both to receive 100 messages`);
    await waitFor(
      () => a.t.socketCount() === 1 && b.t.socketCount() === 1,
      `round ${round}: the duplicate connection to close (sockets A=${a.t.socketCount()} B=${b.t.socketCount()})`,
    );
    assert.deepEqual(callIdsFrom(a, B), range(100));
    assert.deepEqual(callIdsFrom(b, A), range(100));
    assert.equal(a.t.connectionCount(), 1);
    assert.equal(b.t.connectionCount(), 1);
    assert.equal(a.t.counters.queuedDropped + b.t.counters.queuedDropped, 0);
    // The kept connection works both ways afterwards.
    a.t.send(b.address, cancel(500));
    b.t.send(a.address, cancel(500));
    await waitFor(() => a.received.length === 101 && b.received.length === 101, `round ${round}: messages after settling`);
    assert.equal(a.t.socketCount() + b.t.socketCount(), 2, 'no new connection for them');
    await a.stop();
    await b.stop();
  }
});

test('three members sending to each other at once settle on one connection per pair', async () => {
  const nodes = [await startNode(C), await startNode(A), await startNode(B)];
  for (const from of nodes) for (const to of nodes) if (from !== to) for (const n of range(50)) from.t.send(to.address, cancel(n));
  await waitFor(() => nodes.every((n) => n.received.length === 100), 'every member to receive 2 × 50 messages');
  await waitFor(() => nodes.every((n) => n.t.socketCount() === 2), 'the duplicates to close');
  for (const to of nodes) for (const from of nodes) if (from !== to) assert.deepEqual(callIdsFrom(to, from.uuid), range(50), `${from.uuid} → ${to.uuid}`);
  for (const n of nodes) assert.equal(n.t.connectionCount(), 2);
});

test('a member of another cluster is refused softly: onRefused, nothing delivered, both keep running, logged once', async () => {
  const a = await startNode(A);
  const foreign = await startNode(C, { clusterName: 'other' });
  const b = await startNode(B);
  assert.equal(a.t.send(foreign.address, cancel(1)), true, 'queued while dialling');
  await waitFor(() => a.refused.length === 1, 'the refusal to reach the handler');
  assert.equal(a.refused[0]?.address, foreign.address);
  assert.equal(a.refused[0]?.hard, false);
  assert.match(a.refused[0]?.reason ?? '', /^CLUSTER_NAME_MISMATCH/);
  assert.equal(a.t.send(foreign.address, cancel(2)), false, 'a refused address is not dialled again at once');
  assert.equal(foreign.received.length, 0);
  assert.equal(foreign.t.counters.handshakesRefused, 1);
  assert.ok(foreign.lines.some((l) => / INFO .*refused: CLUSTER_NAME_MISMATCH/.test(l)), 'INFO on the refusing side');
  assert.ok(a.lines.some((l) => / INFO .*refused this member's handshake: CLUSTER_NAME_MISMATCH/.test(l)), 'INFO on the refused side');
  assert.ok(!foreign.lines.some((l) => /\bdev\b/.test(l) && /refused/.test(l)), 'the refusal does not echo the cluster name');
  // The same foreign address knocking again within the minute is not logged again.
  for (let i = 0; i < 3; i++) {
    const raw = await rawDial(foreign.port, sampleHandshake({ memberUuid: RAW, addresses: [{ host: '127.0.0.1', port: 4444 }] }));
    assert.equal(raw.response.kind, 'refused');
  }
  assert.equal(foreign.lines.filter((l) => l.includes('127.0.0.1:4444')).length, 1, 'one log line for three refusals');
  assert.equal(foreign.t.counters.handshakesRefused, 4);
  // Both keep working with their own clusters.
  assert.equal(a.t.send(b.address, cancel(3)), true);
  await waitFor(() => b.received.length === 1, 'A → B after the refusal');
  assert.equal(foreign.received.length, 0);
});

test('an incompatible member is refused hard, logged at WARNING on both sides', async () => {
  const a = await startNode(A);
  const odd = await startNode(C, { partitionCount: 7 });
  a.t.send(odd.address, cancel(1));
  await waitFor(() => a.refused.length === 1, 'the hard refusal');
  assert.equal(a.refused[0]?.hard, true);
  assert.match(a.refused[0]?.reason ?? '', /^PARTITION_COUNT_MISMATCH/);
  assert.ok(odd.lines.some((l) => / WARNING .*PARTITION_COUNT_MISMATCH/.test(l)));
  assert.ok(a.lines.some((l) => / WARNING .*PARTITION_COUNT_MISMATCH/.test(l)));
  assert.equal(odd.received.length, 0);
});

test('with security on, a peer without accepted credentials is refused and one with them is accepted', async () => {
  const good = { username: 'member', password: 'secret' };
  const check = (i: { username: string; password: string }): boolean => i.username === good.username && i.password === good.password;
  const secured = await startNode(A, { identity: good, checkIdentity: check });
  const anonymous = await startNode(B);
  anonymous.t.send(secured.address, cancel(1));
  await waitFor(() => anonymous.refused.length === 1, 'the refusal of a member without credentials');
  assert.equal(anonymous.refused[0]?.hard, true);
  assert.match(anonymous.refused[0]?.reason ?? '', /^AUTHENTICATION_FAILED/);
  const wrong = await startNode(C, { identity: { username: 'member', password: 'guess' } });
  wrong.t.send(secured.address, cancel(2));
  await waitFor(() => wrong.refused.length === 1, 'the refusal of wrong credentials');
  const peer = await startNode(B, { identity: good, checkIdentity: check });
  peer.t.send(secured.address, cancel(3));
  await waitFor(() => secured.received.length === 1, 'the message of the authenticated member');
  assert.equal(secured.received[0]?.message.callId, 3);
  assert.ok(!secured.lines.some((l) => /secret|guess/.test(l)), 'no credentials in the log');
});

test('an oversize or malformed frame closes only that connection, counted, and the member keeps serving', async () => {
  const b = await startNode(B, { frameBytesMax: 64 * 1024 });
  const a = await startNode(A);
  // Before the handshake only a handshake-sized frame is accepted.
  const early = net.connect({ host: '127.0.0.1', port: b.port });
  early.on('error', () => {});
  let earlyClosed = false;
  early.on('close', () => (earlyClosed = true));
  early.write(Buffer.concat([PREAMBLE, Buffer.from([0x00, 0x00, 0x80, 0x00, 1, 0, 0, 1])]));
  await waitFor(() => earlyClosed, 'the connection with a 32 KiB first frame to close');
  assert.equal(b.t.counters.framesRejected, 1);
  // After the handshake, a frame announcing more than frameBytesMax is refused on its length.
  const raw = await rawDial(b.port, sampleHandshake({ memberUuid: RAW, addresses: [{ host: '127.0.0.1', port: 4445 }] }));
  assert.equal(raw.response.kind, 'accepted');
  await waitFor(() => b.t.connectionCount() === 1, 'the raw peer to be registered');
  raw.socket.write(Buffer.from([0x00, 0x10, 0x00, 0x00, 1, 0, 0, 30]));
  await waitFor(() => raw.closed(), 'the oversize frame to close the connection');
  assert.equal(b.t.counters.framesRejected, 2);
  assert.equal(b.t.connectionCount(), 0);
  // A whole frame of an unknown type, then a known type with a bad body.
  for (const bad of [encodeFrame({ messageType: 999 }, Buffer.alloc(0)), encodeFrame({ messageType: MESSAGE_TYPES.pollCancel }, Buffer.from([1, 2, 3]))]) {
    const r = await rawDial(b.port, sampleHandshake({ memberUuid: RAW, addresses: [{ host: '127.0.0.1', port: 4446 }] }));
    r.socket.write(bad);
    await waitFor(() => r.closed(), 'the malformed message to close the connection');
  }
  assert.equal(b.t.counters.framesRejected, 4);
  assert.ok(b.lines.some((l) => / WARNING .*closed: .*unknown message type 999/.test(l)));
  assert.equal(b.received.length, 0);
  // The member still works.
  a.t.send(b.address, cancel(1));
  await waitFor(() => b.received.length === 1, 'a good member to still get through');
});

test('a message too large for a frame is dropped by send (false), never thrown', async () => {
  const a = await startNode(A, { frameBytesMax: 64 * 1024 });
  const b = await startNode(B);
  assert.equal(a.t.send(b.address, bigResult(64 * 1024)), false);
  assert.equal(a.t.counters.sendsDropped, 1);
  assert.equal(a.t.send(b.address, bigResult(1000)), true);
  await waitFor(() => b.received.length === 1, 'the fitting message');
});

test('a dial to a closed port: send says true, then backs off without throwing, and succeeds once the peer listens', async () => {
  // The transport's clock stands still unless moved: the backoff windows are checked exactly.
  let clock = 1000;
  const a = await startNode(A, { nowMs: () => clock, refusedDialBackoffMs: REFUSED_DIAL_BACKOFF_MS });
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  assert.equal(a.t.send(address, cancel(1)), true, 'queued while dialling');
  await waitFor(() => a.t.counters.dialsFailed === 1, 'the dial to fail');
  assert.equal(a.t.counters.queuedDropped, 1, 'the queued message is lost with its connection');
  assert.equal(a.t.send(address, cancel(2)), false, 'inside the backoff window the send drops');
  // A refused dial backs off a flat REFUSED_DIAL_BACKOFF_MS, however often it is refused: the
  // refusal detector's re-dials (every 100 ms) are never held back by a doubling window.
  for (let n = 2; n <= 5; n++) {
    clock += REFUSED_DIAL_BACKOFF_MS - 1;
    assert.equal(a.t.send(address, cancel(10 + n)), false, `refusal ${n - 1}: still inside its window`);
    clock += 1;
    assert.equal(a.t.send(address, cancel(20 + n)), true, `refusal ${n - 1}: the window has ended`);
    await waitFor(() => a.t.counters.dialsFailed === n, `dial ${n} to be refused`);
  }
  clock += 1000;
  // Without the option (a WAN transport) a refused dial backs off the doubling window as before.
  let wanClock = 1000;
  const w = await startNode('wan-dialler', { nowMs: () => wanClock });
  assert.equal(w.t.send(address, cancel(30)), true);
  await waitFor(() => w.t.counters.dialsFailed === 1, 'the WAN dial to be refused');
  wanClock += 99;
  assert.equal(w.t.send(address, cancel(31)), false, 'inside the first 100 ms window');
  wanClock += 1;
  assert.equal(w.t.send(address, cancel(32)), true, 'the first window has ended');
  await waitFor(() => w.t.counters.dialsFailed === 2, 'the second WAN dial to be refused');
  wanClock += 199;
  assert.equal(w.t.send(address, cancel(33)), false, 'the second window is 200 ms');
  w.t.close();
  const b = await startNode(B, {}, { port });
  await waitFor(() => a.t.send(address, cancel(3)) && b.received.length > 0, 'a send to get through once B listens');
  assert.equal(b.received[0]?.message.callId, 3);
  assert.equal(a.t.connectionCount(), 1);
  for (const bad of ['nonsense', 'host:', ':5701', 'host:0', 'host:70000']) assert.equal(a.t.send(bad, cancel(9)), false, bad);
  assert.deepEqual(parseAddress('[::1]:5701'), { host: '::1', port: 5701 });
  assert.deepEqual(parseAddress('::1:5701'), { host: '::1', port: 5701 });
});

test('the write queue is capped in bytes: over the cap a send drops; what was accepted is delivered', async () => {
  const a = await startNode(A, { writeQueueBytesMax: 10_000 });
  const b = await startNode(B);
  // While dialling: frames of 20 + 8 bytes each queue up to the cap.
  let accepted = 0;
  while (a.t.send(b.address, cancel(accepted + 1))) accepted++;
  assert.equal(accepted, Math.floor(10_000 / 28));
  assert.ok(a.t.bytesQueued() <= 10_000);
  assert.equal(a.t.counters.sendsDropped, 1);
  await waitFor(() => b.received.length === accepted, 'every accepted message');
  assert.deepEqual(callIdsFrom(b, A), range(accepted));
  // On an open connection the frames of one tick count against the cap until they are written.
  let burst = 0;
  while (a.t.send(b.address, bigResult(3000))) burst++;
  assert.ok(burst >= 1 && burst <= 3, `a burst of 3 KB messages stops at the cap (got ${burst})`);
  await waitFor(() => a.t.bytesQueued() === 0 && b.received.length === accepted + burst, 'the burst to drain');
  assert.equal(a.t.send(b.address, cancel(1)), true, 'below the cap again');
});

test('disconnect closes the connection and a later send dials again; close drops everything', async () => {
  const a = await startNode(A);
  const b = await startNode(B);
  a.t.send(b.address, cancel(1));
  await waitFor(() => b.received.length === 1 && b.t.connectionCount() === 1, 'the first message');
  a.t.disconnect(b.address);
  assert.equal(a.t.connectionCount(), 0);
  await waitFor(() => b.t.connectionCount() === 0 && a.t.socketCount() === 0, 'both sides to see the close');
  assert.equal(a.t.send(b.address, cancel(2)), true);
  await waitFor(() => b.received.length === 2, 'the message after a new dial');
  assert.equal(a.t.counters.dials, 2);
  a.t.close();
  assert.equal(a.t.send(b.address, cancel(3)), false);
  assert.equal(a.t.connectionCount(), 0);
  await waitFor(() => b.t.connectionCount() === 0, 'B to see the close');
});

test('a member dialling itself is not connected to itself and does not loop', async () => {
  const a = await startNode(A);
  assert.equal(a.t.send(a.address, cancel(1)), true);
  await waitFor(() => a.t.socketCount() === 0 && a.t.counters.dials === 1, 'the self connection to close');
  assert.equal(a.t.send(a.address, cancel(2)), false, 'backed off');
  assert.equal(a.received.length, 0);
  assert.equal(a.t.connectionCount(), 0);
});

test('with a source address, outgoing connections leave from it and both ends log the socket addresses', async () => {
  const a = await startNode(A, { sourceAddress: '127.0.0.5' });
  const b = await startNode(B);
  assert.equal(a.t.send(b.address, cancel(1)), true);
  await waitFor(() => b.received.length === 1, 'B to receive the message');
  const accepted = b.lines.find((l) => l.includes('member connection open'));
  assert.match(String(accepted), new RegExp(`member connection open between 127\\.0\\.0\\.1:${b.port} and 127\\.0\\.0\\.5:\\d+ \\(accepted; member ${A} at ${a.address}\\)`));
  const dialled = a.lines.find((l) => l.includes('member connection open'));
  assert.match(String(dialled), new RegExp(`member connection open between 127\\.0\\.0\\.5:\\d+ and 127\\.0\\.0\\.1:${b.port} \\(dialled; member ${B} at ${b.address}\\)`));
  // Without one, the OS picks the source: for a loopback peer, 127.0.0.1.
  const c = await startNode(C);
  c.t.send(b.address, cancel(2));
  await waitFor(() => b.received.length === 2, 'B to receive the second message');
  assert.match(String(b.lines.filter((l) => l.includes('member connection open'))[1]), new RegExp(`and 127\\.0\\.0\\.1:\\d+ \\(accepted; member ${C}`));
});

test('a source address the machine does not have fails the dial (counted, backed off), never throws', async () => {
  const b = await startNode(B);
  const a = await startNode(A, { sourceAddress: '192.0.2.123' });
  assert.equal(a.t.send(b.address, cancel(1)), true);
  await waitFor(() => a.t.counters.dialsFailed === 1, 'the dial to fail');
  assert.equal(a.t.send(b.address, cancel(2)), false, 'backed off');
  assert.equal(b.received.length, 0);
});

test('on a TLS-only port members dial each other with TLS', async () => {
  const dir = path.join(REPO_ROOT, 'tests', 'fixtures', 'tls');
  const read = (f: string): Buffer => fs.readFileSync(path.join(dir, f));
  const server: TlsOptions = { key: read('server.key'), cert: read('server.crt'), minVersion: 'TLSv1.2' };
  const client = { key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), rejectUnauthorized: true };
  const a = await startNode(A, { tls: client, sourceAddress: '127.0.0.6' }, { tls: server });
  const b = await startNode(B, { tls: client }, { tls: server });
  for (const n of range(20)) a.t.send(b.address, cancel(n));
  await waitFor(() => b.received.length === 20, 'messages over TLS');
  assert.match(String(b.lines.find((l) => l.includes('member connection open'))), / and 127\.0\.0\.6:\d+ \(accepted;/, 'a TLS dial leaves from the source address too');
  b.t.send(a.address, cancel(99));
  await waitFor(() => a.received.length === 1, 'the answer over the same TLS connection');
  assert.equal(b.t.counters.dials, 0);
  // A dialler that does not trust the certificate never gets through.
  const untrusting = await startNode(C, { tls: { ca: read('client.crt'), rejectUnauthorized: true } });
  assert.equal(untrusting.t.send(b.address, cancel(1)), true);
  await waitFor(() => untrusting.t.counters.dialsFailed === 1, 'the TLS verification to fail the dial');
  assert.equal(b.received.length, 20);
});

test('dial failures: refused (nothing listens) is told apart from a peer that accepts and closes; a closed connection is reported', async () => {
  const a = await startNode(A);
  // Nothing listens: the kernel refuses.
  const closedPort = await freePort();
  a.t.send(`127.0.0.1:${closedPort}`, cancel(1));
  await waitFor(() => a.unreachable.length === 1, 'the refused dial');
  assert.deepEqual(a.unreachable[0], { address: `127.0.0.1:${closedPort}`, refused: true });
  // A program on the port that accepts and closes every connection: a failure, not a refusal.
  const closer = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => closer.close(() => resolve())));
  const closerAddress = `127.0.0.1:${(closer.address() as net.AddressInfo).port}`;
  a.t.send(closerAddress, cancel(2));
  await waitFor(() => a.unreachable.some((u) => u.address === closerAddress), 'the failed dial to the closer');
  assert.deepEqual(a.unreachable.find((u) => u.address === closerAddress), { address: closerAddress, refused: false });
  // A member that stops: its open connection closes (reported once), then its port refuses.
  const b = await startNode(B);
  a.t.send(b.address, cancel(3));
  await waitFor(() => b.received.length === 1, 'B to receive the message');
  await b.stop();
  await waitFor(() => a.disconnected.length === 1, 'the closed connection to B');
  assert.deepEqual(a.disconnected, [{ uuid: B, address: b.address }]);
  a.t.send(b.address, cancel(4));
  await waitFor(() => a.unreachable.some((u) => u.address === b.address), 'the refused dial to B');
  assert.deepEqual(a.unreachable.find((u) => u.address === b.address), { address: b.address, refused: true });
});

test('a handshake refused by a member of another cluster is not a failed dial', async () => {
  const a = await startNode(A);
  const other = await startNode(C, { clusterName: 'other' });
  a.t.send(other.address, cancel(1));
  await waitFor(() => a.refused.length === 1, 'the refusal by the other cluster');
  assert.deepEqual(a.unreachable, []);
});
