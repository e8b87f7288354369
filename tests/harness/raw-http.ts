// A raw-socket HTTP client for integration tests: it sends exactly the bytes given and parses exactly
// the bytes received, so `Content-Length: 0`, missing headers, pipelining and closes are really seen.
import net from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly statusLine: string;
  /** Lower-cased header names; repeated headers keep the last value. */
  readonly headers: Readonly<Record<string, string>>;
  /** Header names in the order received (lower-cased), repeated ones repeated. */
  readonly headerNames: readonly string[];
  readonly body: Buffer;
  text(): string;
  json(): unknown;
}

export interface Exchange {
  readonly responses: RawResponse[];
  /** True when the server closed the connection. */
  readonly closed: boolean;
  /** Bytes received that were not part of a complete response. */
  readonly rest: Buffer;
}

/** Parses as many complete responses as `data` holds. `headRequests[i]` marks responses without a body. */
export function parseResponses(data: Buffer, headRequests: readonly boolean[] = []): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = data.subarray(at, end).toString('latin1');
    const lines = head.split('\r\n');
    const statusLine = lines[0] ?? '';
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    const headerNames: string[] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      headers[name] = line.slice(colon + 1).trim();
      headerNames.push(name);
    }
    const isHead = headRequests[responses.length] === true;
    const interim = status >= 100 && status < 200;
    const length = isHead || interim || status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? '0');
    const bodyStart = end + 4;
    if (data.length < bodyStart + length) break;
    const body = Buffer.from(data.subarray(bodyStart, bodyStart + length));
    at = bodyStart + length;
    if (interim) continue;
    responses.push({
      status,
      statusLine,
      headers,
      headerNames,
      body,
      text: () => body.toString('utf8'),
      json: () => JSON.parse(body.toString('utf8')) as unknown,
    });
  }
  return { responses, rest: data.subarray(at) };
}

export interface SendOptions {
  /** How many responses to wait for (default 1). */
  readonly expect?: number;
  /** Which of the expected responses answer HEAD requests. */
  readonly head?: readonly boolean[];
  readonly deadlineMs?: number;
  /** Wait for the server to close instead of for responses. */
  readonly untilClose?: boolean;
  /** The address to connect to (default 127.0.0.1). */
  readonly host?: string;
}

/** Opens a connection, writes `payload`, collects responses until `expect` arrived or the server closed. */
export function send(port: number, payload: string | Buffer | (string | Buffer)[], options: SendOptions = {}): Promise<Exchange> {
  const expect = options.expect ?? 1;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: options.host ?? '127.0.0.1', port });
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const parsed = parseResponses(data, options.head ?? []);
      socket.destroy();
      resolve({ responses: parsed.responses, closed, rest: parsed.rest });
    };
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      socket.destroy();
      const parsed = parseResponses(data, options.head ?? []);
      // Name what was asked: a timeout without the request line cannot be traced to a call.
      const first = (Array.isArray(payload) ? payload[0] : payload) ?? '';
      const line = (typeof first === 'string' ? first : first.toString('latin1')).split('\r\n')[0] ?? '';
      reject(new Error(`timed out after ${options.deadlineMs ?? 10_000} ms with ${parsed.responses.length}/${expect} responses to ${line.slice(0, 200)} on port ${port}: ${data.toString('latin1').slice(0, 500)}`));
    }, options.deadlineMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (options.untilClose === true) return;
      if (parseResponses(data, options.head ?? []).responses.length >= expect) finish(false);
    });
    socket.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code === 'ECONNRESET') finish(true);
      else if (!done) {
        done = true;
        clearTimeout(timer);
        reject(e);
      }
    });
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      const parts = Array.isArray(payload) ? payload : [payload];
      for (const p of parts) socket.write(p);
    });
  });
}

/** One request, one response. */
export async function request(
  port: number,
  method: string,
  target: string,
  options: { body?: string | Buffer; headers?: Readonly<Record<string, string>>; version?: string; host?: string } = {},
): Promise<RawResponse> {
  const host = options.host ?? '127.0.0.1';
  const body = options.body === undefined ? null : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  let head = `${method} ${target} ${options.version ?? 'HTTP/1.1'}\r\nHost: ${host}\r\n`;
  for (const [k, v] of Object.entries(options.headers ?? {})) head += `${k}: ${v}\r\n`;
  if (body !== null) head += `Content-Length: ${body.length}\r\n`;
  head += '\r\n';
  const exchange = await send(port, body === null ? head : [head, body], { head: [method === 'HEAD'], host });
  const response = exchange.responses[0];
  if (response === undefined) throw new Error(`no response to ${method} ${target} (connection closed: ${exchange.closed})`);
  return response;
}
