// etcd 3.4 for the CP benchmarks (cp.ts on tmpfs, cp-durable.ts on disk): Debian's etcd-server,
// installed with apt-get when missing and we are root; three members on loopback; stopped with
// kill -9 at the end.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { freePorts, until } from '../../tests/harness/cluster.js';
import { say, track } from './common.js';
import { findOnPath } from './wrk.js';

export interface Etcd {
  readonly children: ReturnType<typeof spawn>[];
  readonly clientPorts: number[];
  readonly dir: string;
  readonly leaderPort: number;
}

export function ensureEtcd(): string | null {
  const found = findOnPath('etcd');
  if (found !== null) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || findOnPath('apt-get') === null) return null;
  for (const args of [['install', '-y', 'etcd-server'], ['update'], ['install', '-y', 'etcd-server']]) {
    say(`cp: apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: 'ignore', timeout: 300_000 });
    if (r.status === 0 && args[0] === 'install') break;
  }
  const installed = findOnPath('etcd');
  // The package starts a system etcd on 2379: stop it, the bench runs its own.
  if (installed !== null) spawnSync('systemctl', ['stop', 'etcd'], { stdio: 'ignore' });
  return installed;
}

/** Three etcd 3.4 members with their data under `dir`; resolves once one is leader (its client port). */
export async function startEtcd(etcdPath: string, dir: string): Promise<Etcd> {
  const ports = await freePorts(6);
  const peer = (i: number): number => ports[3 + i] as number;
  const cluster = [0, 1, 2].map((i) => `e${i}=http://127.0.0.1:${peer(i)}`).join(',');
  const children: ReturnType<typeof spawn>[] = [];
  for (let i = 0; i < 3; i++) {
    const child = spawn(
      etcdPath,
      [
        '--name', `e${i}`, '--data-dir', path.join(dir, `e${i}`),
        '--listen-client-urls', `http://127.0.0.1:${ports[i]}`, '--advertise-client-urls', `http://127.0.0.1:${ports[i]}`,
        '--listen-peer-urls', `http://127.0.0.1:${peer(i)}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer(i)}`,
        '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--log-level', 'error',
      ],
      { stdio: 'ignore' },
    );
    track(child);
    children.push(child);
  }
  const clientPorts = ports.slice(0, 3);
  const leaderPort = await until('etcd elected a leader', 30_000, async () => {
    for (const p of clientPorts) {
      const r = await fetch(`http://127.0.0.1:${p}/v3/maintenance/status`, { method: 'POST', body: '{}' });
      const s = (await r.json()) as { header?: { member_id?: string }; leader?: string };
      if (s.leader !== undefined && s.leader !== '0' && s.header?.member_id === s.leader) return p;
    }
    return null;
  });
  await fetch(`http://127.0.0.1:${leaderPort}/v3/kv/put`, { method: 'POST', body: '{"key":"YmVuY2g=","value":"MQ=="}' });
  return { children, clientPorts, dir, leaderPort };
}

export async function stopEtcd(etcd: Etcd): Promise<void> {
  for (const c of etcd.children) c.kill('SIGKILL');
  await Promise.all(etcd.children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
}
