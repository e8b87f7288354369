// The client protocol's connections (spec/client.md "Connection"): the unified port hands a
// connection that starts with `CP2` here. Codecs are in src/client/ (no I/O); this file owns the
// sockets, the timers and the cluster-view registrations.
//
// Per connection: nothing but authentication before it succeeds (anything else closes the
// connection), closed unauthenticated after AUTH_TIMEOUT_MS; then ping, statistics, proxies, the
// local backup listener and the cluster view listener are answered, and every other message type
// gets error 61 naming it, the connection kept. A connection without traffic for
// grid.client.heartbeat.timeout.seconds is closed; a frame over grid.client.frame.bytes.max closes
// it before it is buffered, with a log line naming the client.
//
// Cluster view: a registered connection gets the member list and the partition table at once, and
// again whenever the cluster's members version or the table's version grows (checked every
// VIEW_CHECK_MS while any registration exists; both versions are the cluster's own, so they only
// grow and agree between members).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { ClientLiveness, ClientView, MemberApi } from '../member/member-api.js';
import { isServedCall, runCall, type CallContext } from '../client/calls.js';
import type { ComponentLogger } from '../util/logger.js';
import { GridError } from '../util/errors.js';
import { ClientFrameReader, type ClientMessage } from '../client/frames.js';
import { MessageReader, uuidFromString, type Uuid } from '../client/message.js';
import {
  AUTH_STATUS,
  decodeAuthentication,
  encodeAuthenticationResponse,
  encodeEmptyResponse,
  encodeMembersView,
  encodePartitionsView,
  encodeUuidResponse,
  MESSAGE,
} from '../client/codecs.js';
import { CLIENT_ERROR, encodeErrorResponse } from '../client/errors.js';

export const AUTH_TIMEOUT_MS = 10_000;
const SWEEP_MS = 1000;
const VIEW_CHECK_MS = 250;
/** A stopping member closes a client connection after this long without a call (and no answer owed). */
const STOP_QUIET_MS = 300;
/**
 * ...and this long after its last error answer. An official client that gets error 19 (or any
 * retryable error) five times in a row waits `hazelcast.client.invocation.retry.pause.millis`
 * (1,000 ms by default) before it sends the call again; a connection closed during that wait fails
 * the call with "Connection closed", and the Node client still sends the failed call once its wait
 * is over: a write its caller took as failed lands after the caller's next writes. So a stopping
 * member keeps the connection open until the client's wait is over, with a second to spare.
 */
const STOP_AFTER_ERROR_MS = 2000;
/**
 * A client that sent no call to this member for this long holds a partition table without it: the
 * members push a new table to the clients within VIEW_CHECK_MS, and a smart client with calls for
 * this member's former partitions sends them every few ms.
 */
const DEPART_QUIET_MS = 2 * VIEW_CHECK_MS;
/** The version the member reports to clients: a 5.x the clients' feature checks accept. */
export const CLIENT_SERVER_VERSION = '5.3.0';
const SERIALIZATION_VERSION = 1;
/** Answers queued for a client that does not read them: past this, its connection is not read until it drains. */
const WRITE_BUFFERED_BYTES_MAX = 4 * 1024 * 1024;
/** Calls of one connection in flight (forwarded, waiting) at most; past it, its calls wait unread. */
const IN_FLIGHT_MAX = 4096;

export interface ClientServerOptions {
  readonly api: () => MemberApi;
  /** grid.queue.poll.timeout.seconds.max */
  readonly pollSecondsMax: number;
  readonly clusterName: () => string;
  readonly frameBytesMax: number;
  readonly heartbeatTimeoutMs: number;
  readonly connectionsMax: number;
  readonly log: ComponentLogger;
  /** True once the member has begun to shut down (before this server's own stop). */
  readonly memberStopping: () => boolean;
}

export class ClientServer {
  private readonly connections = new Set<ClientConnection>();
  private readonly viewers = new Set<ClientConnection>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private viewTimer: NodeJS.Timeout | null = null;
  private lastView: { members: number; partitions: number } = { members: -1, partitions: -1 };
  private refusedLoggedAt = -Infinity;
  stopping = false;
  readonly counters = { accepted: 0, refusedLimit: 0, authenticated: 0, authFailed: 0, calls: 0, callsMap: 0, callsQueue: 0, callsClient: 0, errors: 0, closedIdle: 0, closedProtocol: 0, closedUnauthenticated: 0 };

  /** The figures of GET /grid/rest/metrics (docs/operations.md). */
  figures(): Record<string, number> {
    const c = this.counters;
    return {
      clientConnections: this.connections.size,
      clientAuthentications: c.authenticated,
      clientAuthenticationsRefused: c.authFailed,
      clientCalls: c.calls,
      clientCallsMap: c.callsMap,
      clientCallsQueue: c.callsQueue,
      clientCallsClient: c.callsClient,
      clientErrors: c.errors,
      clientConnectionsClosed: c.refusedLimit + c.closedIdle + c.closedProtocol + c.closedUnauthenticated,
    };
  }

  constructor(readonly o: ClientServerOptions) {}

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Takes over a sniffed connection; `head` holds the bytes already read (`CP2` and maybe more). */
  accept(socket: Socket, head: Buffer): void {
    if (this.stopping || this.connections.size >= this.o.connectionsMax) {
      this.counters.refusedLimit++;
      if (Date.now() - this.refusedLoggedAt >= 10_000) {
        this.refusedLoggedAt = Date.now();
        this.o.log.warning(`closed a client connection from ${socket.remoteAddress ?? '?'}: ${this.stopping ? 'the member is stopping' : `${this.o.connectionsMax} client connections (grid.client.connections.max)`}`);
      }
      socket.destroy();
      return;
    }
    this.counters.accepted++;
    const connection = new ClientConnection(this, socket);
    this.connections.add(connection);
    socket.on('data', (chunk: Buffer) => connection.onData(chunk));
    socket.on('drain', () => connection.onDrain());
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.onClose(connection));
    this.startSweep();
    if (head.length > 0) connection.onData(head);
    socket.resume();
  }

  private onClose(connection: ClientConnection): void {
    connection.notifyGone();
    this.connections.delete(connection);
    this.viewers.delete(connection);
    if (this.viewers.size === 0) this.stopViewChecks();
    if (this.connections.size === 0 && this.sweepTimer !== null) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  private startSweep(): void {
    if (this.sweepTimer !== null) return;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweepTimer.unref();
  }

  /**
   * Closes the connections that authenticated with another cluster id: this member left that
   * cluster and joined another (a split-brain merge, or a restart as a new member). Its versions
   * are the new cluster's and may be lower than what the client holds, which would ignore them; a
   * client that reconnects sees the new cluster id and takes the new cluster's view whole.
   */
  private closeForeign(clusterId: string): void {
    for (const c of this.connections) {
      if (c.authenticated && c.clusterId !== null && c.clusterId !== clusterId) {
        c.close(`this member is now in cluster ${clusterId} (the client authenticated with ${c.clusterId}): reconnect`);
      }
    }
  }

  private sweep(): void {
    const now = Date.now();
    // With a view listener registered, checkView does this every 250 ms already.
    if (this.viewers.size === 0) {
      const view = this.o.api().clientView();
      if (view.joined) this.closeForeign(view.clusterId);
    }
    for (const c of this.connections) {
      if (!c.authenticated && now - c.openedAt >= AUTH_TIMEOUT_MS) {
        this.counters.closedUnauthenticated++;
        c.close(`not authenticated within ${AUTH_TIMEOUT_MS / 1000} s`);
      } else if (now - c.lastReadAt >= this.o.heartbeatTimeoutMs) {
        this.counters.closedIdle++;
        c.close(`no traffic for ${this.o.heartbeatTimeoutMs / 1000} s (grid.client.heartbeat.timeout.seconds)`);
      }
    }
  }

  /** A connection registered the cluster view listener: it gets the view now and on every change. */
  addViewer(connection: ClientConnection): void {
    this.viewers.add(connection);
    connection.sendView(this.o.api().clientView());
    if (this.viewTimer === null) {
      const view = this.o.api().clientView();
      this.lastView = { members: view.membersVersion, partitions: view.partitionsVersion };
      this.viewTimer = setInterval(() => this.checkView(), VIEW_CHECK_MS);
      this.viewTimer.unref();
    }
  }

  private stopViewChecks(): void {
    if (this.viewTimer !== null) clearInterval(this.viewTimer);
    this.viewTimer = null;
  }

  private checkView(): void {
    const view = this.o.api().clientView();
    if (!view.joined) return;
    this.closeForeign(view.clusterId);
    const members = view.membersVersion !== this.lastView.members;
    const partitions = view.partitionsVersion !== this.lastView.partitions;
    if (!members && !partitions) return;
    this.lastView = { members: view.membersVersion, partitions: view.partitionsVersion };
    for (const c of this.viewers) c.sendView(view, members, partitions);
  }

  /**
   * After this member handed its replicas off and before it leaves the member list: resolves once
   * no connection owes an answer or got a call for DEPART_QUIET_MS (the clients hold a partition
   * table without this member and send their calls to the new owners), or after `maxMs`. Calls that
   * come meanwhile are served (forwarded). Removed earlier, the member would see its clients close
   * their connections to it with calls still on them.
   */
  async awaitRoutedAway(maxMs: number): Promise<void> {
    const started = Date.now();
    const quiet = (c: ClientConnection): boolean => c.inFlight === 0 && Date.now() - c.lastCallAt >= DEPART_QUIET_MS;
    const calling = (): number => [...this.connections].filter((c) => !quiet(c)).length;
    if (calling() === 0) return;
    while (Date.now() - started < maxMs && calling() > 0) await new Promise((r) => setTimeout(r, 10));
    const still = calling();
    if (still === 0) this.o.log.info(`the clients moved to the new partition owners after ${Date.now() - started} ms`);
    else this.o.log.info(`${still} client connection(s) still calling this member after ${maxMs} ms: leaving anyway (their calls are answered with 19 from now on)`);
  }

  /**
   * Stop: new connections are refused; on the open ones, calls that arrive from now on are answered
   * with error 19 (INSTANCE_NOT_ACTIVE, which the clients retry on another member), the calls in
   * flight finish (at most `drainMs`), and then the connections close. A client call made during a
   * graceful shutdown is therefore answered or retried elsewhere, never cut off with its
   * connection.
   */
  async stop(drainMs: number): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + drainMs;
    // A connection closes once no answer is owed, no call came for a moment and no error answer for
    // longer than the clients wait before a retry: a call the client wrote just before the close, or
    // one it is waiting to send again, would otherwise be lost with it (the clients do not resend a
    // non-retryable call on a closed connection), and the clients route elsewhere within moments
    // (the partition table they hold no longer names this member).
    const settled = (c: ClientConnection): boolean => c.inFlight === 0 && Date.now() - c.lastReadAt >= STOP_QUIET_MS && Date.now() - c.lastErrorAt >= STOP_AFTER_ERROR_MS;
    while (Date.now() < deadline && [...this.connections].some((c) => !settled(c))) await new Promise((r) => setTimeout(r, 10));
    this.stopViewChecks();
    for (const c of [...this.connections]) c.close('the member is stopping');
  }
}

export class ClientConnection implements ClientLiveness {
  readonly openedAt = Date.now();
  lastReadAt = Date.now();
  /** When this connection was last answered with an error (a client may be waiting to retry it). */
  lastErrorAt = 0;
  /** When a data call last came on this connection (the time of the read that carried it). */
  lastCallAt = 0;
  authenticated = false;
  closed = false;
  private readonly reader: ClientFrameReader;
  private readonly remote: string;
  /** The correlation id of this connection's cluster view registration, once it registered. */
  private viewCorrelation: bigint | null = null;
  /** Told when the connection closes (waiting polls cancel themselves). */
  private readonly goneListeners = new Set<() => void>();
  /** Answers of the current read (and of calls settled meanwhile), written together. */
  private batch: Buffer[] = [];
  private reading = false;
  private flushQueued = false;
  /** Calls whose answers are still to come (a stopping member waits for them). */
  inFlight = 0;
  /** The cluster id this connection authenticated with. */
  clusterId: string | null = null;
  /** What runCall needs, made once per connection. */
  private readonly context: { -readonly [K in keyof CallContext]: CallContext[K] };
  /** Bytes of `batch`. */
  private batchBytes = 0;
  /** Messages wait in the reader until this connection owes less (see process). */
  private stalled = false;

  constructor(
    private readonly server: ClientServer,
    private readonly socket: Socket,
  ) {
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.reader = new ClientFrameReader({ frameBytesMax: server.o.frameBytesMax, preamble: true });
    this.context = {
      api: server.o.api(),
      client: this,
      pollSecondsMax: server.o.pollSecondsMax,
      answerBytesMax: server.o.frameBytesMax,
      memberStopping: () => server.stopping || server.o.memberStopping(),
      remoteAddress: this.remote,
      internalError: (e, type) => server.o.log.severe(`unexpected failure in client call 0x${type.toString(16)} from ${this.remote}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
    };
  }

  /** A call's answer (or error response) goes out with the batch. */
  private send(bytes: Buffer): void {
    // Message type 0 is the error response.
    if (bytes.readInt32LE(6) === 0) {
      this.server.counters.errors++;
      this.lastErrorAt = Date.now();
    }
    this.write(bytes);
  }

  /** The answer of a call that was in flight. */
  private readonly sendLater = (bytes: Buffer): void => {
    this.inFlight--;
    this.send(bytes);
    if (this.stalled) this.unstall();
  };

  onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastReadAt = Date.now();
    try {
      this.reader.append(chunk);
    } catch (e) {
      this.refuse(e);
      return;
    }
    this.process();
  }

  /**
   * Handles the messages read so far, unless this connection owes too much already: answers waiting
   * to be written (WRITE_BUFFERED_BYTES_MAX) or calls in flight (IN_FLIGHT_MAX). Then the rest stays
   * in the reader and the socket is not read until the answers drain or the calls settle, so one
   * read of many calls cannot make the member hold an unbounded pile of answers.
   */
  private process(): void {
    for (;;) {
      this.stalled = false;
      this.reading = true;
      try {
        while (!this.closed) {
          if (this.owesTooMuch()) {
            this.stalled = true;
            break;
          }
          const m = this.reader.next();
          if (m === null) break;
          this.handle(m);
        }
      } catch (e) {
        this.refuse(e);
      } finally {
        this.reading = false;
      }
      this.flush();
      // The socket may have taken the whole batch at once (then no 'drain' follows): go on.
      if (!this.stalled || this.closed || this.owesTooMuch()) break;
    }
    if (this.stalled && !this.closed && !this.socket.isPaused()) this.socket.pause();
  }

  private owesTooMuch(): boolean {
    return this.batchBytes + this.socket.writableLength > WRITE_BUFFERED_BYTES_MAX || this.inFlight >= IN_FLIGHT_MAX;
  }

  /** Goes on with the messages held back, once the connection owes little enough. */
  private unstall(): void {
    if (!this.stalled || this.closed || this.owesTooMuch()) return;
    this.process();
    if (!this.stalled && !this.closed && this.socket.isPaused()) this.socket.resume();
  }

  /** Bad bytes from the client: the connection closes with a log line (what was answered goes first). */
  private refuse(e: unknown): void {
    if (!(e instanceof GridError)) throw e;
    this.server.counters.closedProtocol++;
    this.server.o.log.warning(`closed the client connection from ${this.remote}: ${e.message} (${e.code})`);
    this.flush();
    this.close(null);
  }

  /** Writes the batched answers with one write. */
  private flush(): void {
    const batch = this.batch;
    if (batch.length === 0 || this.closed) {
      batch.length = 0;
      return;
    }
    this.batch = [];
    this.batchBytes = 0;
    this.socket.write(batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
    // A client that sends calls and reads no answers (also answers that came later): stop reading
    // its calls until it catches up, as process() does.
    if (this.socket.writableLength > WRITE_BUFFERED_BYTES_MAX) {
      this.stalled = true;
      if (!this.socket.isPaused()) this.socket.pause();
    }
  }

  onDrain(): void {
    this.unstall();
  }

  close(why: string | null): void {
    if (this.closed) return;
    this.closed = true;
    if (why !== null) this.server.o.log.info(`closed the client connection from ${this.remote}: ${why}`);
    this.socket.destroy();
    this.notifyGone();
  }

  /** The socket closed (by either side): waiting polls stop waiting, nothing more is written. */
  notifyGone(): void {
    this.closed = true;
    const listeners = [...this.goneListeners];
    this.goneListeners.clear();
    for (const l of listeners) l();
  }

  isGone(): boolean {
    return this.closed;
  }

  onGone(callback: () => void): () => void {
    if (this.closed) {
      callback();
      return () => {};
    }
    this.goneListeners.add(callback);
    return () => this.goneListeners.delete(callback);
  }

  /** Queues an answer: written at the end of the read being handled, or in a microtask for a call settled later. */
  private write(bytes: Buffer): void {
    if (this.closed) return;
    this.batch.push(bytes);
    this.batchBytes += bytes.length;
    if (this.reading || this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private handle(message: ClientMessage): void {
    const r = new MessageReader(message);
    if (!this.authenticated) {
      if (r.type === MESSAGE.AUTHENTICATION) {
        this.authenticate(r);
        return;
      }
      if (r.type === MESSAGE.AUTHENTICATION_CUSTOM) {
        // Token or custom credentials: Grid's realm knows user names and passwords only.
        this.write(this.refusal(r.correlationId, AUTH_STATUS.CREDENTIALS_FAILED));
        this.server.counters.authFailed++;
        return;
      }
      this.server.counters.closedProtocol++;
      this.close(`message type 0x${r.type.toString(16).padStart(6, '0')} before authentication`);
      return;
    }
    const counters = this.server.counters;
    counters.calls++;
    const service = r.type >>> 16;
    if (service === 1) counters.callsMap++;
    else if (service === 3) counters.callsQueue++;
    else counters.callsClient++;
    switch (r.type) {
      case MESSAGE.PING:
      case MESSAGE.STATISTICS:
      case MESSAGE.CREATE_PROXY:
      case MESSAGE.CREATE_PROXIES:
      case MESSAGE.DESTROY_PROXY:
        this.write(encodeEmptyResponse(r.type, r.correlationId));
        return;
      case MESSAGE.LOCAL_BACKUP_LISTENER:
        // Backups are acknowledged before a write is answered: no backup event will ever come.
        this.write(encodeUuidResponse(r.type, r.correlationId, uuidFromString(randomUUID())));
        return;
      case MESSAGE.ADD_CLUSTER_VIEW_LISTENER:
        this.viewCorrelation = r.correlationId;
        this.write(encodeEmptyResponse(r.type, r.correlationId));
        this.server.addViewer(this);
        return;
      case MESSAGE.AUTHENTICATION:
      case MESSAGE.AUTHENTICATION_CUSTOM:
        this.close('a second authentication on one connection');
        return;
      default:
        if (isServedCall(r.type)) {
          this.lastCallAt = this.lastReadAt;
          if (this.server.stopping) {
            counters.errors++;
            this.lastErrorAt = Date.now();
            this.write(encodeErrorResponse(r.correlationId, CLIENT_ERROR.INSTANCE_NOT_ACTIVE, 'this member is shutting down: the call goes to another member'));
            return;
          }
          // The member API of the moment (a member restarted as a new member is another object).
          this.context.api = this.server.o.api();
          const out = runCall(r, this.context);
          if (out instanceof Promise) {
            this.inFlight++;
            void out.then(this.sendLater);
          } else this.send(out);
          return;
        }
        this.server.counters.errors++;
        this.write(encodeErrorResponse(r.correlationId, CLIENT_ERROR.UNSUPPORTED_OPERATION, `message type 0x${r.type.toString(16).padStart(6, '0')} is not supported by this member`));
    }
  }

  private authenticate(r: MessageReader): void {
    const request = decodeAuthentication(r);
    const api = this.server.o.api();
    const view = api.clientView();
    let status: number = AUTH_STATUS.AUTHENTICATED;
    let why = '';
    if (request.serializationVersion !== SERIALIZATION_VERSION) {
      status = AUTH_STATUS.SERIALIZATION_VERSION_MISMATCH;
      why = `serialization version ${request.serializationVersion} (this member speaks ${SERIALIZATION_VERSION})`;
    } else if (request.clusterName !== this.server.o.clusterName()) {
      status = AUTH_STATUS.CREDENTIALS_FAILED;
      why = `cluster name '${request.clusterName}' is not this cluster's`;
    } else if (api.securityEnabled()) {
      const ok = request.username !== null && request.password !== null && api.authenticate({ user: request.username, password: request.password }, 'client protocol', this.remote);
      if (!ok) {
        if (request.username === null || request.password === null) api.auditMissingCredentials('client protocol', this.remote);
        status = AUTH_STATUS.CREDENTIALS_FAILED;
        why = 'wrong or missing credentials';
      }
    } else if (request.username !== null || request.password !== null) {
      status = AUTH_STATUS.CREDENTIALS_FAILED;
      why = 'credentials given while security is off';
    }
    if (status === AUTH_STATUS.AUTHENTICATED && !view.joined) {
      status = AUTH_STATUS.NOT_ALLOWED_IN_CLUSTER;
      why = 'this member has not joined a cluster yet';
    }
    if (status !== AUTH_STATUS.AUTHENTICATED) {
      this.server.counters.authFailed++;
      this.server.o.log.info(`refused the client ${request.clientType} '${request.clientName}' from ${this.remote}: ${why}`);
      // The connection stays: the client reads the answer and closes it.
      this.write(this.refusal(r.correlationId, status));
      return;
    }
    this.authenticated = true;
    this.clusterId = view.clusterId;
    this.server.counters.authenticated++;
    this.server.o.log.info(`client ${request.clientType} '${request.clientName}' ${request.clientVersion} connected from ${this.remote}`);
    this.write(
      encodeAuthenticationResponse(r.correlationId, {
        status,
        address: { host: view.host, port: view.port },
        memberUuid: uuidFromString(view.memberUuid),
        serializationVersion: SERIALIZATION_VERSION,
        partitionCount: view.partitionCount,
        clusterId: uuidFromString(view.clusterId),
        serverVersion: CLIENT_SERVER_VERSION,
      }),
    );
  }

  private refusal(correlationId: bigint, status: number): Buffer {
    const view = this.server.o.api().clientView();
    const clusterId: Uuid = view.joined ? uuidFromString(view.clusterId) : null;
    return encodeAuthenticationResponse(correlationId, {
      status,
      address: null,
      memberUuid: uuidFromString(view.memberUuid),
      serializationVersion: SERIALIZATION_VERSION,
      partitionCount: view.partitionCount,
      clusterId,
      serverVersion: CLIENT_SERVER_VERSION,
    });
  }

  /** Sends the member list and/or the partition table to this connection's view registration. */
  sendView(view: ClientView, members = true, partitions = true): void {
    const correlation = this.viewCorrelation;
    if (correlation === null || this.closed || !view.joined) return;
    if (members) {
      this.write(
        encodeMembersView(
          correlation,
          view.membersVersion,
          view.members.map((m) => ({ uuid: uuidFromString(m.uuid), lite: m.lite, host: m.host, port: m.port, version: versionParts(m.version) })),
        ),
      );
    }
    if (partitions) {
      const byOwner = new Map<string, number[]>();
      let complete = true;
      view.owners.forEach((owner, p) => {
        if (owner === null) {
          complete = false;
          return;
        }
        let list = byOwner.get(owner);
        if (list === undefined) byOwner.set(owner, (list = []));
        list.push(p);
      });
      // As the reference does: no table while a partition has no owner (the client would route into a hole).
      if (!complete) return;
      this.write(encodePartitionsView(correlation, view.partitionsVersion, [...byOwner].map(([uuid, ids]) => ({ uuid: uuidFromString(uuid), partitions: ids }))));
    }
  }
}

function versionParts(version: string): [number, number, number] {
  const parts = version.split(/[.-]/).map((p) => Number.parseInt(p, 10));
  return [parts[0] || 0, parts[1] || 0, parts[2] || 0];
}
