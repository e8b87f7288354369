// wrk for the HTTP benchmark: find it (installing it with apt-get when we are root and may), write
// the Lua scripts that pick a random key per request, run it and parse its summary.
//
// The Lua scripts build all 10,000 requests once per thread in `init` and hand out a random one in
// `request`, so the client does no string work on the hot path. The key sequence is seeded per
// thread with a fixed seed, so both servers see the same keys. There is deliberately no `response`
// callback (it makes wrk much slower); non-2xx answers come from wrk's own
// "Non-2xx or 3xx responses" summary line (wrk counts status > 399 there).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchValue, mapPathPrefix, type LoadMethod } from './loadgen.js';

export interface WrkResult {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  /** Socket errors: connect + read + write + timeout. */
  readonly errors: number;
  readonly firstError: string | null;
}

export interface WrkRunOptions {
  readonly wrkPath: string;
  readonly scriptPath: string;
  readonly host: string;
  readonly port: number;
  readonly threads: number;
  readonly connections: number;
  readonly durationS: number;
  readonly timeoutS: number;
}

const aptInstallTimeoutMs = 5 * 60 * 1000;
const aptUpdateTimeoutMs = 5 * 60 * 1000;
const wrkGraceMs = 30_000;

export function findOnPath(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return null;
}

/**
 * The path of wrk, installing it with apt-get when it is missing and we are root with apt-get.
 * Null when it is still missing; `log` says why.
 */
export function ensureWrk(log: (line: string) => void): string | null {
  const found = findOnPath('wrk');
  if (found !== null) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || findOnPath('apt-get') === null) {
    log('wrk is not installed (and we are not root with apt-get to install it)');
    return null;
  }
  log('wrk is not installed; trying: apt-get install -y wrk');
  if (apt(['install', '-y', 'wrk'], aptInstallTimeoutMs, log)) return findOnPath('wrk');
  log('apt-get install failed; trying apt-get update, then the install again');
  if (apt(['update'], aptUpdateTimeoutMs, log) && apt(['install', '-y', 'wrk'], aptInstallTimeoutMs, log)) {
    return findOnPath('wrk');
  }
  log('could not install wrk');
  return null;
}

function apt(args: readonly string[], timeoutMs: number, log: (line: string) => void): boolean {
  const result = spawnSync('apt-get', args, {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status === 0) return true;
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-5).join('\n  ');
  const why = result.error !== undefined ? result.error.message : `exit ${String(result.status ?? result.signal)}`;
  log(`apt-get ${args.join(' ')}: ${why}${output === '' ? '' : '\n  ' + output}`);
  return false;
}

/** Lua scripts for GET and POST in a fresh temporary directory; call `dispose` at the end. */
export class WrkScripts {
  private constructor(
    private readonly dir: string,
    readonly getPath: string,
    readonly postPath: string,
  ) {}

  /** `prefix`: the request path up to the key (default: the HTTP bench's map). */
  static create(keys: number, valueBytes: number, seed: number, prefix = mapPathPrefix): WrkScripts {
    const dir = mkdtempSync(path.join(tmpdir(), 'grid-bench-wrk-'));
    const getPath = path.join(dir, 'get.lua');
    const postPath = path.join(dir, 'post.lua');
    writeFileSync(getPath, luaScript('GET', keys, valueBytes, seed, prefix));
    writeFileSync(postPath, luaScript('POST', keys, valueBytes, seed, prefix));
    return new WrkScripts(dir, getPath, postPath);
  }

  scriptFor(method: LoadMethod): string {
    return method === 'GET' ? this.getPath : this.postPath;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function luaScript(method: LoadMethod, keys: number, valueBytes: number, seed: number, prefix: string): string {
  const value = benchValue(valueBytes); // alphanumeric: safe inside a Lua string literal
  const build =
    method === 'GET'
      ? `requests[i + 1] = wrk.format("GET", prefix .. i)`
      : `requests[i + 1] = wrk.format("POST", prefix .. i, { ["Content-Type"] = "text/plain" }, body)`;
  return `-- Generated by scripts/bench/wrk.ts: ${method} of a random key out of ${keys}.
local keys = ${keys}
local prefix = "${prefix}"
local body = "${value}"
local requests = {}
local threadCount = 0

function setup(thread)
  thread:set("threadIndex", threadCount)
  threadCount = threadCount + 1
end

function init(args)
  math.randomseed(${seed} + (threadIndex or 0))
  for i = 0, keys - 1 do
    ${build}
  end
end

function request()
  return requests[math.random(keys)]
end
`;
}

/** Runs wrk once; rejects when wrk fails to run or its output cannot be parsed. */
export function runWrk(options: WrkRunOptions, track: (child: ChildProcess) => void): Promise<WrkResult> {
  const args = [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    `--timeout`,
    `${options.timeoutS}s`,
    '--latency',
    '-s',
    options.scriptPath,
    `http://${options.host}:${options.port}/`,
  ];
  return new Promise<WrkResult>((resolve, reject) => {
    const child = spawn(options.wrkPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    let output = '';
    const collect = (text: string): void => {
      if (output.length < 1_000_000) output += text;
    };
    child.stdout.setEncoding('utf8').on('data', collect);
    child.stderr.setEncoding('utf8').on('data', collect);
    const killer = setTimeout(() => child.kill('SIGKILL'), options.durationS * 1000 + wrkGraceMs);
    child.on('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      if (code !== 0) {
        reject(new Error(`wrk exited with ${signal ?? String(code)}: ${output.trim().slice(-2000)}`));
        return;
      }
      try {
        resolve(parseWrkOutput(output));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

const timeUnitsMs: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function parseDurationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text);
  if (match === null) throw new Error(`wrk: cannot parse the time "${text}"`);
  return Number(match[1]) * timeUnitsMs[match[2]!]!;
}

export function parseWrkOutput(output: string): WrkResult {
  const rpsMatch = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  const countMatch = /^\s*(\d+) requests in /m.exec(output);
  const p50Match = /^\s+50%\s+(\S+)/m.exec(output);
  const p99Match = /^\s+99%\s+(\S+)/m.exec(output);
  if (rpsMatch === null || countMatch === null || p50Match === null || p99Match === null) {
    throw new Error(`wrk: unexpected output:\n${output.trim().slice(-2000)}`);
  }
  const non2xxMatch = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socketMatch = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = socketMatch === null ? 0 : socketMatch.slice(1, 5).reduce((sum, n) => sum + Number(n), 0);
  return {
    requests: Number(countMatch[1]),
    rps: Number(rpsMatch[1]),
    p50Ms: parseDurationMs(p50Match[1]!),
    p99Ms: parseDurationMs(p99Match[1]!),
    non2xx: non2xxMatch === null ? 0 : Number(non2xxMatch[1]),
    errors,
    firstError: socketMatch === null || errors === 0 ? null : socketMatch[0],
  };
}
