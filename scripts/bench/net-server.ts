// The ceiling of the HTTP benchmark: a node:net server that parses nothing and answers every request
// with the same fixed response (200, a 100-byte body, the size of the benchmark's map values). It
// finds the end of each request head (CRLF CRLF) and skips a body by its Content-Length, so that
// keep-alive, pipelining and POST bodies are answered one for one, and writes the answers of one read
// with one write. Nothing a real server must do (routing, storing, limits, timeouts) is done:
// "member / net" says how close the member gets to what this machine can push through node:net.
//
// Usage: node --import tsx scripts/bench/net-server.ts --port N   (0 lets the OS pick)
// It listens on 127.0.0.1 only and prints `net-server listening on [127.0.0.1]:PORT`, then serves
// until SIGTERM or SIGINT. `/grid/health/ready` is answered like everything else (200).
import net from 'node:net';
import { portFlag } from './port-flag.js';

const host = '127.0.0.1';
const body = 'v'.repeat(100);
const response = Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`, 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

const server = net.createServer({ noDelay: true }, (socket) => {
  let pending: Buffer = Buffer.alloc(0);
  /** Body bytes of the last request still to skip. */
  let skip = 0;
  socket.on('data', (chunk: Buffer) => {
    let data = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let answers = 0;
    for (;;) {
      if (skip > 0) {
        const n = Math.min(skip, data.length);
        skip -= n;
        data = data.subarray(n);
        if (skip > 0) break;
      }
      const end = data.indexOf(HEAD_END);
      if (end < 0) break;
      // Only a POST or PUT (first byte P) carries a body here; a GET costs no string.
      const m = data[0] === 0x50 ? CONTENT_LENGTH.exec(data.toString('latin1', 0, end)) : null;
      skip = m === null ? 0 : Number(m[1]);
      data = data.subarray(end + 4);
      answers++;
    }
    pending = data.length === 0 ? Buffer.alloc(0) : Buffer.from(data);
    if (answers === 1) socket.write(response);
    else if (answers > 1) socket.write(Buffer.concat(new Array<Buffer>(answers).fill(response)));
  });
  socket.on('error', () => socket.destroy());
});

server.listen(portFlag(process.argv, 'net-server'), host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`net-server listening on [${host}]:${port}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
