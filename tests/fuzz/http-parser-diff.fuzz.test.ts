// Differential testing of the member's request parser against node:http (issue #14, part 3): the
// same byte streams (curated cases, and seeded mutations of valid pipelined streams: bytes
// replaced, inserted, deleted, cut short) go to src/http/parser.ts and to a node:http server on
// loopback. Wherever both read requests, they read the same ones (method, target, header pairs,
// body, trailers). Every difference in what is accepted must be one of the deliberate stricter
// refusals below (listed in docs/rest.md, "The member's HTTP parser"); node:http refusing what the
// parser accepts is always a failure. An absolute-form target is compared in origin form (the
// parser reduces it). Each stream is also fed split into several reads (curated ones at every byte),
// each pushed borrowed from a buffer overwritten after it (as the shared read buffer is), and must
// read the same. FUZZ_SEED / FUZZ_ITERATIONS replay or extend the run; `npm run fuzz:http`
// is the long run (20,000 streams).
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/util/prng.js';
import { NodeHttpOracle, type OracleRequest } from '../harness/node-http-oracle.js';
import { RequestParser, type ParseError } from '../../src/http/parser.js';

/** Refusals the parser makes on purpose where node:http reads the request (docs/rest.md). */
const DELIBERATE: readonly RegExp[] = [
  /^Transfer-Encoding in an HTTP\/1\.0 request$/, // RFC 9112 §6.1: faulty framing
  /^more than one Host field$/, // RFC 9112 §3.2: MUST answer 400
  /^HTTP\/\d\.\d is not supported$/, // 505 for versions other than 1.0 and 1.1
  /^a request target with a fragment$/, // not part of any request-target form
  /^the asterisk form is for OPTIONS only$/, // RFC 9112 §3.2.4
  /^transfer coding '.*' is not supported \(only chunked\)$/, // 501: node:http passes the coded bytes on as the body
  /^method '.*' is not implemented$/, // 501 for CONNECT and the WebDAV methods node:http knows
  /^a request line without an HTTP version \(HTTP\/0\.9 is not supported\)$/, // node:http reads it as HTTP/0.9
  /^a request line with more than one space between its parts$/, // RFC 9112 §3: single spaces
  /^a line ending in LF without CR$/, // node:http takes a bare LF after an HTTP/0.9-style request line
  /^a tab in a Transfer-Encoding value$/, // node:http refuses a trailing tab; the parser refuses any, as for Content-Length
  /^Transfer-Encoding '.*' has an empty element$/, // node:http skips a leading empty element (`, chunked`) but refuses a trailing one
];

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261127);
const ITERATIONS = Number(process.env['FUZZ_ITERATIONS'] ?? 120);
const oracle = new NodeHttpOracle();
before(() => oracle.start());
after(() => oracle.stop());

interface Ours {
  readonly requests: OracleRequest[];
  readonly error: ParseError | null;
  /** A request closed the connection: what follows it is not read (by either). */
  readonly closed: boolean;
}

/**
 * What the parser reads, as a connection would use it: nothing after a request that closes it.
 * `cuts`: offsets where the stream is split into separate pushes (reads).
 */
function ours(bytes: Uint8Array, cuts: readonly number[] = []): Ours {
  const requests: OracleRequest[] = [];
  let error: ParseError | null = null;
  let closed = false;
  const p = new RequestParser({ headBytesMax: 16 * 1024, headerCountMax: 2000, bodyBytesMax: 1 << 24 }, {
    onHead: () => {},
    onRequest: (r) => {
      if (closed) return;
      requests.push({ method: r.head.method, target: r.head.target, headers: r.head.headers, body: r.body?.toString('latin1') ?? '', trailers: r.trailers });
      if (!r.head.keepAlive) closed = true;
    },
    onError: (e) => {
      if (!closed) error = e;
    },
  });
  if (cuts.length === 0) {
    p.push(bytes);
  } else {
    // Split into reads, each pushed borrowed from one scratch buffer that is overwritten after it,
    // as the connection's shared read buffer is by the next read.
    const scratch = Buffer.allocUnsafeSlow(bytes.length);
    let from = 0;
    for (const cut of [...[...cuts].sort((a, b) => a - b), bytes.length]) {
      const piece = bytes.subarray(from, cut);
      scratch.set(piece, 0);
      p.push(scratch.subarray(0, piece.length), true);
      scratch.fill(0x58);
      from = cut;
    }
  }
  p.end();
  return { requests, error, closed };
}

function originForm(target: string): string {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*(.*)$/.exec(target);
  if (m === null) return target;
  const rest = m[1] as string;
  return rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
}

/** The parser reads the same however the stream is split into reads. */
function sameWhenSplit(bytes: Uint8Array, whole: Ours, cuts: readonly number[], label: string): void {
  const split = ours(bytes, cuts);
  assert.deepEqual(split.requests, whole.requests, `${label}: split at ${cuts.join(',')}: other requests`);
  assert.deepEqual(split.error?.status ?? null, whole.error?.status ?? null, `${label}: split at ${cuts.join(',')}: another outcome (${split.error?.message ?? 'none'} / ${whole.error?.message ?? 'none'})`);
}

async function compare(bytes: Uint8Array, label: string, rnd: SeededRandom | null = null): Promise<void> {
  const node = await oracle.parse(bytes);
  const mine = ours(bytes);
  // Split at every byte (curated streams), or at a few seeded points (mutated ones).
  if (rnd === null) for (let cut = 1; cut < bytes.length; cut++) sameWhenSplit(bytes, mine, [cut], label);
  else if (bytes.length > 1) sameWhenSplit(bytes, mine, Array.from({ length: 1 + rnd.nextInt(4) }, () => 1 + rnd.nextInt(bytes.length - 1)), label);
  const nodeRequests = node.requests.map((r) => ({ ...r, target: originForm(r.target) }));
  const both = Math.min(nodeRequests.length, mine.requests.length);
  for (let i = 0; i < both; i++) assert.deepEqual(mine.requests[i], nodeRequests[i], `${label}: request ${i} read differently`);
  if (mine.requests.length > nodeRequests.length || (mine.error === null && node.refused && !mine.closed)) {
    assert.fail(`${label}: node:http refused what the parser accepts (node read ${nodeRequests.length}, the parser ${mine.requests.length}${mine.error === null ? '' : ` then ${mine.error.message}`})`);
  }
  if (nodeRequests.length > mine.requests.length) {
    const why = mine.error?.message ?? 'no error';
    assert.ok(DELIBERATE.some((d) => d.test(why)), `${label}: the parser refused a request node:http reads: ${mine.error?.status ?? '?'} ${why}`);
  }
}

const CURATED = [
  'GET / HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET / HTTP/1.0\r\n\r\n',
  'POST /m HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1;q="a\\"b"\r\nhello\r\n1\r\n!\r\n0\r\nX-Sum: 6\r\n\r\n',
  'GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  folded\r\n\r\n',
  'GET / HTTP/1.1\r\nHost : a\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\r\nX: a\u0000b\r\n\r\n',
  'GET / HTTP/1.1\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
  'GET / HTTP/2.0\r\nHost: a\r\n\r\n',
  'GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET * HTTP/1.1\r\nHost: a\r\n\r\n',
  'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET /lf HTTP/1.1\nHost: a\n\n',
  '\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n',
  'GET http://h:5701/x?q HTTP/1.1\r\nHost: h\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1 x\r\na\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n0\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\r\nX: \u00e9\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: a\r\nX:\tv\t\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nshort',
];

const VALID = [
  'GET /grid/rest/maps/m/k HTTP/1.1\r\nHost: h\r\nUser-Agent: t\r\n\r\n',
  'POST /grid/rest/maps/m/k HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc',
  'POST /grid/rest/queues/q HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
  'DELETE /grid/rest/maps/m/k HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n',
  'GET /grid/health HTTP/1.0\r\n\r\n',
];

test('curated streams: the parser and node:http agree, or the parser refuses on purpose', async () => {
  for (const text of CURATED) await compare(Buffer.from(text, 'latin1'), JSON.stringify(text));
});

function mutate(rnd: SeededRandom, bytes: Buffer): Buffer {
  const out = [...bytes];
  const n = 1 + rnd.nextInt(3);
  const alphabet = [0x0d, 0x0a, 0x20, 0x09, 0x3a, 0x2c, 0x3b, 0x00, 0x30, 0x31, 0x41, 0x61, 0x7f, 0xe9, 0x22, 0x2f];
  for (let k = 0; k < n && out.length > 0; k++) {
    const at = rnd.nextInt(out.length);
    switch (rnd.nextInt(4)) {
      case 0:
        out[at] = alphabet[rnd.nextInt(alphabet.length)] as number;
        break;
      case 1:
        out.splice(at, 0, alphabet[rnd.nextInt(alphabet.length)] as number);
        break;
      case 2:
        out.splice(at, 1);
        break;
      default:
        out.length = at;
    }
  }
  return Buffer.from(out);
}

test(`mutated pipelined streams: the parser and node:http agree, or the parser refuses on purpose (seed=${SEED})`, async () => {
  const rnd = new SeededRandom(SEED);
  for (let i = 0; i < ITERATIONS; i++) {
    let text = '';
    for (let k = 1 + rnd.nextInt(3); k > 0; k--) text += VALID[rnd.nextInt(VALID.length)];
    const bytes = mutate(rnd, Buffer.from(text, 'latin1'));
    await compare(bytes, `FUZZ_SEED=${SEED} iteration ${i}: ${JSON.stringify(bytes.toString('latin1'))}`, rnd);
  }
});
