// Assembles a running member from a validated Config: logger, member, HTTP server, listeners, the
// member-protocol port, the expiry sweep, and graceful stop. The only place (with member.ts) where
// sockets, timers and process signals meet the member.
import { HISTORY_STEP_MS } from '../console/metrics-history.js';
import { randomUUID } from 'node:crypto';
import { BIND_ANY_HOST, type AddressChoice } from '../config/bind-address.js';
import type { Config, SslConfig } from '../config/types.js';
import fs from 'node:fs';
import os from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { buildRoutes } from '../http/routes.js';
import { Dispatcher } from '../http/dispatch.js';
import { LocalMember } from '../member/local-member.js';
import { DEPART_WAIT_MS } from '../member/cluster-node.js';
import { systemClock } from './clock.js';
import { RestServer } from './http-server.js';
import { ClientServer } from './client-server.js';
import { Listener } from './listener.js';
import type { Logger, ComponentLogger } from '../util/logger.js';
import { MemberPort } from './member-port.js';
import { tlsOptions } from './tls.js';
import { ProcessMetrics } from './process-metrics.js';
import { LATENCY_BOUNDS_SECONDS, STATUS_CLASSES } from '../http/request-stats.js';
import type { RuntimeFigures } from '../member/metrics-snapshot.js';
import type { PersistenceSetup } from '../persistence/node-persistence.js';
import { chooseMemberDir } from '../persistence/member-dir.js';
import { FileDisk } from './file-disk.js';

const SWEEP_INTERVAL_MS = 1000;
const SWEEP_BUDGET_RECORDS = 10_000;

export class MemberRuntime {
  /** The member; replaced when it must start over as a new one (reincarnate). */
  member!: LocalMember;
  private readonly rest: RestServer;
  /** Client-protocol connections (spec/client.md); null when `network > client-protocol` is off. */
  private readonly clients: ClientServer | null;
  private memberPort!: MemberPort;
  private readonly dispatcher: Dispatcher;
  private readonly listeners: Listener[] = [];
  /** Listeners that speak TLS, with the configuration their certificates come from (SIGHUP re-reads it). */
  private readonly tlsListeners: { listener: Listener; ssl: SslConfig }[] = [];
  private readonly log: ComponentLogger;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Samples the member's figures for the console's charts (console/metrics-history.ts). */
  private historyTimer: NodeJS.Timeout | null = null;
  private readonly processMetrics = new ProcessMetrics();
  private stopPromise: Promise<void> | null = null;
  /** Where the member listens once started (a reincarnated member takes it over). */
  private bound: { host: string; port: number } | null = null;
  private reincarnating = false;

  constructor(
    private readonly config: Config,
    /** Which address to advertise, bind and dial from (config/bind-address.ts chooseAddress). */
    private readonly address: AddressChoice,
    private readonly logger: Logger,
    private readonly onStopped: (code: number) => void,
  ) {
    this.log = logger.component('runtime');
    this.build(false);
    this.dispatcher = new Dispatcher(buildRoutes(), this.member, {
      internalError: (error, method, target) => {
        const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
        this.logger.log('SEVERE', 'http', `unexpected failure in ${method} ${target}: ${stack}`);
      },
    });
    const dispatcher = this.dispatcher;
    const p = config.properties;
    this.rest = new RestServer(
      dispatcher,
      {
        headerBytesMax: p.restHeaderBytesMax,
        bodyBytesMax: p.restBodyBytesMax,
        pipelineMax: p.restPipelineMax,
        headersTimeoutSeconds: p.restHeadersTimeoutSeconds,
        idleTimeoutSeconds: p.restIdleTimeoutSeconds,
        sharedReadBuffer: p.restReadBufferShared,
      },
      logger.component('http'),
    );
    this.clients = config.network.clientProtocol.enabled
      ? new ClientServer({
          api: () => this.member,
          pollSecondsMax: p.queuePollTimeoutSecondsMax,
          clusterName: () => this.config.clusterName,
          frameBytesMax: p.clientFrameBytesMax,
          heartbeatTimeoutMs: p.clientHeartbeatTimeoutSeconds * 1000,
          connectionsMax: p.clientConnectionsMax,
          log: logger.component('client'),
          memberStopping: () => this.stopPromise !== null,
        })
      : null;
  }

  /**
   * Makes the member and its member-protocol port. The transport needs the member's UUID for its
   * handshakes, and the member needs the transport. With persistence the UUID is the one persisted
   * in the member's directory; `fresh`: a new directory and UUID (a member starting over).
   */
  private build(fresh: boolean): void {
    const config = this.config;
    let uuid: string = randomUUID();
    let persistence: PersistenceSetup | undefined;
    if (config.persistence.enabled) {
      const setup = this.choosePersistenceDir(fresh);
      persistence = setup.setup;
      uuid = setup.uuid;
    }
    this.memberPort = new MemberPort(config, uuid, this.address.sourceAddress, this.logger.component('member-protocol'));
    this.member = new LocalMember(config, {
      uuid,
      transport: this.memberPort.transport,
      clock: systemClock,
      logger: this.logger,
      connections: () => ({ http: this.rest.connectionCount, member: this.memberPort.connectionCount }),
      runtimeMetrics: () => this.runtimeMetrics(),
      requestStop: (reason) => void this.stop(reason),
      requestRestart: (reason) => this.reincarnate(reason),
      requestExit: (code, reason) => void this.stop(reason, code),
      seed: Math.floor(Math.random() * 0x7fffffff),
      openWanTransport: (publisher, handler) => this.memberPort.openWanTransport(publisher, handler),
      ...(persistence === undefined ? {} : { persistence }),
      ...(config.cpSubsystem.cpMemberCount > 0 && config.cpSubsystem.persistenceEnabled ? { cpPersistence: { disk: new FileDisk(), baseDir: path.resolve(process.cwd(), config.cpSubsystem.baseDir) } } : {}),
    });
    const member = this.member;
    this.memberPort.transport.setHandler({
      onMessage: (from, message) => member.onMessage(from, message),
      onRefused: (address) => member.node.onRefused(address),
      onUnreachable: (address, refused) => member.node.onUnreachable(address, refused),
      onDisconnected: (peer) => member.node.onDisconnected(peer),
    });
  }

  /**
   * The member starts over as a new one (persistence: forceStart, or its data is stale): the old
   * member stops without a hand-off, its directory is wiped, and a member with a new UUID and an
   * empty directory takes over the same ports and joins. REST keeps being served throughout.
   */
  private reincarnate(reason: string): void {
    if (this.reincarnating || this.stopPromise !== null || this.bound === null) return;
    this.reincarnating = true;
    setImmediate(() => {
      try {
        const old = this.member;
        const oldDir = old.node.persistence?.setup.dir ?? null;
        this.log.warning(`${reason}: member ${old.uuid} wipes its persisted data and joins as a new member`);
        old.node.stop();
        this.memberPort.closeAll();
        if (oldDir !== null) new FileDisk().remove(oldDir);
        this.build(true);
        this.dispatcher.setApi(this.member);
        const { host, port } = this.bound as { host: string; port: number };
        this.member.setAddress(host, port);
        this.memberPort.setLocalAddress(host, port);
        this.member.markActive().then(
          () => this.log.info(`member ${this.member.uuid} started over: ${this.member.membersLine()}`),
          (e: unknown) => {
            this.log.severe(`could not start over as a new member: ${e instanceof Error ? e.message : String(e)}; stopping`);
            void this.stop('a failed restart as a new member');
          },
        );
      } catch (e) {
        this.log.severe(`could not start over as a new member: ${e instanceof Error ? e.message : String(e)}; stopping`);
        void this.stop('a failed restart as a new member');
      } finally {
        this.reincarnating = false;
      }
    });
  }

  /**
   * Picks and locks this member's directory under base-dir (persistence/member-dir.ts), preferring
   * the one that holds an address this member may get. Throws ERR_PERSISTENCE_* naming the path.
   */
  private choosePersistenceDir(fresh: boolean): { setup: PersistenceSetup; uuid: string } {
    const p = this.config.persistence;
    const disk = new FileDisk();
    const base = path.resolve(process.cwd(), p.baseDir);
    const port = this.config.network.port;
    const count = port.autoIncrement ? port.portCount : 1;
    const addresses = Array.from({ length: count }, (_, i) => `${this.address.advertised}:${port.port + i}`);
    const chosen = chooseMemberDir(disk, base, fresh ? null : addresses, `pid ${process.pid}`, randomUUID);
    for (const s of chosen.skipped) this.log.info(`persistence: passed over ${s}`);
    const uuid = chosen.metadata?.memberUuid ?? path.basename(chosen.dir);
    this.log.info(`persistence: ${chosen.metadata === null ? 'new directory' : 'directory'} ${chosen.dir} (member ${uuid})`);
    const backupDir = p.backupDir === '' ? '' : path.resolve(process.cwd(), p.backupDir);
    return { uuid, setup: { disk, dir: chosen.dir, lock: chosen.lock, metadata: chosen.metadata, defer: (fn) => void setImmediate(fn), backupDir } };
  }

  /** Binds every port, then turns the member ACTIVE. Throws when a port cannot be bound. */
  async start(): Promise<void> {
    const c = this.config;
    const host = this.address.advertised;
    this.logger.setMemberAddress(`[${host}]`);
    const p = c.properties;
    const bindHost = this.address.bindHost;
    // Every listener binds the same host: the member-wide choice (bind-any, or the chosen address).
    const bound = bindHost === BIND_ANY_HOST ? `bound to ${bindHost}, every interface` : `bound to ${bindHost} only`;
    const base = { host: bindHost, sniffTimeoutMs: p.sniffTimeoutMs, connectionsMax: p.restConnectionsMax };
    const http = (socket: import('node:net').Socket, head: Buffer): void => this.rest.accept(socket, head);
    const member = (socket: import('node:net').Socket, head: Buffer): void => this.memberPort.accept(socket, head);
    const clients = this.clients;
    const client = clients === null ? null : (socket: import('node:net').Socket, head: Buffer): void => clients.accept(socket, head);
    const clientOffReason = 'the client protocol is off (network > client-protocol enabled="false")';
    const advanced = c.advancedNetwork.enabled ? c.advancedNetwork : null;
    let memberPortNumber: number;
    if (advanced !== null) {
      // Without a REST endpoint, grid.http.healthcheck.enabled serves the health group on the member
      // endpoint, so probes still have a port to call.
      const healthOnMember = advanced.restEndpoint === null && p.httpHealthcheckEnabled ? http : null;
      const memberListener = new Listener({ ...base, name: 'member endpoint', port: advanced.memberEndpoint?.port ?? c.network.port, http: healthOnMember, member, client, clientOffReason, tls: null, log: this.log });
      const restSsl = advanced.restEndpoint?.ssl;
      memberPortNumber = await this.bind(memberListener);
      if (advanced.restEndpoint !== null) {
        const tls = restSsl?.enabled === true ? tlsOptions(restSsl, process.cwd()) : null;
        const restListener = new Listener({ ...base, name: 'REST endpoint', port: advanced.restEndpoint.port, http, member: null, client: null, tls, log: this.log });
        const restPort = await this.bind(restListener);
        if (tls !== null && restSsl !== undefined) this.tlsListeners.push({ listener: restListener, ssl: restSsl });
        this.log.info(`REST listening on [${host}]:${restPort}${tls === null ? '' : ' (TLS only)'}; ${bound}`);
      }
      this.log.info(`member protocol listening on [${host}]:${memberPortNumber}; ${bound}`);
      // WAN endpoints: other clusters' publishers dial here (the member protocol, this cluster's name).
      for (const w of advanced.wanEndpoints) {
        const wanListener = new Listener({ ...base, name: `WAN endpoint ${w.name}`, port: w.port, http: null, member, client: null, tls: null, log: this.log });
        const wanPort = await this.bind(wanListener);
        this.log.info(`WAN endpoint ${w.name} listening on [${host}]:${wanPort}; ${bound}`);
      }
    } else {
      const tls = c.network.ssl.enabled ? tlsOptions(c.network.ssl, process.cwd()) : null;
      const unified = new Listener({ ...base, name: 'member port', port: c.network.port, http, member, client, clientOffReason, tls, log: this.log });
      memberPortNumber = await this.bind(unified);
      if (tls !== null) this.tlsListeners.push({ listener: unified, ssl: c.network.ssl });
      this.log.info(`Grid member listening on [${host}]:${memberPortNumber} (REST and member protocol on one port${tls === null ? '' : ', TLS only'}); ${bound}`);
    }
    this.logger.setMemberAddress(`[${host}]:${memberPortNumber}`);
    this.bound = { host, port: memberPortNumber };
    this.member.setAddress(host, memberPortNumber);
    this.memberPort.setLocalAddress(host, memberPortNumber);
    this.logRestState();
    await this.member.markActive();
    this.log.info(this.member.membersLine());
    this.sweepTimer = setInterval(() => this.member.sweep(SWEEP_BUDGET_RECORDS), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    // The first sample is the base the next one's rates are taken from: taken now, so that what the
    // member serves from its start on shows in its history (a base one step later hid the calls of
    // that first step, and made the console-views test depend on how fast a cluster formed).
    const sample = (): void => this.member.clusterViews.sampleHistory(Date.now(), this.member.metricsSnapshot());
    sample();
    this.historyTimer = setInterval(sample, HISTORY_STEP_MS);
    this.historyTimer.unref();
    this.processMetrics.start();
  }

  private async bind(listener: Listener): Promise<number> {
    const port = await listener.listen();
    this.listeners.push(listener);
    return port;
  }

  private logRestState(): void {
    if (!this.member.restEnabled()) {
      this.log.info('REST API is disabled (enable it with <rest-api enabled="true"> or --rest); HTTP requests are answered 403');
      return;
    }
    const groups = ['CLUSTER_READ', 'CLUSTER_WRITE', 'HEALTH_CHECK', 'PERSISTENCE', 'WAN', 'DATA', 'CP'] as const;
    const on = groups.filter((g) => this.member.groupEnabled(g));
    this.log.info(`REST API enabled; endpoint groups: ${on.join(', ') || 'none'}`);
  }

  private runtimeMetrics(): RuntimeFigures {
    const out: Record<string, number> = { ...this.rest.counters };
    let accepted = 0;
    let refusedUnknown = 0;
    let refusedTls = 0;
    let refusedTimeout = 0;
    let refusedProtocolOff = 0;
    let tlsHandshakesFailed = 0;
    for (const l of this.listeners) {
      accepted += l.counters.accepted;
      refusedUnknown += l.counters.refusedUnknown;
      refusedTls += l.counters.refusedTls;
      refusedTimeout += l.counters.refusedTimeout;
      refusedProtocolOff += l.counters.refusedProtocolOff;
      tlsHandshakesFailed += l.tlsHandshakesFailed;
    }
    out.connectionsAccepted = accepted;
    out.connectionsRefused = refusedUnknown + refusedTls + refusedTimeout + refusedProtocolOff;
    out.connectionsRefusedUnknown = refusedUnknown;
    out.connectionsRefusedTls = refusedTls;
    out.connectionsRefusedTimeout = refusedTimeout;
    out.connectionsRefusedProtocolOff = refusedProtocolOff;
    out.tlsHandshakesFailed = tlsHandshakesFailed;
    const m = this.memberPort.counters;
    out.memberHandshakesRefused = m.handshakesRefused;
    out.memberHandshakesRefusedByPeer = m.handshakesRefusedByPeer;
    out.memberFramesRejected = m.framesRejected;
    out.memberSendsDropped = m.sendsDropped;
    out.memberBytesQueued = this.memberPort.transport.bytesQueued();
    out.memberDials = m.dials;
    out.memberDialsFailed = m.dialsFailed;
    out.memberHandshakesAccepted = m.handshakesAccepted;
    out.memberMessagesSent = m.messagesSent;
    out.memberMessagesReceived = m.messagesReceived;
    out.memberQueuedDropped = m.queuedDropped;
    out.memberDuplicatesRetired = m.duplicatesRetired;
    if (this.clients !== null) Object.assign(out, this.clients.figures());
    Object.assign(out, this.processMetrics.flat());
    return {
      flat: out,
      statusClasses: STATUS_CLASSES,
      latencyBoundsSeconds: LATENCY_BOUNDS_SECONDS,
      requestKinds: this.rest.requestStats.figures(),
      gc: this.processMetrics.gc(),
    };
  }

  /**
   * SIGHUP: reads every TLS key, certificate and CA file again and uses them for new connections
   * (accepted and dialled); open connections keep theirs. All files are read before anything
   * changes, so a missing or unreadable file leaves every listener as it was.
   */
  reloadTls(): void {
    if (this.tlsListeners.length === 0) {
      this.log.info('SIGHUP: no port speaks TLS; nothing to reload');
      return;
    }
    const cwd = process.cwd();
    let fresh: { listener: Listener; options: ReturnType<typeof tlsOptions> }[];
    let client: ReturnType<typeof MemberPort.tlsFor>;
    try {
      fresh = this.tlsListeners.map((t) => ({ listener: t.listener, options: tlsOptions(t.ssl, cwd) }));
      client = MemberPort.tlsFor(this.config, cwd);
    } catch (e) {
      this.log.severe(`SIGHUP: TLS files could not be read again (${e instanceof Error ? e.message : String(e)}); the certificates in use stay`);
      return;
    }
    try {
      // Every key and certificate must load (and match) before any listener switches: all or none.
      for (const f of fresh) tls.createSecureContext(f.options);
      for (const f of fresh) f.listener.reloadTls(f.options);
    } catch (e) {
      this.log.severe(`SIGHUP: the new TLS key or certificate was refused (${e instanceof Error ? e.message : String(e)}); the certificates in use stay`);
      return;
    }
    if (client !== null) this.memberPort.reloadTls(client);
    const files = [...new Set(this.tlsListeners.flatMap((t) => [t.ssl.keyFile, t.ssl.certFile, t.ssl.caFile].filter((f) => f !== '')))];
    this.log.info(`SIGHUP: TLS certificates reloaded (${files.join(', ')}); new connections use them`);
  }

  /**
   * SIGQUIT: writes Node's diagnostic report (JavaScript and native stacks, heap, handles, resource
   * usage) to the working directory, or the temporary directory when that is not writable, and
   * keeps running. The environment is left out (it may hold secrets: GRID_* passwords), and the file
   * is readable by the member's user only and never overwrites an existing one.
   */
  writeDiagnostics(): void {
    const name = `grid-report-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.json`;
    for (const dir of [process.cwd(), os.tmpdir()]) {
      const file = path.join(dir, name);
      try {
        fs.accessSync(dir, fs.constants.W_OK);
        const report = process.report.getReport() as unknown as Record<string, unknown>;
        delete report['environmentVariables'];
        fs.writeFileSync(file, JSON.stringify(report, null, 2), { mode: 0o600, flag: 'wx' });
        if (fs.existsSync(file)) {
          this.log.warning(`SIGQUIT: diagnostic report written to ${file}; the member keeps running`);
          return;
        }
      } catch {
        // try the next directory
      }
    }
    this.log.severe('SIGQUIT: the diagnostic report could not be written (neither the working nor the temporary directory is writable)');
  }

  /** Graceful stop: no new connections, waiting polls answered 204, in-flight requests finish (bounded). */
  stop(reason: string, exitCode = 0): Promise<void> {
    if (this.stopPromise !== null) return this.stopPromise;
    this.stopPromise = (async () => {
      this.log.info(`stopping: ${reason}`);
      // Hand replicas off while the ports are still open (members and REST keep working meanwhile).
      // Between the hand-off and leaving the list, the clients take the table without this member.
      await this.member.beginShutdown(() => this.clients?.awaitRoutedAway(DEPART_WAIT_MS / 2) ?? Promise.resolve());
      if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
      if (this.historyTimer !== null) clearInterval(this.historyTimer);
      this.processMetrics.stop();
      const closing = this.listeners.map((l) => l.close());
      const inflightWaitMs = this.config.properties.shutdownInflightWaitSeconds * 1000;
      await Promise.all([this.rest.drain(inflightWaitMs), this.clients?.stop(inflightWaitMs)]);
      this.memberPort.closeAll();
      await Promise.all(closing);
      this.member.markShutDown();
      this.log.info('stopped');
      this.onStopped(exitCode);
    })();
    return this.stopPromise;
  }
}
