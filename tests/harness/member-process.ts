// Starts the BUILT member (dist/member.js) as a real process on an OS-chosen port and waits until it
// logs the port it listens on. Every wait is bounded by a deadline; nothing sleeps for a fixed time.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MEMBER_JS = path.join(REPO_ROOT, 'dist', 'member.js');

export interface MemberProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then wait for exit (bounded); resolves with the exit code. */
  stop(signal?: NodeJS.Signals, deadlineMs?: number): Promise<number | null>;
  waitForExit(deadlineMs?: number): Promise<number | null>;
  waitForOutput(pattern: RegExp, deadlineMs?: number): Promise<RegExpMatchArray>;
}

export interface StartOptions {
  readonly args?: readonly string[];
  /** XML written to a temporary file and passed with --config. */
  readonly xml?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly deadlineMs?: number;
  /** Also append everything the process writes to this file (stderr lines prefixed `[stderr] `). */
  readonly logFile?: string;
  /** Keep at most about this many characters of stdout in memory (the newest); default unbounded. */
  readonly stdoutCharsMax?: number;
}

export function writeTempConfig(xml: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-test-'));
  const file = path.join(dir, 'grid.xml');
  fs.writeFileSync(file, xml);
  return file;
}

/** Runs the member to completion (for config errors, --help, --version). */
export function runMember(args: readonly string[], env: Readonly<Record<string, string>> = {}, cwd = REPO_ROOT): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MEMBER_JS, ...args], { cwd, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`member did not exit within 20 s; stdout: ${stdout}; stderr: ${stderr}`));
    }, 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The environment without GRID_ variables from the caller's shell, so tests are hermetic. */
function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GRID_') && v !== undefined) out[k] = v;
  return out;
}

export async function startMember(options: StartOptions = {}): Promise<MemberProcess> {
  if (!fs.existsSync(MEMBER_JS)) throw new Error(`${MEMBER_JS} is missing: run npm run build first`);
  const args = [...(options.args ?? [])];
  if (options.xml !== undefined) args.unshift('--config', writeTempConfig(options.xml));
  if (!args.includes('--port') && !args.some((a) => a.startsWith('--port='))) args.push('--port', '0');
  // MEMBER_NODE_ARGS: extra node flags for every member started (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // to profile a benchmark's members; a member writes its profile when it stops with SIGTERM).
  const nodeArgs = (process.env.MEMBER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...nodeArgs, MEMBER_JS, ...args], {
    cwd: options.cwd ?? os.tmpdir(),
    env: { ...cleanEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners: (() => void)[] = [];
  const logFd = options.logFile === undefined ? null : fs.openSync(options.logFile, 'a');
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (options.stdoutCharsMax !== undefined && out.length > options.stdoutCharsMax) out = out.slice(-Math.floor(options.stdoutCharsMax / 2));
    if (logFd !== null) fs.writeSync(logFd, d);
    for (const l of listeners.slice()) l();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (logFd !== null) fs.writeSync(logFd, d.toString().split(/(?<=\n)/).map((l) => `[stderr] ${l}`).join(''));
  });
  if (logFd !== null) child.on('close', () => fs.closeSync(logFd));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    exitCode = code;
    resolve(code);
    for (const l of listeners.slice()) l();
  }));

  const waitForOutput = (pattern: RegExp, deadlineMs = 15_000): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const m = out.match(pattern);
        if (m !== null) {
          cleanup();
          resolve(m);
          return true;
        }
        if (exitCode !== undefined) {
          cleanup();
          reject(new Error(`member exited (${exitCode}) before printing ${pattern}; stdout: ${out}; stderr: ${err}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`member did not print ${pattern} within ${deadlineMs} ms; stdout: ${out}; stderr: ${err}`));
      }, deadlineMs);
      const listener = (): void => void check();
      const cleanup = (): void => {
        clearTimeout(timer);
        const i = listeners.indexOf(listener);
        if (i >= 0) listeners.splice(i, 1);
      };
      listeners.push(listener);
      check();
    });

  const waitForExit = (deadlineMs = 15_000): Promise<number | null> =>
    Promise.race([
      exited,
      new Promise<number | null>((_, reject) => setTimeout(() => reject(new Error(`member did not exit within ${deadlineMs} ms`)), deadlineMs).unref()),
    ]);

  const match = await waitForOutput(/listening on \[([^\]]+)\]:(\d+)/, options.deadlineMs ?? 15_000).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  // The REST line comes first with advanced networking; tests that need another port parse it themselves.
  const port = Number(match[2]);
  return {
    child,
    port,
    stdout: () => out,
    stderr: () => err,
    waitForOutput,
    waitForExit,
    stop: async (signal: NodeJS.Signals = 'SIGTERM', deadlineMs = 15_000) => {
      if (exitCode !== undefined) return exitCode;
      child.kill(signal);
      try {
        return await waitForExit(deadlineMs);
      } catch (e) {
        child.kill('SIGKILL');
        throw e;
      }
    },
  };
}

/** A member with REST on and security on: realm `rest` with user `admin` (this password) and a member identity. */
export function secureMemberXml(password: string): string {
  return `<grid>
  <network><rest-api enabled="true"/></network>
  <security enabled="true">
    <realms>
      <realm name="rest">
        <authentication><simple><user username="admin" password="${password}"/></simple></authentication>
        <identity><username-password username="member" password="member-pw"/></identity>
      </realm>
    </realms>
    <member-authentication realm="rest"/>
  </security>
</grid>`;
}
