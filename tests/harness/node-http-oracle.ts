// node:http as an oracle for the member's own request parser (issue #14, differential testing):
// sends a byte stream on a fresh connection to an in-process node:http server and reports what it
// accepted (method, target, header pairs, body, trailers per request, in order) and whether it
// refused the stream (a parse error). The server answers each request with an empty 200 so that
// pipelined requests go on; the client half-closes after writing, so the server sees the end.
// What counts as accepted is what was answered 200 before node:http's first refusal.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface OracleRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly trailers: readonly (readonly [string, string])[];
}

export interface OracleResult {
  readonly requests: readonly OracleRequest[];
  readonly refused: boolean;
}

function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([(raw[i] as string).toLowerCase(), raw[i + 1] as string]);
  return out;
}

export class NodeHttpOracle {
  private server: http.Server | null = null;
  private port = 0;
  private current: { requests: OracleRequest[]; refused: boolean } | null = null;

  async start(): Promise<void> {
    this.server = http.createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => {
      const sink = this.current;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        sink?.requests.push({ method: req.method ?? '', target: req.url ?? '', headers: pairs(req.rawHeaders), body: Buffer.concat(chunks).toString('latin1'), trailers: pairs(req.rawTrailers) });
        res.writeHead(200, { 'Content-Length': '0' });
        res.end();
      });
    });
    this.server.on('clientError', (_e, socket) => {
      if (this.current !== null) this.current.refused = true;
      socket.destroy();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server === null ? resolve() : this.server.close(() => resolve())));
    this.server?.closeAllConnections();
  }

  /** What node:http made of `bytes` sent on one connection. */
  async parse(bytes: Uint8Array, idleMs = 150): Promise<OracleResult> {
    const sink = { requests: [] as OracleRequest[], refused: false };
    this.current = sink;
    let answers = '';
    await new Promise<void>((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      let timer: NodeJS.Timeout | null = null;
      const done = (): void => {
        if (timer !== null) clearTimeout(timer);
        socket.destroy();
        resolve();
      };
      const idle = (): void => {
        if (timer !== null) clearTimeout(timer);
        timer = setTimeout(done, idleMs);
      };
      socket.on('data', (d: Buffer) => {
        answers += d.toString('latin1');
        idle();
      });
      socket.on('close', done);
      socket.on('error', done);
      socket.on('connect', () => {
        socket.end(Buffer.from(bytes));
        idle();
      });
    });
    this.current = null;
    // node:http refuses some requests itself (no Host in HTTP/1.1) with a 400 and no clientError,
    // and may go on reading: what it accepted is what was answered 200 before its first refusal.
    const statuses = [...answers.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
    const firstRefusal = statuses.findIndex((code) => code !== 200);
    if (firstRefusal >= 0) return { requests: sink.requests.slice(0, firstRefusal), refused: true };
    return sink;
  }
}
