#!/usr/bin/env node
// Entry point: argv / env / file → Config → a running member. Configuration errors print one line
// on stderr and exit with status 2 before anything listens. SIGTERM and SIGINT stop the member
// gracefully (exit 0); a second signal exits at once. SIGHUP reloads TLS certificates, SIGQUIT
// writes a diagnostic report and keeps running, SIGUSR1 is ignored (no inspector).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { randomBytes } from 'node:crypto';
import { chooseAddress, type AddressChoice } from './config/bind-address.js';
import { loadConfig } from './config/load.js';
import { XML_DEFAULT_LIMITS } from './config/xml.js';
import { Logger } from './util/logger.js';
import { localInterfaces } from './runtime/local-interfaces.js';
import { MemberRuntime } from './runtime/member-runtime.js';
import { MEMBER_VERSION } from './member/version.js';

// Node opens its inspector (a debugger any local process can attach to, running code inside the
// member) on SIGUSR1 unless a listener is installed: installed first thing, before anything loads.
let usr1 = (): void => {};
process.on('SIGUSR1', () => usr1());

// Young-generation collections (scavenges) run on the main thread alone. A member's young objects
// rarely survive (a request's garbage dies with it), so a scavenge has little to copy, and its
// parallel helper threads mostly wait for a core: under the HTTP benchmark's load on 2 cores a
// scavenge paused the member 0.30 ms with helpers and 0.16 ms without, every ~30 ms, and each pause
// holds every request in flight (the member's p99). V8 reads this flag at every scavenge, so setting
// it here takes effect. An operator who wants the helpers starts node with --parallel-scavenge
// (on the command line or in NODE_OPTIONS); that choice is kept. docs/operations.md "Garbage collection".
if (!parallelScavengeChosen(process.execArgv, process.env['NODE_OPTIONS'] ?? '')) v8.setFlagsFromString('--no-parallel-scavenge');

function parallelScavengeChosen(execArgv: readonly string[], nodeOptions: string): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => /^--(no-)?parallel[-_]scavenge(=|$)/.test(a));
}

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

/** The start-up line that says which address the member uses, why, and what its listeners bind. */
function describeAddress(a: AddressChoice, bindAny: boolean): string {
  const advertised = a.advertised === a.local ? '' : `; advertised as ${a.advertised} (public-address)`;
  const binding = bindAny
    ? `listeners bind ${a.bindHost}, every interface (grid.socket.bind.any=true)`
    : `listeners bind ${a.bindHost} only and member connections leave from it (grid.socket.bind.any=false)`;
  return `address ${a.local}: ${a.reason}; ${binding}${advertised}`;
}

async function main(): Promise<void> {
  const interfaces = localInterfaces();
  const result = loadConfig({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    readFile: readConfigFile,
    fileExists: (file) => fs.existsSync(path.resolve(process.cwd(), file)),
    randomHex: (bytes) => randomBytes(bytes).toString('hex'),
    version: MEMBER_VERSION,
    // What this version runs; the loader refuses the rest with the setting's location.
    supports: { persistence: true, wanReplication: true, cpSubsystem: true, tls: true },
    localInterfaces: interfaces,
  });
  if (result.kind === 'exit') exitWith(result.code, result.stdout, result.stderr);
  const config = result.config;

  const logger = new Logger(config.logging.level, config.logging.format, { write: (line) => process.stdout.write(line) });
  const log = logger.component('config');
  log.info(`Grid ${MEMBER_VERSION} on Node.js ${process.versions.node}, pid ${process.pid}; configuration: ${result.sourceNote}`);
  for (const warning of result.warnings) log.warning(warning);
  for (const notice of result.notices) log.info(notice);
  log.config(`cluster ${config.clusterName}, instance ${config.instanceName}, port ${config.network.port.port}${config.network.port.autoIncrement ? ` (auto-increment, ${config.network.port.portCount} ports)` : ''}`);
  const tcp = config.network.join.tcpIp;
  log.info(tcp.enabled ? `join addresses (tcp-ip): ${tcp.members.join(', ') || 'none'}` : 'tcp-ip join is off');

  // The loader checked these same addresses against <interfaces>, so the choice cannot fail here.
  const address = chooseAddress(config, interfaces);
  if (!address.ok) exitWith(1, '', `grid: cannot start: ${address.problem}`);
  log.info(describeAddress(address.choice, config.properties.socketBindAny));

  let runtime: MemberRuntime;
  try {
    runtime = new MemberRuntime(config, address.choice, logger, (code) => {
      // Let stdout drain before leaving.
      process.stdout.write('', () => process.exit(code));
    });
  } catch (e) {
    // A persistence directory that is locked, unreadable or corrupt: say which, and stop.
    exitWith(1, '', `grid: cannot start: ${e instanceof Error ? e.message : String(e)}`);
  }
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
  process.on('SIGHUP', () => runtime.reloadTls());
  process.on('SIGQUIT', () => runtime.writeDiagnostics());
  usr1 = () => logger.log('WARNING', 'runtime', 'SIGUSR1 ignored: this member does not open the Node.js inspector on a signal');
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
