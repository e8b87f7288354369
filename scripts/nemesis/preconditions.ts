// What the nemesis needs before it starts anything: root (nft rules, signals to members), the `nft`
// command (installed from the distribution's nftables package with apt-get when missing), a kernel
// that lets us create a table, the built member, and the loopback addresses. Each missing piece is a
// PreconditionError saying exactly what is missing; the script exits 2 and never runs a pretend
// nemesis without partitions.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { MEMBER_JS } from '../../tests/harness/member-process.js';

export class PreconditionError extends Error {
  override name = 'PreconditionError';
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

export function requireRoot(): void {
  const uid = process.getuid?.();
  if (uid !== 0) {
    throw new PreconditionError(`needs root (uid 0) to add nft rules and signal members; running as uid ${uid ?? 'unknown'}: run it as root (e.g. sudo npm run nemesis -- ...)`);
  }
}

/** Makes sure `nft` exists, installing nftables with apt-get (quietly) when it does not. Returns a note for the log. */
export function ensureNft(log: (line: string) => void): string {
  if (hasCommand('nft')) return 'nft found';
  if (!hasCommand('apt-get')) throw new PreconditionError('nft is missing and apt-get is not available to install nftables: install nftables and run again');
  log('nft is missing: installing nftables (apt-get update && apt-get install -y nftables)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'nftables']]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: 600_000 });
    if (r.status !== 0) {
      const why = r.error !== undefined ? r.error.message : `exit status ${r.status ?? r.signal}`;
      const tail = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').slice(-5).join(' | ');
      throw new PreconditionError(`nft is missing and "apt-get ${args.join(' ')}" failed (${why}): ${tail || 'no output'}`);
    }
  }
  if (!hasCommand('nft')) throw new PreconditionError('apt-get installed nftables but nft is still not on the PATH');
  return 'nft installed from nftables';
}

/** nft must be able to list tables (a kernel without nf_tables, or no CAP_NET_ADMIN, fails here). */
export function requireNftWorks(): void {
  try {
    execFileSync('nft', ['list', 'tables'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim();
    throw new PreconditionError(`nft cannot list tables here (no nf_tables in the kernel, or no CAP_NET_ADMIN): ${stderr || (e as Error).message}`);
  }
}

export function requireBuiltMember(): void {
  if (!fs.existsSync(MEMBER_JS)) throw new PreconditionError(`${MEMBER_JS} is missing: run npm run build (npm run nemesis builds first)`);
}

function bindable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * One port free on every address in `hosts`, below the kernel's ephemeral range (so no outgoing
 * connection takes it while a killed member waits for its restart): the first of 15701..15999.
 */
export async function commonFreePort(hosts: readonly string[]): Promise<number> {
  for (let port = 15701; port < 16000; port++) {
    let free = true;
    for (const h of hosts) {
      if (!(await bindable(h, port))) {
        free = false;
        break;
      }
    }
    if (free) return port;
  }
  throw new PreconditionError(`no port of 15701..15999 is free on every one of ${hosts.join(', ')}`);
}
