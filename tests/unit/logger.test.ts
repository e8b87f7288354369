// Checks the levelled logger: threshold filtering, run-time override and reset, text and JSON lines.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Logger, parseLogLevel } from '../../src/util/logger.js';

function capture(level: Parameters<typeof parseLogLevel>[0], format: 'text' | 'json'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = new Logger(parseLogLevel(level) ?? 'INFO', format, { write: (l) => lines.push(l) }, () => 0);
  return { logger, lines };
}

test('threshold, override and reset', () => {
  const { logger, lines } = capture('INFO', 'text');
  logger.log('FINE', 'x', 'hidden');
  logger.log('WARNING', 'x', 'shown');
  assert.equal(lines.length, 1);
  assert.match(lines[0] as string, /^1970-01-01T00:00:00.000Z WARNING - \[x\] shown\n$/);
  assert.equal(logger.runtimeLevel, null);
  logger.setRuntimeLevel('FINEST');
  logger.log('FINE', 'x', 'now shown');
  assert.equal(lines.length, 2);
  assert.equal(logger.runtimeLevel, 'FINEST');
  logger.resetLevel();
  logger.log('FINE', 'x', 'hidden again');
  assert.equal(lines.length, 2);
  assert.equal(logger.runtimeLevel, null);
  logger.setRuntimeLevel('OFF');
  logger.log('SEVERE', 'x', 'off means nothing');
  assert.equal(lines.length, 2);
});

test('json lines carry member, component and fields', () => {
  const { logger, lines } = capture('INFO', 'json');
  logger.setMemberAddress('[127.0.0.1]:5701');
  logger.component('audit').info('login', { user: 'admin' });
  assert.deepEqual(JSON.parse(lines[0] as string), { time: '1970-01-01T00:00:00.000Z', level: 'INFO', member: '[127.0.0.1]:5701', component: 'audit', message: 'login', user: 'admin' });
});

test('parseLogLevel is case-insensitive and rejects unknown names', () => {
  assert.equal(parseLogLevel('fine'), 'FINE');
  assert.equal(parseLogLevel(' Severe '), 'SEVERE');
  assert.equal(parseLogLevel('DEBUG'), null);
});
