// A listening port that sniffs each new connection and hands it to the HTTP server, the member
// protocol or TLS, or closes it. Binds `port`, walking up through `portCount` ports when the port is
// taken and auto-increment is on. Connections that send nothing within the sniff timeout, or bytes
// that are no protocol we speak, are closed and counted.
import net, { type Server, type Socket } from 'node:net';
import type { TlsOptions } from 'node:tls';
import type { PortConfig } from '../config/types.js';
import type { ComponentLogger } from '../util/logger.js';
import { sniff, type SniffResult } from './sniff.js';
import { TlsTerminator } from './tls.js';

export type ProtocolHandler = (socket: Socket, head: Buffer) => void;

export interface ListenerOptions {
  readonly name: string;
  readonly host: string;
  readonly port: PortConfig;
  readonly sniffTimeoutMs: number;
  readonly connectionsMax: number;
  readonly http: ProtocolHandler | null;
  readonly member: ProtocolHandler | null;
  /** The client protocol (`CP2`); null: such connections are closed with a log line saying why. */
  readonly client: ProtocolHandler | null;
  /** Why a `CP2` connection is closed when `client` is null. */
  readonly clientOffReason?: string;
  /** Set: the port speaks TLS only; plain connections are closed, decrypted ones are sniffed again. */
  readonly tls: TlsOptions | null;
  readonly log: ComponentLogger;
}

/** Bytes we are willing to hold while deciding what a connection speaks. */
const SNIFF_BYTES_MAX = 32;

export class Listener {
  private server: Server | null = null;
  /** Connections whose first bytes have not arrived yet: closed at once when the listener closes. */
  private readonly sniffing = new Set<Socket>();
  private boundPort = 0;
  readonly counters = { accepted: 0, refusedUnknown: 0, refusedTls: 0, refusedTimeout: 0, refusedProtocolOff: 0 };
  private clientOffLoggedAt = -Infinity;
  private readonly terminator: TlsTerminator | null;

  constructor(private readonly options: ListenerOptions) {
    this.terminator = options.tls === null ? null : new TlsTerminator(options.tls, (socket) => this.onConnection(socket, true), options.log);
  }

  /** New certificates (SIGHUP): handshakes from now on use them; open connections keep theirs. */
  reloadTls(options: TlsOptions): void {
    this.terminator?.reload(options);
  }

  get tlsHandshakesFailed(): number {
    return this.terminator?.counters.handshakesFailed ?? 0;
  }

  get port(): number {
    return this.boundPort;
  }

  async listen(): Promise<number> {
    const { port, autoIncrement, portCount } = this.options.port;
    const last = port === 0 || !autoIncrement ? port : Math.min(65535, port + portCount - 1);
    let lastError: unknown = null;
    for (let candidate = port; candidate <= last; candidate++) {
      try {
        this.boundPort = await this.tryListen(candidate);
        return this.boundPort;
      } catch (e) {
        lastError = e;
        if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') break;
        this.options.log.fine(`port ${candidate} is in use, trying the next one`);
      }
    }
    const range = last === port ? `port ${port}` : `ports ${port}-${last}`;
    throw new Error(`${this.options.name}: cannot listen on ${this.options.host} ${range}: ${String((lastError as Error)?.message ?? lastError)}`);
  }

  private tryListen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer({ noDelay: true }, (socket) => this.onConnection(socket));
      server.maxConnections = this.options.connectionsMax;
      server.once('error', reject);
      server.listen({ host: this.options.host, port, exclusive: true }, () => {
        server.removeListener('error', reject);
        server.on('error', (e) => this.options.log.warning(`listener error: ${e.message}`));
        this.server = server;
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  }

  /** A new connection (`secured`: the decrypted side of a TLS connection of this port). */
  private onConnection(socket: Socket, secured = false): void {
    if (!secured) this.counters.accepted++;
    if (!secured && this.terminator !== null) {
      // A TLS-only port has nothing to sniff: TLS starts at once, and a client that speaks anything
      // else fails the handshake and is closed. The decrypted stream is sniffed like a plain one.
      socket.on('error', () => socket.destroy());
      this.terminator.accept(socket);
      return;
    }
    let head: Buffer = Buffer.alloc(0);
    this.sniffing.add(socket);
    const timer = setTimeout(() => {
      this.counters.refusedTimeout++;
      socket.destroy();
    }, this.options.sniffTimeoutMs);
    const onError = (): void => {
      clearTimeout(timer);
      socket.destroy();
    };
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const kind = sniff(head.length > SNIFF_BYTES_MAX ? head.subarray(0, SNIFF_BYTES_MAX) : head);
      if (kind === 'need-more') return;
      clearTimeout(timer);
      this.sniffing.delete(socket);
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
      socket.pause();
      this.route(kind, socket, head, secured);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', () => {
      clearTimeout(timer);
      this.sniffing.delete(socket);
    });
  }

  private route(kind: Exclude<SniffResult, 'need-more'>, socket: Socket, head: Buffer, secured: boolean): void {
    const handler = kind === 'http' ? this.options.http : kind === 'member' ? this.options.member : kind === 'client' ? this.options.client : null;
    if (handler !== null) {
      // Errors after the hand-off belong to the new owner; keep one listener so none is unhandled.
      socket.on('error', () => socket.destroy());
      handler(socket, head);
      return;
    }
    if (kind === 'unknown') this.counters.refusedUnknown++;
    else if (kind === 'tls') this.counters.refusedTls++;
    else this.counters.refusedProtocolOff++;
    if (kind === 'client' && Date.now() - this.clientOffLoggedAt >= 10_000) {
      // At most one line per 10 s: a client retrying in a loop does not flood the log.
      this.clientOffLoggedAt = Date.now();
      this.options.log.info(`closed a client-protocol connection from ${socket.remoteAddress ?? '?'} on ${this.options.name}: ${this.options.clientOffReason ?? 'this port does not serve the client protocol'}`);
    }
    this.options.log.fine(`closed a ${kind} connection from ${socket.remoteAddress ?? '?'} on ${this.options.name}`);
    socket.destroy();
  }

  close(): Promise<void> {
    const server = this.server;
    for (const socket of this.sniffing) socket.destroy();
    if (server === null) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
