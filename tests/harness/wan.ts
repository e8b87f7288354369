// Helpers for the real-process WAN replication tests (wan.md, rest.md §8): member XML for a source
// or target cluster (its own cluster name, tcp-ip member list, REST with DATA and WAN on, maps with a
// wan-replication-ref, wan-replication schemes), the WAN management calls with their positional
// body, the `wan` figures of GET /grid/rest/metrics, and a raw member-protocol connection that has
// done its handshake (to send a target member hand-made wanBatch frames). Every wait is bounded.
import net from 'node:net';
import { startMember, type MemberProcess } from './member-process.js';
import { killAll } from './cluster.js';
import { request, type RawResponse } from './raw-http.js';
import { encodeFrame, PREAMBLE, type Frame } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { decodeHandshakeResponse, encodeHandshakeRequest, type HandshakeRequest, type HandshakeResponse } from '../../src/cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';
import { decodeMessage, encodeBody, MESSAGE_TYPES, type Message } from '../../src/cluster/messages.js';

/** One `<batch-publisher>`; absent fields keep the member's defaults. */
export interface PublisherXml {
  readonly clusterName: string;
  readonly publisherId?: string;
  readonly endpoints: readonly number[];
  readonly batchSize?: number;
  readonly batchMaxDelayMillis?: number;
  readonly responseTimeoutMillis?: number;
  readonly queueCapacity?: number;
  readonly queueFullBehavior?: 'DISCARD_AFTER_MUTATION' | 'THROW_EXCEPTION' | 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE';
  readonly initialPublisherState?: 'REPLICATING' | 'PAUSED' | 'STOPPED';
  readonly consistencyCheckStrategy?: 'NONE' | 'MERKLE_TREES';
  readonly acknowledgeType?: 'ACK_ON_RECEIPT' | 'ACK_ON_OPERATION_COMPLETE';
}

export interface WanMemberXmlOptions {
  readonly clusterName: string;
  /** Ports of every member of this cluster (tcp-ip member list on 127.0.0.1). */
  readonly peers: readonly number[];
  /** Map name → the wan-replication it references (null: a plain map with the default backup count). */
  readonly maps?: Readonly<Record<string, string | null>>;
  /** wan-replication name → its publishers. */
  readonly replications?: Readonly<Record<string, readonly PublisherXml[]>>;
  readonly properties?: Readonly<Record<string, string | number>>;
}

const opt = (tag: string, v: string | number | undefined): string => (v === undefined ? '' : `<${tag}>${v}</${tag}>`);

function publisherXml(p: PublisherXml): string {
  return `<batch-publisher>
      <cluster-name>${p.clusterName}</cluster-name>${opt('publisher-id', p.publisherId)}
      <target-endpoints>${p.endpoints.map((e) => `127.0.0.1:${e}`).join(',')}</target-endpoints>${opt('batch-size', p.batchSize)}${opt('batch-max-delay-millis', p.batchMaxDelayMillis)}${opt('response-timeout-millis', p.responseTimeoutMillis)}${opt('queue-capacity', p.queueCapacity)}${opt('queue-full-behavior', p.queueFullBehavior)}${opt('initial-publisher-state', p.initialPublisherState)}${opt('acknowledge-type', p.acknowledgeType)}${p.consistencyCheckStrategy === undefined ? '' : `<sync><consistency-check-strategy>${p.consistencyCheckStrategy}</consistency-check-strategy></sync>`}
    </batch-publisher>`;
}

export function wanMemberXml(port: number, o: WanMemberXmlOptions): string {
  const props = Object.entries(o.properties ?? {});
  const maps = Object.entries(o.maps ?? {})
    .map(([name, ref]) => `<map name="${name}"><backup-count>1</backup-count>${ref === null ? '' : `<wan-replication-ref name="${ref}"/>`}</map>`)
    .join('\n  ');
  const reps = Object.entries(o.replications ?? {})
    .map(([name, pubs]) => `<wan-replication name="${name}">${pubs.map(publisherXml).join('')}</wan-replication>`)
    .join('\n  ');
  return `<grid><cluster-name>${o.clusterName}</cluster-name>
  ${props.length === 0 ? '' : `<properties>${props.map(([k, v]) => `<property name="${k}">${v}</property>`).join('')}</properties>`}
  <network><public-address>127.0.0.1</public-address>
  <port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list>${o.peers.map((p) => `<member>127.0.0.1:${p}</member>`).join('')}</member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/><endpoint-group name="WAN" enabled="true"/><endpoint-group name="CLUSTER_WRITE" enabled="true"/></rest-api></network>
  <map name="default"><backup-count>1</backup-count></map>
  ${maps}
  ${reps}
</grid>`;
}

export function startWanMember(port: number, o: WanMemberXmlOptions): Promise<MemberProcess> {
  return startMember({ xml: wanMemberXml(port, o), args: ['--port', String(port)] });
}

/** One member per port of `o.peers`, started one after the other; on failure the started ones are killed. */
export async function startWanCluster(o: WanMemberXmlOptions): Promise<MemberProcess[]> {
  const members: MemberProcess[] = [];
  try {
    for (const port of o.peers) members.push(await startWanMember(port, o));
  } catch (e) {
    await killAll(members);
    throw e;
  }
  return members;
}

/** A WAN management POST with its positional body (each value percent-encoded, rest.md §8). */
export function wanPost(port: number, endpoint: string, params: readonly string[]): Promise<RawResponse> {
  return request(port, 'POST', `/grid/rest/wan/${endpoint}`, { body: params.map((p) => encodeURIComponent(p)).join('&') });
}

export interface WanFigures {
  state: string;
  queued: number;
  backupQueued: number;
  sent: number;
  acked: number;
  dropped: number;
  resent: number;
  lagMs: number;
  syncsRunning: number;
}

/** The `wan` object of a member's JSON metrics, keyed "<replication>/<publisherId>". */
export async function wanFigures(port: number): Promise<Record<string, WanFigures>> {
  const r = await request(port, 'GET', '/grid/rest/metrics');
  if (r.status !== 200) throw new Error(`GET /grid/rest/metrics on ${port} answered ${r.statusLine}`);
  const m = r.json() as { wan?: Record<string, WanFigures> };
  if (m.wan === undefined) throw new Error(`metrics of ${port} have no "wan" object: ${r.text().slice(0, 300)}`);
  return m.wan;
}

export interface Entry {
  readonly status: number;
  readonly value: string | null;
  readonly contentType: string | null;
}

export async function getEntry(port: number, map: string, key: string): Promise<Entry> {
  const r = await request(port, 'GET', `/grid/rest/maps/${map}/${encodeURIComponent(key)}`);
  if (r.status !== 200 && r.status !== 204) throw new Error(`GET ${map}/${key} on ${port} answered ${r.statusLine} ${r.headers['grid-error'] ?? ''}`);
  return { status: r.status, value: r.status === 200 ? r.text() : null, contentType: r.headers['content-type'] ?? null };
}

/**
 * A member-protocol connection to a member that has done its handshake (or was refused): frames are
 * sent as given and every frame the member sends back is kept, decoded where it is a message.
 */
export class MemberLink {
  private readonly reader = new FrameReader({ frameBytesMax: 64 * 1024 * 1024 });
  private readonly frames: Frame[] = [];
  /** Why the bytes from the member could not be read (then the socket was destroyed). */
  readError = '';
  private isClosed = false;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      try {
        // The reader checks the member's preamble, then returns whole frames.
        for (const f of this.reader.push(chunk)) this.frames.push({ ...f, payload: Buffer.from(f.payload) });
      } catch (e) {
        this.readError = String(e);
        socket.destroy();
      }
      this.notify();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.isClosed = true;
      this.notify();
    });
  }

  /** Connects and sends the preamble and a handshake; resolves with the member's handshake answer. */
  static async open(port: number, handshake: HandshakeRequest, deadlineMs = 10_000): Promise<{ link: MemberLink; response: HandshakeResponse }> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no connection to ${port} within ${deadlineMs} ms`));
      }, deadlineMs);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const link = new MemberLink(socket);
    socket.write(Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 1 }, encodeHandshakeRequest(handshake))]));
    try {
      const frame = await link.nextFrame(0, deadlineMs);
      if (frame.messageType !== HANDSHAKE_RESPONSE) throw new Error(`first frame from ${port} has type ${frame.messageType}, not a handshake response`);
      return { link, response: decodeHandshakeResponse(frame.payload) };
    } catch (e) {
      link.destroy();
      throw e;
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Frames received so far (the handshake response first). */
  received(): readonly Frame[] {
    return this.frames;
  }

  sendMessage(m: Message, partitionId = -1): void {
    this.socket.write(encodeFrame({ messageType: MESSAGE_TYPES[m.kind], callId: m.callId, partitionId }, encodeBody(m)));
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The frame at `index` (0 = handshake response), waiting for it up to `deadlineMs`. */
  async nextFrame(index: number, deadlineMs = 10_000): Promise<Frame> {
    await this.until(() => this.frames.length > index || this.isClosed, `frame #${index}`, deadlineMs);
    const f = this.frames[index];
    if (f === undefined) throw new Error(`connection closed after ${this.frames.length} frame(s), before frame #${index}${this.readError === '' ? '' : ` (${this.readError})`}`);
    return f;
  }

  /** Waits for the message answering `callId` (a response frame carrying it). */
  async answerTo(callId: number, deadlineMs = 10_000): Promise<Message> {
    let found: Frame | undefined;
    await this.until(() => (found = this.frames.slice(1).find((f) => f.callId === callId)) !== undefined || this.isClosed, `the answer to call ${callId}`, deadlineMs);
    if (found === undefined) throw new Error(`connection closed without an answer to call ${callId}`);
    return decodeMessage(found.messageType, found.callId, found.payload);
  }

  async waitClosed(deadlineMs = 10_000): Promise<void> {
    await this.until(() => this.isClosed, 'the member to close the connection', deadlineMs);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private until(cond: () => boolean, what: string, deadlineMs: number): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!cond()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${deadlineMs} ms waiting for ${what}`));
      }, deadlineMs);
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
