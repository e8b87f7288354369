// The real twin of the Transport seam (cluster/transport.ts): member-protocol frames over TCP, or TLS
// when the member port is TLS-only, one connection per member pair.
//
// Life of a connection:
// - outbound: send() to an address with no connection dials it and queues the message; on connect
//   it writes the preamble and a HANDSHAKE_REQUEST, reads the HANDSHAKE_RESPONSE under the
//   handshake-sized frame cap, then raises the cap to frameBytesMax and flushes the queue.
// - inbound: MemberPort hands over (socket, head) once the listener saw the preamble; the request is
//   read under the handshake cap and answered by answerHandshake: accepted (the connection is then
//   used both ways) or refused (answer, close).
//
// Invariants:
// - One connection per member pair. An open connection is registered under its peer's UUID; when a
//   second one to the same UUID opens (both members dialled at once), both sides apply the same rule
//   at once: keep the one dialled by the member with the smaller UUID (same dialler: the one whose
//   handshake call id is smaller). The loser is retired gracefully (end(), then read until EOF), so
//   frames already written on it are still delivered; its unsent messages move to the winner.
// - Memory is bounded: bytes queued for a connection (not yet handed to the socket plus the socket's
//   own buffer) stay under writeQueueBytesMax (over it the message is dropped and counted); a frame
//   is refused before it is buffered when over frameBytesMax, or over the handshake cap while the
//   peer has not identified itself; the backoff and log-limit tables are bounded.
// - Nothing a peer sends throws out of here: a bad frame or message closes that connection, logged
//   and counted. send() never throws for network trouble and never blocks.
// - A failed dial (or a handshake that does not finish) starts a backoff for the address: sends in
//   the window drop at once; 100 ms doubling to 5 s, reset by a successful handshake. A refused
//   handshake backs the address off for the full 5 s, so a foreign member is not dialled in a loop.
//   With `refusedDialBackoffMs` set (the member port: REFUSED_DIAL_BACKOFF_MS, or half the refusal
//   detector's interval if smaller), a dial the kernel refused (ECONNREFUSED: nothing listens
//   there) backs off that flat window instead: such a dial costs nothing to repeat, and
//   membership's refusal detector re-dials a member whose connection closed every
//   grid.connection.monitor.interval (100 ms); a doubling window made its third dial wait 300 to
//   700 ms, and a removal over 1 s. WAN transports keep the doubling (a target cluster that is
//   down is not dialled 20 times a second).
import net, { type Socket } from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';
import { decodeMessage, encodeBody, MESSAGE_TYPES, URGENT_KINDS, type Message } from '../cluster/messages.js';
import type { Peer, Transport, TransportHandler } from '../cluster/transport.js';
import { FrameReader } from '../cluster/protocol/frame-reader.js';
import { encodeFrame, encodeFrameHeader, FLAG_RESPONSE, FLAG_URGENT, HEADER_BYTES, PREAMBLE, PROTOCOL_VERSION, PROTOCOL_VERSION_MIN, type Frame } from '../cluster/protocol/frame.js';
import {
  answerHandshake,
  decodeHandshakeRequest,
  decodeHandshakeResponse,
  encodeHandshakeRequest,
  encodeHandshakeResponse,
  HANDSHAKE_FRAME_BYTES_MAX,
  isHardRefusal,
  type HandshakeRequest,
  type Identity,
  type MemberAddress,
  type RefusalReason,
} from '../cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../cluster/protocol/message-types.js';
import { assert } from '../util/assert.js';
import { isGridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';

export const WRITE_QUEUE_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;
export const HANDSHAKE_TIMEOUT_MS_DEFAULT = 10_000;
export const BACKOFF_MIN_MS = 100;
export const BACKOFF_MAX_MS = 5_000;
/** The member port's window after a dial the kernel refused (shorter than the refusal detector's interval). */
export const REFUSED_DIAL_BACKOFF_MS = 50;
/** A soft refusal (another cluster) is logged at most this often per address. */
const SOFT_REFUSAL_LOG_INTERVAL_MS = 60_000;
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;
/** Entries kept in the backoff and log-limit tables before expired ones are swept. */
const TABLE_ENTRIES_MAX = 4096;

export interface TcpTransportOptions {
  readonly clusterName: string;
  readonly memberUuid: string;
  readonly memberVersion: string;
  readonly partitionCount: number;
  /** Advertised in handshakes; null until setLocalAddress() (the port is known only after binding). */
  readonly localAddress: MemberAddress | null;
  /**
   * The local IP outgoing connections leave from (`grid.socket.bind.any=false`), so peers see this
   * member's own address; null or absent lets the OS choose (default).
   */
  readonly sourceAddress?: string | null;
  /** Credentials presented when dialling; non-null means security is on, and peers must present theirs. */
  readonly identity: Identity | null;
  /** With security on, whether a peer's credentials are accepted (default: any credentials). */
  readonly checkIdentity?: (identity: Identity) => boolean;
  /** grid.member.frame.bytes.max: the largest frame read or written after the handshake. */
  readonly frameBytesMax: number;
  /** Bytes queued per connection before further sends are dropped (default 64 MiB). */
  readonly writeQueueBytesMax?: number;
  /** Set when the member port is TLS-only: outbound connections use tls.connect with these options. */
  readonly tls: ConnectionOptions | null;
  /** A connection must be connected and handshaken this soon (default 10 s). */
  readonly handshakeTimeoutMs?: number;
  readonly log: ComponentLogger;
  /** Monotonic milliseconds, for backoff windows and log limits (default performance.now). */
  readonly nowMs?: () => number;
  /** Set: a dial the kernel refused backs off this flat window, not the doubling one (see the top). */
  readonly refusedDialBackoffMs?: number;
}

export interface TcpTransportCounters {
  dials: number;
  dialsFailed: number;
  handshakesAccepted: number;
  /** Inbound handshakes this member refused. */
  handshakesRefused: number;
  /** Outbound handshakes a peer refused. */
  handshakesRefusedByPeer: number;
  /** Frames, messages or handshakes that were malformed or oversized; each closed its connection. */
  framesRejected: number;
  messagesSent: number;
  messagesReceived: number;
  /** Frame bytes (header and body) of the messages sent and received after handshakes. */
  bytesSent: number;
  bytesReceived: number;
  /** send() calls that returned false. */
  sendsDropped: number;
  /** Messages accepted by send() but lost because their connection closed before they were written. */
  queuedDropped: number;
  /** Connections retired because another one to the same member was kept. */
  duplicatesRetired: number;
}

type State = 'connecting' | 'handshaking' | 'open' | 'retiring' | 'closed';

class Connection {
  state: State;
  /** Set once the handshake succeeded. */
  peer: Peer | null = null;
  /** Call id of the handshake request: with `outbound`, decides between two connections of one dialler. */
  handshakeCallId = 0;
  /** Frames (header, payload, header, payload, ...) waiting for the connection to open. */
  pending: Buffer[] = [];
  pendingBytes = 0;
  pendingFrames = 0;
  corked = false;
  timer: NodeJS.Timeout | null = null;
  /** Set when the peer refused our handshake; reported to the handler outside the read loop. */
  refusal: { readonly reason: string; readonly hard: boolean } | null = null;
  failure = '';
  /** The errno code of the first socket error (`ECONNREFUSED` tells a dead process from a silent one). */
  failureCode = '';
  readonly reader: FrameReader;

  constructor(
    readonly socket: Socket,
    readonly outbound: boolean,
    /** The address this member dialled; null for inbound connections. */
    readonly dialAddress: string | null,
  ) {
    this.state = outbound ? 'connecting' : 'handshaking';
    // Until the peer has identified itself, only a handshake-sized frame is accepted.
    this.reader = new FrameReader({ frameBytesMax: HANDSHAKE_FRAME_BYTES_MAX });
  }

  queuedBytes(): number {
    return this.pendingBytes + (this.state === 'open' || this.state === 'retiring' ? this.socket.writableLength : 0);
  }

  describe(): string {
    if (this.peer !== null) return `${this.peer.address} (${this.peer.uuid})`;
    return this.dialAddress ?? `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }
}

interface Backoff {
  failures: number;
  untilMs: number;
}

const NO_HANDLER: TransportHandler = { onMessage: () => {}, onRefused: () => {} };

export class TcpTransport implements Transport {
  private readonly o: TcpTransportOptions;
  private readonly log: ComponentLogger;
  private readonly writeQueueBytesMax: number;
  private readonly handshakeTimeoutMs: number;
  private readonly nowMs: () => number;
  private handler: TransportHandler = NO_HANDLER;
  private localAddress: MemberAddress | null;
  private closed = false;
  private nextHandshakeCallId = 1;
  private readonly connections = new Set<Connection>();
  /** Where send() writes for an address: an open connection, or one being dialled. */
  private readonly byAddress = new Map<string, Connection>();
  /** The kept open connection of each peer. */
  private readonly byUuid = new Map<string, Connection>();
  private readonly backoff = new Map<string, Backoff>();
  private readonly softRefusalLogged = new Map<string, number>();
  readonly counters: TcpTransportCounters = {
    dials: 0,
    dialsFailed: 0,
    handshakesAccepted: 0,
    handshakesRefused: 0,
    handshakesRefusedByPeer: 0,
    framesRejected: 0,
    messagesSent: 0,
    messagesReceived: 0,
    bytesSent: 0,
    bytesReceived: 0,
    sendsDropped: 0,
    queuedDropped: 0,
    duplicatesRetired: 0,
  };

  /** Options of outbound TLS connections (replaced by reloadTls; connections made already keep theirs). */
  private clientTls: ConnectionOptions | null;

  constructor(options: TcpTransportOptions) {
    this.clientTls = options.tls;
    assert(Number.isInteger(options.frameBytesMax) && options.frameBytesMax >= HANDSHAKE_FRAME_BYTES_MAX, 'frameBytesMax must hold a handshake');
    this.o = options;
    this.log = options.log;
    this.writeQueueBytesMax = options.writeQueueBytesMax ?? WRITE_QUEUE_BYTES_MAX_DEFAULT;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS_DEFAULT;
    this.nowMs = options.nowMs ?? (() => performance.now());
    this.localAddress = options.localAddress;
    assert(Number.isInteger(this.writeQueueBytesMax) && this.writeQueueBytesMax > 0, 'writeQueueBytesMax must be a positive integer');
  }

  setHandler(handler: TransportHandler): void {
    this.handler = handler;
  }

  /** The address advertised in later handshakes (connections already open keep theirs). */
  setLocalAddress(host: string, port: number): void {
    this.localAddress = { host, port };
  }

  // ── Transport ──────────────────────────────────────────────────────────────────────────────────

  traffic(): { sent: number; received: number } {
    return { sent: this.counters.bytesSent, received: this.counters.bytesReceived };
  }

  send(address: string, message: Message): boolean {
    if (this.closed) return this.dropped();
    let c = this.byAddress.get(address);
    if (c === undefined) {
      const b = this.backoff.get(address);
      if (b !== undefined && this.nowMs() < b.untilMs) return this.dropped();
    }
    // Header and body go out as two buffers of one writev: the body is never copied.
    const payload = encodeBody(message);
    let header: Buffer;
    try {
      const flags = URGENT_KINDS.has(message.kind) ? FLAG_URGENT : 0;
      header = encodeFrameHeader({ messageType: MESSAGE_TYPES[message.kind], callId: message.callId, flags }, payload.length, this.o.frameBytesMax);
    } catch (e) {
      if (!isGridError(e)) throw e;
      this.log.warning(`${message.kind} to ${address} not sent: ${e.message}`);
      return this.dropped();
    }
    if (c === undefined) {
      const dialled = this.dial(address);
      if (dialled === null) return this.dropped();
      c = dialled;
    }
    if (c.queuedBytes() + header.length + payload.length > this.writeQueueBytesMax) return this.dropped();
    this.write(c, header, payload);
    this.counters.messagesSent++;
    this.counters.bytesSent += header.length + payload.length;
    return true;
  }

  disconnect(address: string, uuid?: string): void {
    if (uuid !== undefined) {
      // Only that member's connections: a new incarnation at the same address keeps its own.
      for (const c of [...this.connections]) {
        if (c.peer === null || c.peer.uuid !== uuid || c.state === 'closed' || c.state === 'retiring') continue;
        this.unregister(c);
        this.retire(c);
      }
      return;
    }
    const c = this.byAddress.get(address);
    if (c === undefined) return;
    this.unregister(c);
    if (c.state === 'open') this.retire(c);
    else this.destroy(c, 'disconnected');
  }

  connectionCount(): number {
    return this.byUuid.size;
  }

  // ── runtime side ───────────────────────────────────────────────────────────────────────────────

  /** Every socket this transport holds, handshaking and retiring ones included (for metrics). */
  socketCount(): number {
    return this.connections.size;
  }

  /** Bytes queued across all connections, not yet written to the network. */
  bytesQueued(): number {
    let n = 0;
    for (const c of this.connections) n += c.queuedBytes();
    return n;
  }

  /** Takes a connection whose first bytes (`head`, starting with the preamble) were already read. */
  accept(socket: Socket, head: Buffer): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_INITIAL_DELAY_MS);
    const c = new Connection(socket, false, null);
    this.track(c);
    this.onBytes(c, head);
    socket.resume();
  }

  /** Closes every connection at once; later sends drop. Used when the member stops. */
  /** New certificates (SIGHUP): used by connections dialled from now on. */
  reloadTls(options: ConnectionOptions): void {
    if (this.clientTls !== null) this.clientTls = options;
  }

  close(): void {
    this.closed = true;
    for (const c of [...this.connections]) this.destroy(c, 'transport closed');
    this.byAddress.clear();
    this.byUuid.clear();
  }

  // ── dialling and the handshake ─────────────────────────────────────────────────────────────────

  private dial(address: string): Connection | null {
    const target = parseAddress(address);
    if (target === null) {
      this.log.fine(`not dialling ${JSON.stringify(address)}: not a host:port address`);
      return null;
    }
    this.counters.dials++;
    let socket: Socket;
    try {
      // An unusable source address (EADDRNOTAVAIL) fails asynchronously, like a refused dial.
      const sourceAddress = this.o.sourceAddress ?? null;
      const source = sourceAddress === null ? {} : { localAddress: sourceAddress };
      if (this.clientTls === null) {
        socket = net.connect({ host: target.host, port: target.port, ...source });
      } else {
        // tls.connect hands these options to its own net.connect, localAddress included.
        const options: ConnectionOptions & { localAddress?: string } = { ...this.clientTls, host: target.host, port: target.port, ...source };
        if (net.isIP(target.host) === 0) options.servername = target.host;
        socket = tls.connect(options);
      }
    } catch (e) {
      // Node refuses some inputs synchronously (e.g. TLS options it cannot use): a failed dial.
      this.counters.dialsFailed++;
      this.noteFailure(address, false);
      this.log.fine(`could not connect to ${address}: ${(e as Error).message}`);
      return null;
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_INITIAL_DELAY_MS);
    const c = new Connection(socket, true, address);
    this.track(c);
    this.byAddress.set(address, c);
    socket.once(this.clientTls === null ? 'connect' : 'secureConnect', () => this.onConnected(c));
    return c;
  }

  private track(c: Connection): void {
    this.connections.add(c);
    c.timer = this.timer(c, 'the handshake did not finish in time');
    c.socket.on('data', (chunk: Buffer) => this.onBytes(c, chunk));
    c.socket.on('error', (e: NodeJS.ErrnoException) => {
      if (c.failure === '') {
        c.failure = e.message;
        c.failureCode = e.code ?? '';
      }
    });
    c.socket.once('end', () => this.onPeerEnd(c));
    c.socket.once('close', () => this.onClose(c));
  }

  private onConnected(c: Connection): void {
    if (c.state !== 'connecting') return;
    c.state = 'handshaking';
    c.handshakeCallId = this.nextHandshakeCallId++;
    const request: HandshakeRequest = {
      protocolVersionMin: PROTOCOL_VERSION_MIN,
      protocolVersionMax: PROTOCOL_VERSION,
      clusterName: this.o.clusterName,
      memberUuid: this.o.memberUuid,
      memberVersion: this.o.memberVersion,
      partitionCount: this.o.partitionCount,
      addresses: this.localAddress === null ? [] : [this.localAddress],
      identity: this.o.identity,
    };
    c.socket.cork();
    c.socket.write(PREAMBLE);
    c.socket.write(encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: c.handshakeCallId }, encodeHandshakeRequest(request)));
    c.socket.uncork();
  }

  private onBytes(c: Connection, chunk: Buffer): void {
    if (c.state === 'closed') return;
    let frame: Frame | null;
    for (;;) {
      let message: Message;
      try {
        if (chunk.length > 0) {
          c.reader.append(chunk);
          chunk = EMPTY;
        }
        frame = c.reader.next();
        if (frame === null) return;
        if (c.state === 'handshaking') {
          if (c.outbound) this.onHandshakeResponse(c, frame);
          else this.onHandshakeRequest(c, frame);
          // A connection retired at once as a duplicate still delivers the frames behind the handshake.
          const now = stateOf(c);
          if (now === 'open' || now === 'retiring') continue;
          break;
        }
        message = decodeMessage(frame.messageType, frame.callId, frame.payload);
      } catch (e) {
        // Everything in the try depends only on the peer's bytes: whatever it throws closes this connection.
        this.reject(c, e);
        return;
      }
      this.counters.messagesReceived++;
      this.counters.bytesReceived += HEADER_BYTES + frame.payload.length;
      this.handler.onMessage(c.peer as Peer, message);
      // The handler may have disconnected this peer or closed the transport.
      if (stateOf(c) === 'closed') return;
    }
    if (c.refusal !== null && c.dialAddress !== null) this.handler.onRefused(c.dialAddress, c.refusal.reason, c.refusal.hard);
  }

  private onHandshakeRequest(c: Connection, frame: Frame): void {
    if (frame.messageType !== HANDSHAKE_REQUEST) throw new Error(`first frame has message type ${frame.messageType}, expected a handshake`);
    const request = decodeHandshakeRequest(frame.payload);
    const first = request.addresses[0];
    const address = first === undefined ? `${c.socket.remoteAddress ?? '?'}:${c.socket.remotePort ?? 0}` : formatAddress(first.host, first.port);
    if (request.memberUuid === this.o.memberUuid) {
      this.log.fine(`closed a member-protocol connection from this member itself (${address})`);
      this.destroy(c, 'connected to itself');
      return;
    }
    const response = answerHandshake(request, {
      clusterName: this.o.clusterName,
      memberUuid: this.o.memberUuid,
      memberVersion: this.o.memberVersion,
      protocolVersionMin: PROTOCOL_VERSION_MIN,
      protocolVersionMax: PROTOCOL_VERSION,
      partitionCount: this.o.partitionCount,
      identityRequired: this.o.identity !== null,
      ...(this.o.checkIdentity === undefined ? {} : { checkIdentity: this.o.checkIdentity }),
    });
    const answer = encodeFrame({ messageType: HANDSHAKE_RESPONSE, flags: FLAG_RESPONSE, callId: frame.callId }, encodeHandshakeResponse(response));
    if (response.kind === 'refused') {
      this.counters.handshakesRefused++;
      this.logRefusal(address, `handshake from member ${request.memberUuid} at ${address} refused`, response.reason, response.message);
      this.unregister(c);
      c.state = 'closed';
      c.socket.write(PREAMBLE);
      c.socket.end(answer);
      return;
    }
    c.handshakeCallId = frame.callId;
    c.socket.cork();
    c.socket.write(PREAMBLE);
    c.socket.write(answer);
    c.socket.uncork();
    this.open(c, { uuid: request.memberUuid, address });
  }

  private onHandshakeResponse(c: Connection, frame: Frame): void {
    const address = c.dialAddress as string;
    if (frame.messageType !== HANDSHAKE_RESPONSE) throw new Error(`first frame has message type ${frame.messageType}, expected a handshake response`);
    const response = decodeHandshakeResponse(frame.payload);
    if (response.kind === 'refused') {
      this.counters.handshakesRefusedByPeer++;
      this.noteFailure(address, true);
      this.logRefusal(address, `member ${response.memberUuid} at ${address} refused this member's handshake`, response.reason, response.message);
      this.destroy(c, 'handshake refused');
      c.refusal = { reason: `${response.reason}: ${response.message}`, hard: isHardRefusal(response.reason) };
      return;
    }
    if (response.memberUuid === this.o.memberUuid) {
      this.log.fine(`${address} is this member itself; not dialling it for ${BACKOFF_MAX_MS} ms`);
      this.noteFailure(address, true);
      this.destroy(c, 'connected to itself');
      return;
    }
    this.backoff.delete(address);
    this.open(c, { uuid: response.memberUuid, address });
  }

  /** The handshake succeeded: register the connection, settle duplicates, flush what waited. */
  private open(c: Connection, peer: Peer): void {
    if (c.timer !== null) clearTimeout(c.timer);
    c.timer = null;
    c.reader.setFrameBytesMax(this.o.frameBytesMax);
    c.peer = peer;
    c.state = 'open';
    this.counters.handshakesAccepted++;
    // Both ends of the socket, as the reference logs a new cluster connection: with bind-any off,
    // operators can see that peers connect from their own addresses.
    const s = c.socket;
    this.log.info(
      `member connection open between ${s.localAddress ?? '?'}:${s.localPort ?? '?'} and ${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'} (${c.outbound ? 'dialled' : 'accepted'}; member ${peer.uuid} at ${peer.address})`,
    );
    const other = this.byUuid.get(peer.uuid);
    let winner = c;
    if (other !== undefined && other !== c) {
      winner = this.keeps(other, c) ? other : c;
      const loser = winner === other ? c : other;
      this.counters.duplicatesRetired++;
      this.log.fine(`two connections to member ${peer.uuid}: keeping the one dialled by ${this.diallerOf(winner)}`);
      this.moveTo(loser, winner);
      this.retire(loser);
    }
    this.byUuid.set(peer.uuid, winner);
    // Route the peer's address here too, taking over a dial still in progress to the same address:
    // its queued messages go first, and the dial itself is settled as a duplicate when it opens.
    const routed = this.byAddress.get(peer.address);
    if (routed === undefined) this.byAddress.set(peer.address, winner);
    else if (routed !== winner && routed.state !== 'open') {
      this.moveTo(routed, winner);
      this.byAddress.set(peer.address, winner);
    }
    if (winner === c) this.flush(c);
  }

  /** Whether `a` is kept over `b` (both open to the same peer); every member decides the same way. */
  private keeps(a: Connection, b: Connection): boolean {
    const da = this.diallerOf(a);
    const db = this.diallerOf(b);
    if (da !== db) return da < db;
    return a.handshakeCallId < b.handshakeCallId;
  }

  private diallerOf(c: Connection): string {
    return c.outbound ? this.o.memberUuid : (c.peer as Peer).uuid;
  }

  /** Moves `from`'s unsent frames and its address routes to `to`. */
  private moveTo(from: Connection, to: Connection): void {
    const frames = from.pending;
    from.pending = [];
    from.pendingBytes = 0;
    from.pendingFrames = 0;
    for (let i = 0; i < frames.length; i += 2) this.write(to, frames[i] as Buffer, frames[i + 1] as Buffer);
    for (const [address, routed] of this.byAddress) if (routed === from) this.byAddress.set(address, to);
    if (from.peer !== null && this.byUuid.get(from.peer.uuid) === from) this.byUuid.set(from.peer.uuid, to);
  }

  // ── writing ────────────────────────────────────────────────────────────────────────────────────

  private write(c: Connection, header: Buffer, payload: Buffer): void {
    if (c.state !== 'open') {
      c.pending.push(header, payload);
      c.pendingBytes += header.length + payload.length;
      c.pendingFrames++;
      return;
    }
    // Frames sent in one tick leave in one writev.
    if (!c.corked) {
      c.corked = true;
      c.socket.cork();
      process.nextTick(uncork, c);
    }
    c.socket.write(header);
    if (payload.length > 0) c.socket.write(payload);
  }

  private flush(c: Connection): void {
    const frames = c.pending;
    if (frames.length === 0) return;
    c.pending = [];
    c.pendingBytes = 0;
    c.pendingFrames = 0;
    for (let i = 0; i < frames.length; i += 2) this.write(c, frames[i] as Buffer, frames[i + 1] as Buffer);
  }

  // ── closing ────────────────────────────────────────────────────────────────────────────────────

  /** Graceful close: no new frames; what was written is delivered; the peer's frames are read until EOF. */
  private retire(c: Connection): void {
    if (c.state === 'closed' || c.state === 'retiring') return;
    this.unregister(c);
    c.state = 'retiring';
    c.socket.end();
    if (c.timer !== null) clearTimeout(c.timer);
    c.timer = this.timer(c, 'retired connection did not close in time');
  }

  /** The peer closed its side: nothing more can be written here (node ends ours after the queued bytes). */
  private onPeerEnd(c: Connection): void {
    if (c.state !== 'open') return;
    this.unregister(c);
    c.state = 'retiring';
    c.timer = this.timer(c, 'retired connection did not close in time');
  }

  /** Destroys `c` unless it settles (opens or closes) in time; the socket, not the timer, keeps a process alive. */
  private timer(c: Connection, why: string): NodeJS.Timeout {
    const t = setTimeout(() => this.destroy(c, why), this.handshakeTimeoutMs);
    t.unref();
    return t;
  }

  private destroy(c: Connection, why: string): void {
    if (c.failure === '') c.failure = why;
    c.socket.destroy();
    this.onClose(c);
  }

  private onClose(c: Connection): void {
    if (!this.connections.delete(c)) return;
    if (c.timer !== null) clearTimeout(c.timer);
    c.timer = null;
    const wasOpen = c.peer !== null;
    if (c.state !== 'closed') this.unregister(c);
    c.state = 'closed';
    if (c.pendingFrames > 0) {
      this.counters.queuedDropped += c.pendingFrames;
      c.pending = [];
      c.pendingBytes = 0;
      c.pendingFrames = 0;
    }
    if (c.outbound && !wasOpen && c.dialAddress !== null) {
      if (c.failure !== 'handshake refused' && c.failure !== 'connected to itself' && c.failure !== 'transport closed') {
        this.counters.dialsFailed++;
        this.noteFailure(c.dialAddress, false, c.failureCode === 'ECONNREFUSED');
        this.log.fine(`could not connect to ${c.dialAddress}: ${c.failure || 'connection closed'}`);
        // Only the kernel's refusal counts as "nothing listens there"; a dial that hung until the
        // handshake timeout, or was accepted and then closed, proves nothing about the process.
        this.handler.onUnreachable?.(c.dialAddress, c.failureCode === 'ECONNREFUSED');
      }
    } else if (wasOpen) {
      this.log.fine(`connection to member ${c.describe()} closed${c.failure === '' ? '' : `: ${c.failure}`}`);
      // A duplicate retired in favour of another open connection is not a lost peer.
      const peer = c.peer as Peer;
      if (!this.closed && !this.byUuid.has(peer.uuid)) this.handler.onDisconnected?.(peer);
    }
  }

  /**
   * Removes every route to `c`; it carries no new frames after this. An address whose dial is still
   * in progress on another connection is routed back to that one rather than dialled a third time.
   */
  private unregister(c: Connection): void {
    for (const [address, routed] of this.byAddress) {
      if (routed !== c) continue;
      this.byAddress.delete(address);
      for (const d of this.connections) {
        if (d !== c && d.dialAddress === address && (d.state === 'connecting' || d.state === 'handshaking')) {
          this.byAddress.set(address, d);
          break;
        }
      }
    }
    if (c.peer !== null && this.byUuid.get(c.peer.uuid) === c) this.byUuid.delete(c.peer.uuid);
  }

  private reject(c: Connection, e: unknown): void {
    this.counters.framesRejected++;
    const reason = e instanceof Error ? e.message : String(e);
    this.log.warning(`member-protocol connection ${c.outbound ? 'to' : 'from'} ${c.describe()} closed: ${reason}`);
    this.destroy(c, reason);
  }

  // ── backoff, logs ──────────────────────────────────────────────────────────────────────────────

  /**
   * `handshakeRefused`: the peer refused our handshake (the full window). `connectionRefused`: the
   * kernel refused the dial (a flat short window, not counted toward the doubling).
   */
  private noteFailure(address: string, handshakeRefused: boolean, connectionRefused = false): void {
    const now = this.nowMs();
    if (this.backoff.size >= TABLE_ENTRIES_MAX) sweep(this.backoff, (b) => b.untilMs <= now);
    if (this.backoff.size >= TABLE_ENTRIES_MAX) this.backoff.clear();
    const b = this.backoff.get(address) ?? { failures: 0, untilMs: 0 };
    const flat = this.o.refusedDialBackoffMs;
    if (connectionRefused && !handshakeRefused && flat !== undefined) {
      b.untilMs = now + flat;
    } else {
      b.failures = Math.min(b.failures + 1, 32);
      b.untilMs = now + (handshakeRefused ? BACKOFF_MAX_MS : Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (b.failures - 1)));
    }
    this.backoff.set(address, b);
  }

  private logRefusal(address: string, what: string, reason: RefusalReason, message: string): void {
    const line = `${what}: ${reason}: ${message}`;
    if (isHardRefusal(reason)) {
      this.log.warning(line);
      return;
    }
    const now = this.nowMs();
    const last = this.softRefusalLogged.get(address);
    if (last !== undefined && now - last < SOFT_REFUSAL_LOG_INTERVAL_MS) return;
    if (this.softRefusalLogged.size >= TABLE_ENTRIES_MAX) sweep(this.softRefusalLogged, (t) => now - t >= SOFT_REFUSAL_LOG_INTERVAL_MS);
    if (this.softRefusalLogged.size >= TABLE_ENTRIES_MAX) this.softRefusalLogged.clear();
    this.softRefusalLogged.set(address, now);
    this.log.info(line);
  }

  private dropped(): false {
    this.counters.sendsDropped++;
    return false;
  }
}

const EMPTY = Buffer.alloc(0);

/** Reads the state past TypeScript's narrowing, for checks after calls that may change it. */
function stateOf(c: Connection): State {
  return c.state;
}

function uncork(c: Connection): void {
  c.corked = false;
  c.socket.uncork();
}

function sweep<V>(table: Map<string, V>, expired: (v: V) => boolean): void {
  for (const [k, v] of table) if (expired(v)) table.delete(k);
}

/** "host:port" as peers are addressed (no brackets, also for IPv6 hosts). */
export function formatAddress(host: string, port: number): string {
  return `${host}:${port}`;
}

/** Parses "host:port", "[v6]:port" or "v6:port" (the port is after the last colon); null if invalid. */
export function parseAddress(address: string): MemberAddress | null {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return null;
  let host = address.slice(0, colon);
  const portText = address.slice(colon + 1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (!/^\d{1,5}$/.test(portText) || host.length === 0 || /[\s[\]]/.test(host)) return null;
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  return { host, port };
}
