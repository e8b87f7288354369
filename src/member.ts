#!/usr/bin/env node
// Entry point: argv / env / file → Config → a running member. Configuration errors print one line
// on stderr and exit with status 2 before anything listens. SIGTERM and SIGINT stop the member
// gracefully (exit 0); a second signal exits at once.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from './config/load.js';
import { XML_DEFAULT_LIMITS } from './config/xml.js';
import { Logger } from './util/logger.js';
import { MemberRuntime } from './runtime/member-runtime.js';
import { MEMBER_VERSION } from './member/version.js';

function exitWith(code: number, stdout: string, stderr: string): never {
  if (stdout !== '') process.stdout.write(stdout.endsWith('\n') ? stdout : stdout + '\n');
  if (stderr !== '') process.stderr.write(stderr.endsWith('\n') ? stderr : stderr + '\n');
  process.exit(code);
}

/**
 * Reads a configuration file as strict UTF-8, at most XML_DEFAULT_LIMITS.maxBytes + 1 bytes (the
 * parser then reports the size), so `--config /dev/zero` or a huge file cannot exhaust memory.
 */
function readConfigFile(file: string): string {
  const limit = XML_DEFAULT_LIMITS.maxBytes + 1;
  const buffer = Buffer.allocUnsafe(limit);
  const fd = fs.openSync(file, 'r');
  let length = 0;
  try {
    for (let n = -1; n !== 0 && length < limit; length += n) n = fs.readSync(fd, buffer, length, limit - length, null);
  } finally {
    fs.closeSync(fd);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
  } catch {
    throw new Error('the file is not valid UTF-8');
  }
}

async function main(): Promise<void> {
  const result = loadConfig({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    readFile: readConfigFile,
    fileExists: (file) => fs.existsSync(path.resolve(process.cwd(), file)),
    randomHex: (bytes) => randomBytes(bytes).toString('hex'),
    version: MEMBER_VERSION,
    // What this version runs; the loader refuses the rest with the setting's location.
    supports: { persistence: false, wanReplication: false, cpSubsystem: false, tls: true },
  });
  if (result.kind === 'exit') exitWith(result.code, result.stdout, result.stderr);
  const config = result.config;

  const logger = new Logger(config.logging.level, config.logging.format, { write: (line) => process.stdout.write(line) });
  const log = logger.component('config');
  log.info(`Grid ${MEMBER_VERSION} on Node.js ${process.versions.node}, pid ${process.pid}; configuration: ${result.sourceNote}`);
  for (const warning of result.warnings) log.warning(warning);
  log.config(`cluster ${config.clusterName}, instance ${config.instanceName}, port ${config.network.port.port}${config.network.port.autoIncrement ? ` (auto-increment, ${config.network.port.portCount} ports)` : ''}`);
  const tcp = config.network.join.tcpIp;
  log.info(tcp.enabled ? `join addresses (tcp-ip): ${tcp.members.join(', ') || 'none'}` : 'tcp-ip join is off');

  const runtime = new MemberRuntime(config, logger, (code) => {
    // Let stdout drain before leaving.
    process.stdout.write('', () => process.exit(code));
  });
  let signals = 0;
  const onSignal = (signal: string): void => {
    signals++;
    if (signals > 1) {
      logger.log('WARNING', 'runtime', `${signal} again: exiting now`);
      process.exit(1);
    }
    void runtime.stop(`${signal} received`);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  try {
    await runtime.start();
  } catch (e) {
    exitWith(1, '', `grid: cannot start: ${e instanceof Error ? e.message : String(e)}`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`grid: fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
