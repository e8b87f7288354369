// The baseline of the HTTP benchmark: the least a node:http server can do for the map calls the
// benchmark sends, so that "member / bare" measures what the member adds on top of node:http.
//
// POST (and PUT) read the body and store it with its Content-Type in a JS Map keyed by the URL,
// then answer 200 with an empty body; GET answers 200 with the stored bytes and type, or 204 when
// the URL was never stored. `/grid/health/ready` answers 200 so that the runner can wait for both
// servers the same way. Everything else is 404.
//
// Usage: node --import tsx scripts/bench/bare-server.ts --port N   (0 lets the OS pick)
// It listens on 127.0.0.1 only and prints `listening on [127.0.0.1]:PORT`, the same line the member
// logs, then serves until SIGTERM or SIGINT.
import http from 'node:http';
import { portFlag } from './port-flag.js';

interface StoredValue {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
}

const host = '127.0.0.1';
const bodyBytesMax = 16 * 1024 * 1024; // the member's default body limit
const entriesMax = 1_000_000; // the benchmark uses 10,000 keys; this only guards against misuse
const keepAliveTimeoutMs = 5 * 60 * 1000; // the member's default idle keep-alive

const store = new Map<string, StoredValue>();

function handle(request: http.IncomingMessage, response: http.ServerResponse): void {
  const url = request.url ?? '/';
  const method = request.method ?? 'GET';
  if (method === 'GET') {
    if (url === '/grid/health/ready') {
      response.writeHead(200, { 'Content-Length': 0 });
      response.end();
      return;
    }
    const value = store.get(url);
    if (value === undefined) {
      response.writeHead(204, { 'Content-Length': 0 });
      response.end();
      return;
    }
    const headers: http.OutgoingHttpHeaders = { 'Content-Length': value.bytes.length };
    if (value.contentType !== undefined) headers['Content-Type'] = value.contentType;
    response.writeHead(200, headers);
    response.end(value.bytes);
    return;
  }
  if (method === 'POST' || method === 'PUT') {
    readBody(request, response, url);
    return;
  }
  response.writeHead(404, { 'Content-Length': 0 });
  response.end();
}

function readBody(request: http.IncomingMessage, response: http.ServerResponse, url: string): void {
  const chunks: Buffer[] = [];
  let bodyBytes = 0;
  let failed = false;
  request.on('data', (chunk: Buffer) => {
    if (failed) return;
    bodyBytes += chunk.length;
    if (bodyBytes > bodyBytesMax) {
      failed = true;
      response.writeHead(413, { 'Content-Length': 0, Connection: 'close' });
      response.end();
      return;
    }
    chunks.push(chunk);
  });
  request.on('end', () => {
    if (failed) return;
    if (!store.has(url) && store.size >= entriesMax) {
      response.writeHead(503, { 'Content-Length': 0 });
      response.end();
      return;
    }
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, bodyBytes);
    const type = request.headers['content-type'];
    store.set(url, { bytes, contentType: type === undefined ? undefined : type.toLowerCase() });
    response.writeHead(200, { 'Content-Length': 0 });
    response.end();
  });
}

const server = http.createServer(handle);
server.keepAliveTimeout = keepAliveTimeoutMs;
server.listen(portFlag(process.argv, 'bare-server'), host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`bare-server listening on [${host}]:${port}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  // Bounded: if close hangs for any reason, leave anyway.
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
