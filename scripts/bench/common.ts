// What the benchmark runners share (run.ts for the HTTP bench, cluster.ts for the cluster benches):
// child-process tracking, server start with a readiness wait, graceful stop, a small HTTP GET, and
// medians. Moved here from run.ts unchanged in behaviour, so that cluster.ts can use them without an
// import cycle.
//
// Hygiene: every child process is tracked (`track`) so that a finally block, SIGINT/SIGTERM and exit
// can kill them; every wait has a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const host = '127.0.0.1';
export const serverStartDeadlineMs = 20_000;
const serverStopDeadlineMs = 10_000;
const readyPollIntervalMs = 100;
const outputTailLines = 40;

export const benchDir = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(benchDir, '..', '..');
export const memberEntry = path.join(repoRoot, 'dist', 'member.js');
const listeningPattern = /listening on \[([^\]]+)\]:(\d+)/;

// ---------------------------------------------------------------------------------------------
// Child processes: every one is tracked, so that a finally block, SIGINT and exit can kill them.

const children = new Set<ChildProcess>();

export function track(child: ChildProcess): void {
  children.add(child);
  child.on('exit', () => children.delete(child));
}

export function killAll(signal: NodeJS.Signals): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

let interruptedFlag = false;

/** True once SIGINT or SIGTERM reached the runner. */
export function interrupted(): boolean {
  return interruptedFlag;
}

export function onSignal(signal: NodeJS.Signals): void {
  if (interruptedFlag) return;
  interruptedFlag = true;
  process.stderr.write(`\n${signal}: stopping the child processes\n`);
  killAll('SIGTERM');
  setTimeout(() => {
    killAll('SIGKILL');
    process.exit(130);
  }, 3000).unref();
}

export function say(line: string): void {
  process.stdout.write(line + '\n');
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Keeps the last lines of a stream, optionally echoing them with a prefix. */
export class OutputTail {
  private readonly lines: string[] = [];
  private partial = '';

  constructor(private readonly echoPrefix: string | null) {}

  push(text: string, onLine?: (line: string) => void): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) {
      this.lines.push(line);
      if (this.lines.length > outputTailLines) this.lines.shift();
      if (this.echoPrefix !== null) say(`${this.echoPrefix}${line}`);
      onLine?.(line);
    }
    if (this.partial.length > 64 * 1024) this.partial = this.partial.slice(-1024);
  }

  /** Hands on a last line that had no newline. */
  flush(onLine?: (line: string) => void): void {
    if (this.partial !== '') this.push('\n', onLine);
  }

  text(): string {
    return [...this.lines, this.partial].filter((line) => line !== '').join('\n');
  }
}

// ---------------------------------------------------------------------------------------------
// Servers.

export interface Server {
  readonly label: string;
  readonly child: ChildProcess;
  readonly port: number;
  readonly output: OutputTail;
  stopping: boolean;
  /** Set when the process exited while it was not being stopped. */
  died: string | null;
}

export interface StartServerOptions {
  /** Environment of the child; the runner's own when absent. */
  readonly env?: NodeJS.ProcessEnv;
  /** Start deadline (listening line and readiness), default serverStartDeadlineMs. */
  readonly deadlineMs?: number;
}

export async function startServer(label: string, args: readonly string[], verbose: boolean, options: StartServerOptions = {}): Promise<Server> {
  const startDeadlineMs = options.deadlineMs ?? serverStartDeadlineMs;
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
  track(child);
  const output = new OutputTail(verbose ? `[${label}] ` : null);
  const deadline = Date.now() + startDeadlineMs;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${label}: no "listening on [host]:port" line within ${startDeadlineMs} ms`));
    }, startDeadlineMs);
    const onLine = (line: string): void => {
      const match = listeningPattern.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      if (match[1] !== host && match[1] !== '0.0.0.0' && match[1] !== '::') {
        say(`note: ${label} listens on [${match[1]}]; the benchmark connects to ${host} (loopback only)`);
      }
      resolve(Number(match[2]));
    };
    child.stdout?.setEncoding('utf8').on('data', (text: string) => output.push(text, onLine));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => output.push(text, onLine));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${signal ?? String(code)} before listening:\n${output.text()}`));
    });
  });
  const server: Server = { label, child, port, output, stopping: false, died: null };
  child.on('exit', (code, signal) => {
    if (!server.stopping) server.died = `${label} exited with ${signal ?? String(code)}:\n${output.text()}`;
  });
  await waitReady(server, deadline, startDeadlineMs);
  return server;
}

async function waitReady(server: Server, deadlineMs: number, startDeadlineMs: number): Promise<void> {
  let last = 'no answer';
  for (let attempt = 0; attempt < 10_000 && Date.now() < deadlineMs; attempt++) {
    if (server.died !== null) throw new Error(server.died);
    try {
      const response = await httpGet(server.port, '/grid/health/ready', 1000);
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await delay(readyPollIntervalMs);
  }
  throw new Error(`${server.label}: GET /grid/health/ready not 200 within ${startDeadlineMs} ms (${last})`);
}

export async function stopServer(server: Server): Promise<string | null> {
  server.stopping = true;
  const child = server.child;
  if (child.exitCode !== null || child.signalCode !== null) return describeExit(server.label, child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), serverStopDeadlineMs);
  await exited;
  clearTimeout(killer);
  return describeExit(server.label, child);
}

/** Null for a clean stop (exit 0 or ended by SIGTERM), else a warning. */
function describeExit(label: string, child: ChildProcess): string | null {
  if (child.exitCode === 0 || child.signalCode === 'SIGTERM') return null;
  return `${label} did not stop cleanly on SIGTERM (${child.signalCode ?? String(child.exitCode)})`;
}

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

export function httpGet(port: number, urlPath: string, timeoutMs: number, agent: http.Agent | false = false): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const request = http.get({ host, port, path: urlPath, agent, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Numbers.

/** CPU ticks (user + system, 100 a second) a process has used, from /proc; null where there is no /proc. */
export function cpuTicks(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
