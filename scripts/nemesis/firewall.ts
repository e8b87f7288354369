// Network partitions on loopback with nft: one table of our own, `inet grid_nemesis`, with one chain
// on the output hook. Loopback packets pass the output hook once, with the real source and
// destination addresses, so `ip saddr A ip daddr B` drops exactly the packets member A sends to
// member B. Rules also name the members' port (as destination or source port), so other programs on
// the same addresses are not cut. Clients connect from 127.0.0.1, which no rule names.
//
// The table is the only thing touched: it is deleted at the start of a run (a killed run may have
// left it), at the end, on signals and on any exception. A rule that names a non-loopback address is
// a programming error (assert).
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { assert } from '../../src/util/assert.js';

export const NFT_FAMILY = 'inet';
export const NFT_TABLE = 'grid_nemesis';
const CHAIN = 'output';

export class FirewallError extends Error {
  override name = 'FirewallError';
}

/** Packets from every address of `from` to every address of `to` (both on the members' port) are dropped. */
export interface AddressDrop {
  readonly from: readonly string[];
  readonly to: readonly string[];
}

const LOOPBACK = /^127\.(25[0-5]|2[0-4]\d|1?\d?\d)\.(25[0-5]|2[0-4]\d|1?\d?\d)\.(25[0-5]|2[0-4]\d|1?\d?\d)$/;

/** The nft script that replaces every rule of our chain with `drops` (atomic: one `nft -f`). */
export function dropScript(drops: readonly AddressDrop[], port: number): string {
  assert(Number.isInteger(port) && port > 0 && port < 65536, `bad port ${port}`);
  const lines = [`flush chain ${NFT_FAMILY} ${NFT_TABLE} ${CHAIN}`];
  for (const d of drops) {
    if (d.from.length === 0 || d.to.length === 0) continue;
    for (const a of [...d.from, ...d.to]) assert(LOOPBACK.test(a), `nemesis rules only name loopback addresses, got ${a}`);
    const match = `ip saddr { ${d.from.join(', ')} } ip daddr { ${d.to.join(', ')} }`;
    // Both directions of a TCP connection: A dialled B (B's port is the destination), or B dialled A
    // (A's port is the source of A's packets).
    lines.push(`add rule ${NFT_FAMILY} ${NFT_TABLE} ${CHAIN} ${match} tcp dport ${port} drop`);
    lines.push(`add rule ${NFT_FAMILY} ${NFT_TABLE} ${CHAIN} ${match} tcp sport ${port} drop`);
  }
  return lines.join('\n') + '\n';
}

export function createScript(): string {
  return `add table ${NFT_FAMILY} ${NFT_TABLE}\nadd chain ${NFT_FAMILY} ${NFT_TABLE} ${CHAIN} { type filter hook output priority 0; policy accept; }\n`;
}

function nft(args: readonly string[], input?: string): string {
  try {
    return execFileSync('nft', args, { input: input ?? '', encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 10_000 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new FirewallError(`nft ${args.join(' ')} failed: ${(err.stderr ?? '').trim() || err.message}`);
  }
}

/** Deletes our table if it exists; never throws (for exit and signal handlers). Returns what happened. */
export function deleteTableSync(): 'deleted' | 'absent' | string {
  try {
    execFileSync('nft', ['delete', 'table', NFT_FAMILY, NFT_TABLE], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    return 'deleted';
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer | string }).stderr ?? '');
    if (/No such file or directory|does not exist/i.test(stderr)) return 'absent';
    return `could not delete table ${NFT_FAMILY} ${NFT_TABLE}: ${stderr.trim() || (e as Error).message}`;
  }
}

export class Firewall {
  /** The drops in force (empty: no rule). */
  private active: readonly AddressDrop[] = [];

  constructor(private readonly port: number) {}

  /** Deletes a table a previous run left, then creates ours with an empty chain. */
  create(): { leftover: boolean } {
    const before = deleteTableSync();
    if (before !== 'deleted' && before !== 'absent') throw new FirewallError(before);
    nft(['-f', '-'], createScript());
    return { leftover: before === 'deleted' };
  }

  cut(drops: readonly AddressDrop[]): void {
    nft(['-f', '-'], dropScript(drops, this.port));
    this.active = drops;
  }

  heal(): void {
    nft(['-f', '-'], dropScript([], this.port));
    this.active = [];
  }

  get cutting(): boolean {
    return this.active.length > 0;
  }

  /** The chain's rules as nft lists them (for the report of a failure). */
  listing(): string {
    return nft(['list', 'table', NFT_FAMILY, NFT_TABLE]);
  }

  destroy(): string {
    this.active = [];
    return deleteTableSync();
  }
}

/** Whether a TCP connection from `from` (or the default source when null) to `host`:`port` opens within `deadlineMs`. */
export function canConnect(from: string | null, host: string, port: number, deadlineMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, ...(from === null ? {} : { localAddress: from }) });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, deadlineMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Proves the rules drop what they should on this machine before the run relies on them: a listener on
 * `b`:`probePort`, a rule dropping `a` → `b` on that port; a connect from `a` must time out, one from
 * 127.0.0.1 must still open, and after the heal one from `a` must open again. Throws FirewallError
 * with what was seen otherwise. Leaves the chain empty.
 */
export async function selfTest(a: string, b: string): Promise<void> {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, b, resolve);
  });
  const probePort = (server.address() as net.AddressInfo).port;
  const probe = new Firewall(probePort);
  try {
    if (!(await canConnect(a, b, probePort, 3000))) throw new FirewallError(`self-test: ${a} cannot reach ${b}:${probePort} even without a rule`);
    probe.cut([{ from: [a], to: [b] }]);
    if (await canConnect(a, b, probePort, 1500)) throw new FirewallError(`self-test: a rule dropping ${a} -> ${b} did not stop a TCP connect (does the output hook see loopback traffic here?)`);
    if (!(await canConnect(null, b, probePort, 3000))) throw new FirewallError(`self-test: the rule for ${a} -> ${b} also cut a client connecting from 127.0.0.1`);
    probe.heal();
    if (!(await canConnect(a, b, probePort, 3000))) throw new FirewallError(`self-test: ${a} still cannot reach ${b} after the rule was removed`);
  } finally {
    try {
      probe.heal();
    } catch {
      /* the caller deletes the table */
    }
    server.close();
  }
}
