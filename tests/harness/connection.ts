// Helpers for the integration tests on top of raw-http.ts: a long-lived raw connection (keep-alive,
// pipelining, interim responses, close detection), request serialisation, a bounded condition poll
// (DESIGN.md habit 4: never sleep to wait for a state), and small JSON conveniences.
import net from 'node:net';
import { parseResponses, request, type RawResponse } from './raw-http.js';

/** Polls `condition` until it is truthy or `deadlineMs` passes; then throws with `what`. */
export async function waitFor<T>(condition: () => T | Promise<T>, what: string, deadlineMs = 10_000, intervalMs = 20): Promise<NonNullable<T>> {
  const end = Date.now() + deadlineMs;
  let last: unknown = undefined;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>;
      last = value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The bytes of one HTTP/1.1 request; adds Host, and Content-Length when a body is given and no Transfer-Encoding is. */
export function httpRequest(method: string, target: string, options: { body?: string | Buffer; headers?: Readonly<Record<string, string>>; version?: string } = {}): Buffer {
  const body = options.body === undefined ? null : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  const headers = options.headers ?? {};
  let head = `${method} ${target} ${options.version ?? 'HTTP/1.1'}\r\nHost: 127.0.0.1\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  const chunked = Object.keys(headers).some((k) => k.toLowerCase() === 'transfer-encoding');
  const hasLength = Object.keys(headers).some((k) => k.toLowerCase() === 'content-length');
  if (body !== null && !chunked && !hasLength) head += `Content-Length: ${body.length}\r\n`;
  head += '\r\n';
  return body === null ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** A raw TCP connection that accumulates what the server sends and parses it on demand. */
export class Connection {
  private data: Buffer = Buffer.alloc(0);
  private isClosed = false;
  private readonly waiters = new Set<() => void>();
  /** Which responses (by index) answer HEAD requests: they carry no body. */
  readonly headFlags: boolean[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.data = this.data.length === 0 ? chunk : Buffer.concat([this.data, chunk]);
      this.notify();
    });
    socket.on('error', () => {
      /* a reset is a close for our purposes */
    });
    socket.on('close', () => {
      this.isClosed = true;
      this.notify();
    });
  }

  static open(port: number, host = '127.0.0.1', deadlineMs = 5_000): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`could not connect to ${host}:${port} within ${deadlineMs} ms`));
      }, deadlineMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', reject);
        resolve(new Connection(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Everything received so far. */
  raw(): Buffer {
    return this.data;
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** Writes one request; remembers whether it is a HEAD so its response is parsed without a body. */
  send(method: string, target: string, options: { body?: string | Buffer; headers?: Readonly<Record<string, string>>; version?: string } = {}): void {
    this.headFlags.push(method === 'HEAD');
    this.write(httpRequest(method, target, options));
  }

  /** Complete responses received so far (interim 1xx ones skipped). */
  parsed(): RawResponse[] {
    return parseResponses(this.data, this.headFlags).responses;
  }

  /** Waits until at least `count` complete responses arrived; rejects if the server closes first. */
  async responses(count: number, deadlineMs = 10_000): Promise<RawResponse[]> {
    await this.until(() => this.parsed().length >= count || this.isClosed, `${count} responses`, deadlineMs);
    const got = this.parsed();
    if (got.length < count) throw new Error(`connection closed after ${got.length}/${count} responses: ${this.data.toString('latin1').slice(0, 300)}`);
    return got;
  }

  /** Waits for the next response after the `already` ones seen. */
  async next(already: number, deadlineMs = 10_000): Promise<RawResponse> {
    const all = await this.responses(already + 1, deadlineMs);
    return all[already] as RawResponse;
  }

  /** Waits until the received bytes contain `text` (latin1). */
  async waitForText(text: string, deadlineMs = 10_000): Promise<void> {
    await this.until(() => this.data.toString('latin1').includes(text), JSON.stringify(text), deadlineMs);
  }

  /** Waits until the server closed the connection. */
  async waitClosed(deadlineMs = 10_000): Promise<void> {
    await this.until(() => this.isClosed, 'the server to close the connection', deadlineMs);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private until(condition: () => boolean, what: string, deadlineMs: number): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${deadlineMs} ms waiting for ${what}; received: ${this.data.toString('latin1').slice(0, 300)}`));
      }, deadlineMs);
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** GET a path and parse its JSON body (asserting nothing). */
export async function getJson(port: number, path: string): Promise<unknown> {
  const r = await request(port, 'GET', path);
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.statusLine}`);
  return r.json();
}

/** The member's /grid/rest/metrics counters (needs CLUSTER_READ). */
export async function metrics(port: number): Promise<Record<string, number>> {
  return (await getJson(port, '/grid/rest/metrics')) as Record<string, number>;
}

/** A member-protocol-free check that the port still serves HTTP. */
export async function healthStatus(port: number): Promise<number> {
  return (await request(port, 'GET', '/grid/health')).status;
}

/** Resolves true when a TCP connect to the port is refused (nothing listening). */
export function connectRefused(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** Connects, writes `bytes`, and collects every byte until the server closes (or the deadline passes). */
export function exchangeRaw(port: number, bytes: string | Buffer | (string | Buffer)[], deadlineMs = 10_000): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), deadlineMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      for (const b of Array.isArray(bytes) ? bytes : [bytes]) socket.write(b);
    });
  });
}
