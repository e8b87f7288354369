// Checks src/config/interface-pattern.ts and src/config/bind-address.ts, both pure: which
// `<interface>` patterns parse (exact addresses, `*`, rising ranges in any part) and which are refused
// (not four parts, a part above 255, leading zeros, falling ranges, IPv6, garbage); what a pattern
// matches; and the address choice from a hand-written list of local interfaces shaped like
// os.networkInterfaces(): a local public-address wins, then the first local address (OS order)
// matching a pattern, then an exact pattern inside the loopback network, then the first non-loopback
// IPv4, else 127.0.0.1; interfaces that match nothing are a problem even when public-address wins;
// grid.socket.bind.any decides the listeners' host and the source of outgoing connections, and the
// advertised address is public-address when set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseAddress, isLocal, type AddressChoice, type AddressSettings, type LocalInterface } from '../../src/config/bind-address.js';
import { exactAddress, matchesPattern, parseInterfacePattern, parseInterfaceText, type InterfacePattern } from '../../src/config/interface-pattern.js';

function pattern(raw: string): InterfacePattern {
  const p = parseInterfacePattern(raw);
  assert.ok(p.ok, `${raw} should parse`);
  return p.value;
}

test('patterns: exact addresses, "*" and rising ranges in any part parse; surrounding spaces are ignored', () => {
  assert.deepEqual(pattern('10.0.*.*'), [{ from: 10, to: 10 }, { from: 0, to: 0 }, { from: 0, to: 255 }, { from: 0, to: 255 }]);
  assert.deepEqual(pattern('10.3.10.4-18')[3], { from: 4, to: 18 });
  assert.deepEqual(pattern('10.1-2.0.0')[1], { from: 1, to: 2 });
  assert.deepEqual(pattern(' 192.168.1.7 ').map((r) => r.from), [192, 168, 1, 7]);
  assert.deepEqual(pattern('0.0.0.0-255')[3], { from: 0, to: 255 });
  assert.deepEqual(pattern('255.255.255.255')[0], { from: 255, to: 255 });
  assert.deepEqual(parseInterfaceText('  10.0.*.* '), { ok: true, value: '10.0.*.*' });
});

test('patterns: malformed ones are refused with what is expected', () => {
  for (const raw of [
    '',
    '10.0.0',
    '10.0.0.0.1',
    '10.0.0.256',
    '10.0.0.300-301',
    '10.0.0.18-4',
    '10.0.0.-4',
    '10.0.0.4-',
    '10.0.0.4-5-6',
    '10.00.0.1',
    '010.0.0.1',
    '10.0.0.1a',
    '10.0.*1.0',
    '10.0.**.0',
    '10..0.1',
    'eth0',
    'localhost',
    '::1',
    'fe80::*',
    '10.0.0.1/24',
    '10.0.0.1,10.0.0.2',
    '1e1.0.0.1',
    '0x0a.0.0.1',
    '+1.0.0.1',
  ]) {
    const p = parseInterfacePattern(raw);
    assert.equal(p.ok, false, JSON.stringify(raw));
    if (!p.ok) assert.match(p.expected, /^an IPv4 address pattern: four parts separated by dots, each 0\.\.255, \* or a rising range/);
  }
});

test('patterns: matching checks each part; IPv6 and host names never match', () => {
  const p = pattern('10.0.*.4-18');
  assert.equal(matchesPattern(p, '10.0.7.4'), true);
  assert.equal(matchesPattern(p, '10.0.255.18'), true);
  assert.equal(matchesPattern(p, '10.0.7.19'), false);
  assert.equal(matchesPattern(p, '10.0.7.3'), false);
  assert.equal(matchesPattern(p, '10.1.7.4'), false);
  assert.equal(matchesPattern(p, 'fd00::2'), false);
  assert.equal(matchesPattern(pattern('*.*.*.*'), '::1'), false);
  assert.equal(matchesPattern(pattern('*.*.*.*'), 'host.example'), false);
  assert.equal(exactAddress(pattern('127.0.0.11')), '127.0.0.11');
  assert.equal(exactAddress(pattern('127.0.0.*')), null);
  assert.equal(exactAddress(pattern('127.0.0.1-2')), null);
});

// ---------------------------------------------------------------- the choice

const LO: LocalInterface = { name: 'lo', address: '127.0.0.1', family: 'IPv4', internal: true, cidr: '127.0.0.1/8' };
const LO6: LocalInterface = { name: 'lo', address: '::1', family: 'IPv6', internal: true, cidr: '::1/128' };
const ETH0: LocalInterface = { name: 'eth0', address: '192.0.2.2', family: 'IPv4', internal: false, cidr: '192.0.2.2/24' };
const ETH0_6: LocalInterface = { name: 'eth0', address: 'fd00::2', family: 'IPv6', internal: false, cidr: 'fd00::2/64' };
const ETH1: LocalInterface = { name: 'eth1', address: '10.0.5.9', family: 'IPv4', internal: false, cidr: '10.0.5.9/16' };
const MACHINE = [LO, LO6, ETH0, ETH0_6, ETH1];

function settings(s: { publicAddress?: string; interfaces?: string[]; enabled?: boolean; bindAny?: boolean } = {}): AddressSettings {
  return {
    network: { publicAddress: s.publicAddress ?? null, interfaces: { enabled: s.enabled ?? s.interfaces !== undefined, interfaces: s.interfaces ?? [] } },
    properties: { socketBindAny: s.bindAny ?? true },
  };
}

function choose(s: Parameters<typeof settings>[0], locals: readonly LocalInterface[] = MACHINE): AddressChoice {
  const r = chooseAddress(settings(s), locals);
  if (!r.ok) assert.fail(`expected a choice, got: ${r.problem}`);
  return r.choice;
}

function problem(s: Parameters<typeof settings>[0], locals: readonly LocalInterface[] = MACHINE): string {
  const r = chooseAddress(settings(s), locals);
  if (r.ok) assert.fail(`expected a problem, got ${JSON.stringify(r.choice)}`);
  return r.problem;
}

test('choice: without public-address or interfaces, the first non-loopback IPv4 address (the old behaviour), else 127.0.0.1', () => {
  assert.deepEqual(choose({}), {
    local: '192.0.2.2',
    reason: 'first non-loopback IPv4 address (eth0)',
    advertised: '192.0.2.2',
    bindHost: '0.0.0.0',
    sourceAddress: null,
  });
  assert.equal(choose({}, [LO, LO6, ETH0_6]).local, '127.0.0.1');
  assert.equal(choose({}, []).local, '127.0.0.1');
});

test('choice: a public-address of this machine is used; others are advertised only', () => {
  assert.deepEqual(choose({ publicAddress: '10.0.5.9' }), {
    local: '10.0.5.9',
    reason: 'public-address 10.0.5.9 is an address of this machine',
    advertised: '10.0.5.9',
    bindHost: '0.0.0.0',
    sourceAddress: null,
  });
  // Any address of a loopback network is local (Linux routes 127.0.0.0/8 to lo).
  assert.equal(choose({ publicAddress: '127.0.0.11' }).local, '127.0.0.11');
  assert.equal(choose({ publicAddress: '[fd00::2]' }).local, 'fd00::2');
  assert.equal(choose({ publicAddress: '[fd00::2]' }).advertised, 'fd00::2', 'brackets are dropped');
  // A NAT address or a host name: advertised, while the member uses the fallback address.
  const nat = choose({ publicAddress: '203.0.113.7' });
  assert.deepEqual([nat.local, nat.advertised], ['192.0.2.2', '203.0.113.7']);
  const named = choose({ publicAddress: 'grid-1.example' });
  assert.deepEqual([named.local, named.advertised], ['192.0.2.2', 'grid-1.example']);
});

test('choice: interfaces pick the first local address in OS order that matches any pattern', () => {
  const c = choose({ interfaces: ['10.0.*.*', '192.0.2.*'] });
  assert.equal(c.local, '192.0.2.2', 'eth0 is listed before eth1');
  assert.equal(c.reason, 'interface 192.0.2.* matches 192.0.2.2 (eth0)');
  assert.equal(choose({ interfaces: ['10.0.5.1-10'] }).local, '10.0.5.9');
  assert.equal(choose({ interfaces: ['127.0.0.*'] }).local, '127.0.0.1');
  // Exact addresses in the loopback network count, though the OS lists only 127.0.0.1.
  const lo = choose({ interfaces: ['10.9.*.*', '127.0.0.12', '127.0.0.11'] });
  assert.deepEqual([lo.local, lo.reason], ['127.0.0.12', 'interface 127.0.0.12 is in the loopback network']);
  // A listed address wins over the loopback rule, whatever the pattern order.
  assert.equal(choose({ interfaces: ['127.0.0.11', '10.0.*.*'] }).local, '10.0.5.9');
});

test('choice: interfaces that match nothing are a problem naming the patterns and the machine\'s addresses', () => {
  assert.equal(
    problem({ interfaces: ['10.9.*.*', '172.16.0.1'] }),
    'no local address matches 10.9.*.*, 172.16.0.1 (IPv4 addresses of this machine: 127.0.0.1, 192.0.2.2, 10.0.5.9; any exact 127.x.y.z address also works on Linux)',
  );
  // A range inside the loopback network is not enumerated: only listed addresses and exact ones count.
  assert.match(problem({ interfaces: ['127.0.0.10-12'] }, [ETH0]), /no local address matches 127\.0\.0\.10-12 \(IPv4 addresses of this machine: 192\.0\.2\.2;/);
  // Without a loopback interface, 127.0.0.11 is not local.
  assert.match(problem({ interfaces: ['127.0.0.11'] }, [ETH0]), /no local address matches/);
  assert.match(problem({ interfaces: ['10.*.*.*'] }, []), /addresses of this machine: none/);
  // Still a problem when a local public-address would win: the patterns are wrong either way.
  assert.match(problem({ publicAddress: '192.0.2.2', interfaces: ['10.9.*.*'] }), /no local address matches 10\.9\.\*\.\*/);
  assert.equal(problem({ enabled: true }), 'interfaces are enabled but no <interface> is listed');
  assert.match(problem({ interfaces: ['10.0.0.256'] }), /interface "10\.0\.0\.256" is not an IPv4 address pattern/);
});

test('choice: a local public-address wins over interfaces; disabled interfaces are ignored', () => {
  const c = choose({ publicAddress: '192.0.2.2', interfaces: ['10.0.*.*'] });
  assert.deepEqual([c.local, c.advertised], ['192.0.2.2', '192.0.2.2']);
  // A public-address that is not local is advertised; the member uses the interface address.
  const nat = choose({ publicAddress: '203.0.113.7', interfaces: ['10.0.*.*'] });
  assert.deepEqual([nat.local, nat.advertised], ['10.0.5.9', '203.0.113.7']);
  assert.equal(choose({ interfaces: ['10.9.*.*'], enabled: false }).local, '192.0.2.2', 'not enabled: patterns are not used (nor checked)');
});

test('choice: grid.socket.bind.any=false binds every listener and every outgoing connection to the chosen address', () => {
  assert.deepEqual(choose({ interfaces: ['10.0.*.*'], bindAny: false }), {
    local: '10.0.5.9',
    reason: 'interface 10.0.*.* matches 10.0.5.9 (eth1)',
    advertised: '10.0.5.9',
    bindHost: '10.0.5.9',
    sourceAddress: '10.0.5.9',
  });
  const nat = choose({ publicAddress: '203.0.113.7', bindAny: false });
  assert.deepEqual([nat.bindHost, nat.sourceAddress, nat.advertised], ['192.0.2.2', '192.0.2.2', '203.0.113.7']);
  const lo = choose({ publicAddress: '127.0.0.11', bindAny: false });
  assert.deepEqual([lo.bindHost, lo.sourceAddress], ['127.0.0.11', '127.0.0.11']);
  const loneLoopback = choose({ bindAny: false }, [LO]);
  assert.deepEqual([loneLoopback.bindHost, loneLoopback.reason], ['127.0.0.1', 'no non-loopback IPv4 address']);
});

test('isLocal: listed addresses (IPv6 in any letter case) and the loopback network only', () => {
  assert.equal(isLocal('127.0.0.1', MACHINE), true);
  assert.equal(isLocal('127.255.255.254', MACHINE), true);
  assert.equal(isLocal('128.0.0.1', MACHINE), false);
  assert.equal(isLocal('192.0.2.3', MACHINE), false, 'a non-loopback network is not local beyond its own address');
  assert.equal(isLocal('FD00::2', MACHINE), true);
  assert.equal(isLocal('::2', MACHINE), false);
  assert.equal(isLocal('localhost', MACHINE), false, 'host names are never resolved');
  assert.equal(isLocal('127.0.0.5', [{ ...LO, cidr: null }]), false, 'without a prefix length only the listed address counts');
  assert.equal(isLocal('127.0.0.5', [{ ...LO, cidr: '127.0.0.1/32' }]), false);
});
