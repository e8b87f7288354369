// The member-protocol side of a port: builds the member's TcpTransport from the configuration and
// hands it every connection the listener recognised as member protocol (preamble first). The
// transport reads the handshake under a handshake-sized cap, answers it (accept, or refuse with the
// mismatch it found) and, once accepted, carries messages both ways. Oversized or malformed frames
// close the connection and are counted; nothing a peer sends can stop this member.
import crypto from 'node:crypto';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Config, WanBatchPublisherConfig } from '../config/types.js';
import type { Transport, TransportHandler } from '../cluster/transport.js';
import type { Identity } from '../cluster/protocol/handshake.js';
import type { ComponentLogger } from '../util/logger.js';
import { MEMBER_VERSION } from '../member/version.js';
import { REFUSED_DIAL_BACKOFF_MS, TcpTransport, type TcpTransportCounters } from './tcp-transport.js';
import { tlsClientOptions } from './tls.js';

export class MemberPort {
  readonly transport: TcpTransport;
  /** Outbound connections to other clusters, one transport per WAN publisher (their cluster name). */
  private readonly wanTransports: TcpTransport[] = [];
  private localAddress: { host: string; port: number } | null = null;

  /** `sourceAddress`: the local address outgoing member connections leave from; null lets the OS choose. */
  constructor(
    private readonly config: Config,
    private readonly memberUuid: string,
    private readonly sourceAddress: string | null,
    private readonly log: ComponentLogger,
    private readonly cwd = process.cwd(),
  ) {
    const { identity, checkIdentity } = memberAuthentication(config);
    this.transport = new TcpTransport({
      clusterName: config.clusterName,
      memberUuid,
      memberVersion: MEMBER_VERSION,
      partitionCount: config.properties.partitionCount,
      localAddress: null,
      sourceAddress,
      identity,
      ...(checkIdentity === null ? {} : { checkIdentity }),
      frameBytesMax: config.properties.memberFrameBytesMax,
      tls: memberTls(config, cwd),
      log,
      // The refusal detector's re-dials (every grid.connection.monitor.interval) are never held back.
      refusedDialBackoffMs: Math.min(REFUSED_DIAL_BACKOFF_MS, config.properties.connectionMonitorIntervalMs / 2),
    });
  }

  /** Member-protocol sockets, handshaking ones included. */
  get connectionCount(): number {
    return this.transport.socketCount();
  }

  get counters(): Readonly<TcpTransportCounters> {
    return this.transport.counters;
  }

  /** Called once the member port is bound: the address this member advertises in handshakes. */
  setLocalAddress(host: string, port: number): void {
    this.localAddress = { host, port };
    this.transport.setLocalAddress(host, port);
    for (const t of this.wanTransports) t.setLocalAddress(host, port);
  }

  /**
   * A transport to a WAN publisher's target cluster: the member protocol with the target's cluster
   * name, this member's identity when security is on here (docs/wan.md), and TLS when this member's
   * port is TLS-only. It only dials; the target answers on the same connection.
   */
  openWanTransport(publisher: WanBatchPublisherConfig, handler: TransportHandler): Transport & { close(): void } {
    const { identity } = memberAuthentication(this.config);
    const t = new TcpTransport({
      clusterName: publisher.clusterName,
      memberUuid: this.memberUuid,
      memberVersion: MEMBER_VERSION,
      partitionCount: this.config.properties.partitionCount,
      localAddress: this.localAddress,
      sourceAddress: this.sourceAddress,
      identity,
      frameBytesMax: this.config.properties.memberFrameBytesMax,
      tls: memberTls(this.config, this.cwd),
      log: this.log,
    });
    t.setHandler(handler);
    this.wanTransports.push(t);
    return t;
  }

  /** Open connections to other clusters' members (WAN). */
  get wanConnectionCount(): number {
    let n = 0;
    for (const t of this.wanTransports) n += t.connectionCount();
    return n;
  }

  accept(socket: Socket, head: Buffer): void {
    this.transport.accept(socket, head);
  }

  closeAll(): void {
    this.transport.close();
    for (const t of this.wanTransports) t.close();
  }

  /** The options outbound member connections would use after re-reading the files now (null: no TLS). */
  static tlsFor(config: Config, cwd: string): ConnectionOptions | null {
    return memberTls(config, cwd);
  }

  reloadTls(options: ConnectionOptions): void {
    this.transport.reloadTls(options);
  }
}

/**
 * The member port is TLS-only when `network > ssl` is enabled without advanced networking (the
 * unified port); members then dial each other with TLS too. The advanced member endpoint has no TLS.
 */
function memberTls(config: Config, cwd: string): ConnectionOptions | null {
  if (config.advancedNetwork.enabled || !config.network.ssl.enabled) return null;
  return tlsClientOptions(config.network.ssl, cwd);
}

/**
 * With security on, this member presents its member-authentication realm's identity, and accepts a
 * peer whose credentials equal that identity or one of the realm's users (compared in constant time).
 */
function memberAuthentication(config: Config): { identity: Identity | null; checkIdentity: ((identity: Identity) => boolean) | null } {
  const security = config.security;
  if (!security.enabled) return { identity: null, checkIdentity: null };
  const realm = security.realms.find((r) => r.name === security.memberAuthenticationRealm);
  // Config validation guarantees the realm and its identity exist when security is on.
  const own = realm?.identity ?? null;
  const accepted = [...(own === null ? [] : [own]), ...(realm?.users ?? [])];
  const checkIdentity = (identity: Identity): boolean => {
    let ok = false;
    for (const a of accepted) ok = (sameSecret(a.username, identity.username) && sameSecret(a.password, identity.password)) || ok;
    return ok;
  };
  return { identity: own, checkIdentity };
}

function sameSecret(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}
