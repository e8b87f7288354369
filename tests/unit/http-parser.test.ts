// The HTTP/1.1 request parser core (src/http/parser.ts, issue #14 part 1): what it accepts (request
// line forms, fields, Content-Length and chunked bodies with extensions and trailers, pipelining,
// keep-alive by version and Connection, Expect: 100-continue, empty lines before a request), every
// refusal (bare LF line ends and repeated Content-Length included) with its status (each request-smuggling shape, bare CR, obs-fold,
// whitespace before a colon, NUL, bad chunk sizes, Host rules, limits 431 and 413, versions 505),
// and that the result never depends on how the bytes were split (every split point of each case,
// and seeded random splits of pipelined streams).
import test from 'node:test';
import assert from 'node:assert/strict';
import { RequestParser, type ParsedRequest, type ParseError, type RequestHead } from '../../src/http/parser.js';
import { SeededRandom } from '../../src/util/prng.js';

const LIMITS = { headBytesMax: 16 * 1024, headerCountMax: 100, bodyBytesMax: 1024 * 1024 };

type Event = { head: string } | { request: string } | { error: ParseError };

function describeHead(h: RequestHead): string {
  return `${h.method} ${h.target} 1.${h.minorVersion} ka=${h.keepAlive} ec=${h.expectContinue} cl=${h.contentLength} ch=${h.chunked} ${h.headers.map(([n, v]) => `${n}=${v}`).join('|')}`;
}

function describeRequest(r: ParsedRequest): string {
  return `${describeHead(r.head)} body=${r.body === null ? 'null' : r.body.toString('latin1')} trailers=${r.trailers.map(([n, v]) => `${n}=${v}`).join('|')}`;
}

function run(chunks: readonly Uint8Array[], limits = LIMITS): Event[] {
  const events: Event[] = [];
  const p = new RequestParser(limits, {
    onHead: (h) => events.push({ head: describeHead(h) }),
    onRequest: (r: ParsedRequest) => events.push({ request: describeRequest(r) }),
    onError: (e) => events.push({ error: e }),
  });
  for (const c of chunks) p.push(c);
  return events;
}

function whole(text: string): Event[] {
  return run([Buffer.from(text, 'latin1')]);
}

/** The events are the same for every split point of the input (into two pieces) and byte by byte. */
function splitInvariant(text: string): Event[] {
  const bytes = Buffer.from(text, 'latin1');
  const expected = run([bytes]);
  for (let i = 1; i < bytes.length; i++) assert.deepEqual(run([bytes.subarray(0, i), bytes.subarray(i)]), expected, `split at ${i} of ${JSON.stringify(text)}`);
  assert.deepEqual(run([...bytes].map((b) => Uint8Array.of(b))), expected, `byte by byte: ${JSON.stringify(text)}`);
  return expected;
}

function requests(events: Event[]): string[] {
  return events.flatMap((e) => ('request' in e ? [e.request] : []));
}

function errorOf(events: Event[]): ParseError | null {
  const e = events.find((x) => 'error' in x);
  return e !== undefined && 'error' in e ? e.error : null;
}

test('accepted requests: GET, POST with a body, chunked with extensions and trailers, pipelined', () => {
  const get = splitInvariant('GET /grid/rest/maps/m/k?x=1 HTTP/1.1\r\nHost: a\r\n\r\n');
  assert.deepEqual(requests(get), ['GET /grid/rest/maps/m/k?x=1 1.1 ka=true ec=false cl=0 ch=false host=a body=null trailers=']);
  const post = splitInvariant('POST /m HTTP/1.1\r\nHost: a\r\nContent-Type:  text/plain \r\nContent-Length: 5\r\n\r\nhello');
  assert.deepEqual(requests(post), ['POST /m 1.1 ka=true ec=false cl=5 ch=false host=a|content-type=text/plain|content-length=5 body=hello trailers=']);
  const chunked = splitInvariant('POST /m HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1;q="a\\"b"\r\nhello\r\n1\r\n!\r\n0\r\nX-Sum: 6\r\n\r\n');
  assert.deepEqual(requests(chunked), ['POST /m 1.1 ka=true ec=false cl=-1 ch=true host=a|transfer-encoding=chunked body=hello! trailers=x-sum=6']);
  const piped = splitInvariant('GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  assert.deepEqual(requests(piped).map((r) => r.split(' ').slice(0, 2).join(' ')), ['GET /a', 'POST /b', 'GET /c']);
  assert.match(requests(piped)[2] as string, /ka=false/);
  // Every head is reported before its request.
  assert.deepEqual(piped.map((e) => ('head' in e ? 'h' : 'request' in e ? 'r' : 'e')).join(''), 'hrhrhr');
});

test('versions, keep-alive, Expect, empty lines, absolute form, an empty Content-Length body', () => {
  assert.match(requests(splitInvariant('GET / HTTP/1.0\r\n\r\n'))[0] as string, /1\.0 ka=false/);
  assert.match(requests(splitInvariant('GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n'))[0] as string, /1\.0 ka=true/);
  assert.match(requests(splitInvariant('GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n'))[0] as string, /ka=false/);
  assert.match(requests(splitInvariant('POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx'))[0] as string, /ec=true/);
  assert.match(requests(splitInvariant('\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n'))[0] as string, /^GET \/x/);
  assert.match(requests(splitInvariant('\n\r\rGET /y HTTP/1.1\r\nHost: a\r\n\r\n'))[0] as string, /^GET \/y/, 'any CR and LF before a request line');
  assert.match(requests(splitInvariant('GET http://h:5701/grid/rest?q HTTP/1.1\r\nHost: h\r\n\r\n'))[0] as string, /^GET \/grid\/rest\?q /);
  assert.match(requests(splitInvariant('GET http://h HTTP/1.1\r\nHost: h\r\n\r\n'))[0] as string, /^GET \/ /);
  assert.match(requests(splitInvariant('OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n'))[0] as string, /^OPTIONS \* /);
  assert.match(requests(splitInvariant('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n'))[0] as string, /body= trailers/);
  assert.match(requests(splitInvariant('POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\t 2\r\n\r\nok'))[0] as string, /body=ok/, 'a tab before the value is whitespace');
});

test('every refusal, with its status; nothing is reported after an error', () => {
  const cases: [string, number, RegExp][] = [
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n', 400, /both Transfer-Encoding and Content-Length/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n', 400, /more than once/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n', 400, /more than once/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n', 400, /more than once/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n', 400, /more than once/],
    ['GET /lf HTTP/1.1\nHost: a\n\n', 400, /LF without CR/],
    ['GET / HTTP/1.1\r\nHost: a\n\r\n', 400, /LF without CR/],
    ['GET /  HTTP/1.1\r\nHost: a\r\n\r\n', 400, /more than one space/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n', 400, /LF without CR/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\n0\r\n\r\n', 400, /LF without CR/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n', 400, /LF without CR/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n', 400, /not a number/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n', 400, /not a number/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\t\r\n\r\nabc', 400, /tab after a Content-Length/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\t\r\nabc\r\n0\r\n\r\n', 400, /whitespace in a chunk-size line/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3 ;a=b\r\nabc\r\n0\r\n\r\n', 400, /whitespace in a chunk-size line/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n', 400, /does not end with chunked/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n', 400, /does not end with chunked/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n', 400, /more than once/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501, /not supported/],
    ['POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n', 400, /HTTP\/1\.0/],
    ['GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n', 400, /bare CR/],
    ['GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  folded\r\n\r\n', 400, /folding/],
    ['GET / HTTP/1.1\r\nHost : a\r\n\r\n', 400, /whitespace between/],
    ['GET / HTTP/1.1\r\nHost: a\r\nX: a\u0000b\r\n\r\n', 400, /NUL/],
    ['GET / HTTP/1.1\r\nHost: a\r\nX: a\u0001b\r\n\r\n', 400, /control character/],
    ['GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n', 400, /without a colon/],
    ['GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n', 400, /empty name/],
    ['GET / HTTP/1.1\r\nHo(st: a\r\n\r\n', 400, /token character/],
    ['GET / HTTP/1.1\r\n\r\n', 400, /without Host/],
    ['GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, /more than one Host/],
    ['GET / HTTP/2.0\r\nHost: a\r\n\r\n', 505, /not supported/],
    ['GET / HTTP/1.2\r\nHost: a\r\n\r\n', 505, /not supported/],
    ['GET / HTTPS/1.1\r\nHost: a\r\n\r\n', 400, /version/],
    ['GET  / HTTP/1.1\r\nHost: a\r\n\r\n', 400, /more than one space/],
    ['GET /\r\nHost: a\r\n\r\n', 400, /HTTP\/0\.9/],
    ['GET / extra HTTP/1.1\r\nHost: a\r\n\r\n', 400, /version/],
    ['G\u0001T / HTTP/1.1\r\nHost: a\r\n\r\n', 400, /method/],
    ['G1T / HTTP/1.1\r\nHost: a\r\n\r\n', 501, /not implemented/],
    ['CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n', 501, /not implemented/],
    ['get / HTTP/1.1\r\nHost: a\r\n\r\n', 501, /not implemented/],
    ['GET /a b HTTP/1.1\r\nHost: a\r\n\r\n', 400, /version/],
    ['GET /a\u007fb HTTP/1.1\r\nHost: a\r\n\r\n', 400, /control character/],
    ['GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n', 400, /fragment/],
    ['GET * HTTP/1.1\r\nHost: a\r\n\r\n', 400, /OPTIONS only/],
    ['GET a.b/c HTTP/1.1\r\nHost: a\r\n\r\n', 400, /neither a path/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, /not a hexadecimal/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1x\r\n', 400, /other than an extension/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n', 400, /too many digits/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n', 400, /longer than its chunk size/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;a="x\r\n', 400, /unterminated/],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n', 413, /larger than/],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n', 413, /larger than/],
  ];
  for (const [text, status, message] of cases) {
    const events = splitInvariant(text + 'GET /after HTTP/1.1\r\nHost: a\r\n\r\n');
    const error = errorOf(events);
    assert.ok(error !== null, `refused: ${JSON.stringify(text)}`);
    assert.equal(error.status, status, `${JSON.stringify(text)}: ${error.message}`);
    assert.match(error.message, message, JSON.stringify(text));
    assert.ok(!requests(events).some((r) => r.includes('/after')), 'nothing is read after an error');
    assert.ok('error' in (events[events.length - 1] as Event), 'the error is the last event');
  }
});

test('limits: the head and the field count give 431', () => {
  const big = `GET / HTTP/1.1\r\nHost: a\r\nX: ${'v'.repeat(17 * 1024)}\r\n\r\n`;
  assert.equal(errorOf(whole(big))?.status, 431);
  // Refused as soon as the bytes pass the limit, without waiting for the end of the head.
  assert.equal(errorOf(whole(big.slice(0, 17 * 1024)))?.status, 431);
  const many = `GET / HTTP/1.1\r\nHost: a\r\n${Array.from({ length: 101 }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`;
  assert.equal(errorOf(whole(many))?.status, 431);
  const trailers = `POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ${'t'.repeat(17 * 1024)}\r\n\r\n`;
  assert.equal(errorOf(whole(trailers))?.status, 431);
});

test('seeded streams of pipelined requests parse the same whatever the splits', () => {
  const rnd = new SeededRandom(14);
  const pieces = [
    'GET /a HTTP/1.1\r\nHost: h\r\n\r\n',
    'POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz',
    'POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2;e\r\nab\r\n0\r\n\r\n',
    'GET /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
    'DELETE /e HTTP/1.1\r\nHost: h\r\n\r\n',
    '\r\nHEAD /f HTTP/1.1\r\nHost: h\r\n\r\n',
  ];
  const bad = ['GET / HTTP/1.1\r\nHost: h\r\nX : y\r\n\r\n', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'];
  for (let i = 0; i < 300; i++) {
    const n = 1 + rnd.nextInt(8);
    let text = '';
    for (let k = 0; k < n; k++) text += pieces[rnd.nextInt(pieces.length)];
    if (rnd.nextInt(4) === 0) text += bad[rnd.nextInt(bad.length)];
    const bytes = Buffer.from(text, 'latin1');
    const expected = run([bytes]);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; ) {
      const len = 1 + rnd.nextInt(Math.min(40, bytes.length - at));
      chunks.push(bytes.subarray(at, at + len));
      at += len;
    }
    assert.deepEqual(run(chunks), expected, `stream ${i}`);
  }
});

test('Transfer-Encoding: chunked alone frames the body; another last coding is 400; another coding before chunked is 501 naming it; chunked twice is 400', () => {
  const te = (value: string): Event[] => whole(`POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ${value}\r\n\r\n0\r\n\r\n`);
  for (const value of ['chunked', 'Chunked', 'CHUNKED', 'chunked ']) assert.equal(requests(te(value)).length, 1, value);
  for (const value of ['gzip', 'identity', 'xchunked', 'chunkedx', 'gzip, identity', 'chunked, gzip', 'chunked;q=1', ',', 'chunked, chunked', 'chunked,', ', chunked', 'gzip,,chunked']) {
    const e = errorOf(te(value));
    assert.equal(e?.status, 400, value);
    assert.equal(e?.code, 'ERR_HTTP_BAD_REQUEST', value);
  }
  for (const [value, named] of [['gzip, chunked', 'gzip'], ['deflate,chunked', 'deflate'], ['gzip, br, CHUNKED', 'gzip, br']] as const) {
    const e = errorOf(te(value));
    assert.equal(e?.status, 501, value);
    assert.equal(e?.code, 'ERR_HTTP_TRANSFER_CODING', value);
    assert.ok(e?.message.includes(`'${named}'`), e?.message);
  }
  // A long value is clipped in the message; the request line is named with the error.
  const long = errorOf(te('x'.repeat(500)));
  assert.ok(long !== null && long.message.length < 200, long?.message);
  assert.deepEqual([long?.request?.method, long?.request?.target], ['POST', '/']);
});

test('errors carry their code and, once read, the request line; header() reads one field without building the others', () => {
  assert.deepEqual(errorOf(whole('BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n')), { status: 501, code: 'ERR_HTTP_METHOD', message: "method 'BREW' is not implemented", request: null });
  assert.equal(errorOf(whole('GET / HTTP/2.0\r\nHost: a\r\n\r\n'))?.code, 'ERR_HTTP_VERSION');
  const bad = errorOf(whole('GET /x HTTP/1.1\r\nHost: a\r\nBad Field: 1\r\n\r\n'));
  assert.deepEqual([bad?.request?.method, bad?.request?.target], ['GET', '/x']);
  let head: RequestHead | null = null;
  const p = new RequestParser(LIMITS, { onHead: (h) => (head = h), onRequest: () => {}, onError: () => {} });
  p.push(Buffer.from('GET / HTTP/1.1\r\nHost: a\r\nContent-Type: Text/Plain \r\nAccept: a\r\naccept:  b\r\ncontent-type: x/y\r\n\r\n', 'latin1'));
  const h = head as RequestHead | null;
  assert.ok(h !== null);
  assert.equal(h.header('content-type'), 'Text/Plain', 'a single-valued field: the first');
  assert.equal(h.header('accept'), 'a, b', 'a list field: joined');
  assert.equal(h.header('host'), 'a');
  assert.equal(h.header('authorization'), undefined);
  assert.equal(h.hasContentLength, false);
});

test('pause() holds further requests of a read until resume(); midRequest and buffered follow the bytes', () => {
  const seen: string[] = [];
  const p: RequestParser = new RequestParser(LIMITS, {
    onHead: () => {},
    onRequest: (r) => {
      seen.push(r.head.target);
      p.pause();
    },
    onError: () => {},
  });
  p.push(Buffer.from('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHo', 'latin1'));
  assert.deepEqual(seen, ['/1']);
  assert.ok(p.buffered > 0);
  p.resume();
  assert.deepEqual(seen, ['/1', '/2']);
  p.resume();
  assert.deepEqual(seen, ['/1', '/2'], 'the third is not complete');
  assert.equal(p.midRequest, true);
  assert.equal(p.readingHead, true);
  p.push(Buffer.from('st: a\r\n\r\n', 'latin1'));
  assert.deepEqual(seen, ['/1', '/2', '/3']);
  p.resume();
  assert.equal(p.midRequest, false);
  assert.equal(p.requestsDone, 3);
});

/**
 * Borrowed pushes (the connection's shared read buffer): each piece is copied into one scratch buffer,
 * pushed borrowed, and the scratch is overwritten right after, as the next read would. Nothing read
 * later may see the overwrite: bodies, heads of requests whose body is still to come, bytes held by a
 * pause, and heads a handler keeps after calling detach().
 */
function runBorrowed(chunks: readonly Uint8Array[], rnd: SeededRandom, limits = LIMITS): Event[] {
  const scratch = Buffer.allocUnsafeSlow(64 * 1024);
  const events: Event[] = [];
  // Heads kept past their report (as by an answer that waits), described only at the end.
  const kept: { at: number; request: ParsedRequest }[] = [];
  // A head is described late (when its request completes or fails, or after the last push): a head
  // whose body spans reads must still read right then.
  const heads: { at: number; head: RequestHead }[] = [];
  const describeHeads = (): void => {
    for (const { at, head } of heads.splice(0)) events[at] = { head: describeHead(head) };
  };
  const p: RequestParser = new RequestParser(limits, {
    onHead: (h) => {
      heads.push({ at: events.length, head: h });
      events.push({ head: '' });
    },
    onRequest: (r: ParsedRequest) => {
      describeHeads();
      if (rnd.nextInt(2) === 0) {
        r.head.detach();
        kept.push({ at: events.length, request: r });
        events.push({ request: '' });
      } else {
        events.push({ request: describeRequest(r) });
      }
      // Sometimes the handler holds reading back until the next piece has come and gone.
      if (rnd.nextInt(4) === 0) p.pause();
    },
    onError: (e) => {
      describeHeads();
      events.push({ error: e });
    },
  });
  for (const c of chunks) {
    p.resume();
    scratch.set(c, 0);
    p.push(scratch.subarray(0, c.length), true);
    scratch.fill(0x58, 0, c.length);
  }
  for (let i = 0; i < 1000 && p.isPaused; i++) p.resume();
  describeHeads();
  for (const { at, request: r } of kept) {
    events[at] = { request: describeRequest(r) };
  }
  return events;
}

test('borrowed pushes: what the parser hands out or keeps never points into the reused chunk', () => {
  const rnd = new SeededRandom(1414);
  const pieces = [
    'GET /a HTTP/1.1\r\nHost: h\r\nAccept: x\r\n\r\n',
    'POST /b HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world',
    'POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n2;e\r\nab\r\n3\r\ncde\r\n0\r\nX-T: 1\r\n\r\n',
    'GET /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
    'PUT /e HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n',
    'POST /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nwxyz',
  ];
  for (let i = 0; i < 400; i++) {
    const n = 1 + rnd.nextInt(8);
    let text = '';
    for (let k = 0; k < n; k++) text += pieces[rnd.nextInt(pieces.length)];
    if (rnd.nextInt(5) === 0) text += 'GET / HTTP/1.1\r\nHost: h\r\nX : y\r\n\r\n';
    const bytes = Buffer.from(text, 'latin1');
    const expected = run([bytes]);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; ) {
      // Short reads split heads; long ones bring whole heads with part of a body.
      const len = 1 + rnd.nextInt(Math.min(rnd.nextInt(2) === 0 ? 20 : 200, bytes.length - at));
      chunks.push(bytes.subarray(at, at + len));
      at += len;
    }
    assert.deepEqual(runBorrowed(chunks, rnd), expected, `stream ${i}`);
  }
});

test('borrowed pushes: a body is handed out in memory of its own; a head detached keeps reading right', () => {
  const scratch = Buffer.allocUnsafeSlow(1024);
  let got: ParsedRequest | null = null;
  const p = new RequestParser(LIMITS, { onHead: () => {}, onRequest: (r) => (got = r), onError: () => {} });
  const text = Buffer.from('POST /m HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nX-Id: 7\r\nContent-Length: 3\r\n\r\nabc', 'latin1');
  scratch.set(text);
  p.push(scratch.subarray(0, text.length), true);
  const r = got as ParsedRequest | null;
  assert.ok(r !== null && r.body !== null);
  assert.notEqual(r.body.buffer, scratch.buffer, 'the body is a copy');
  r.head.detach();
  scratch.fill(0);
  assert.equal(r.body.toString('latin1'), 'abc');
  assert.equal(r.head.header('content-type'), 'text/plain');
  assert.equal(r.head.header('x-id'), '7');
  assert.deepEqual(r.head.headers.map(([n]) => n), ['host', 'content-type', 'x-id', 'content-length']);
});
