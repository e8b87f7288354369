// Checks the first-bytes protocol sniffer: HTTP methods, the member preamble, TLS ClientHello,
// garbage, and that partial prefixes ask for more bytes instead of guessing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { sniff } from '../../src/runtime/sniff.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

test('HTTP methods are HTTP once the space arrives', () => {
  for (const m of ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']) {
    assert.equal(sniff(b(`${m} /`)), 'http', m);
    assert.equal(sniff(b(m)), 'need-more', m);
  }
});

test('member preamble, TLS and garbage', () => {
  assert.equal(sniff(b('GRD\x01')), 'member');
  assert.equal(sniff(b('GR')), 'need-more');
  assert.equal(sniff(Buffer.from([0x16, 0x03, 0x01])), 'tls');
  assert.equal(sniff(Buffer.from([0x16])), 'need-more');
  assert.equal(sniff(Buffer.from([0x16, 0x01])), 'unknown');
  assert.equal(sniff(b('get / HTTP/1.1')), 'unknown');
  assert.equal(sniff(b(' GET')), 'unknown');
  assert.equal(sniff(b('\r\n')), 'unknown');
  assert.equal(sniff(b('ABCDEFGHIJKLMNOPQRSTUVWXYZ')), 'unknown');
  assert.equal(sniff(Buffer.alloc(0)), 'need-more');
});

test('the client protocol: CP2, alone or with its first frame; CP followed by more letters is a method', () => {
  assert.equal(sniff(b('CP2')), 'client');
  assert.equal(sniff(Buffer.concat([b('CP2'), Buffer.from([0x40, 0, 0, 0, 0, 0xc0])])), 'client');
  assert.equal(sniff(b('C')), 'need-more');
  assert.equal(sniff(b('CP')), 'need-more');
  assert.equal(sniff(b('CPX /')), 'http');
  assert.equal(sniff(b('CONNECT host:1 HTTP/1.1')), 'http');
  assert.equal(sniff(b('CP3')), 'unknown');
});
