// Starts N local members (default 3) on 127.0.0.1:5701.. for people to try clustering:
//   npm run cluster -- 3        or        npx tsx scripts/cluster.ts 3 [--base-port 5701]
// Each member's log lines are prefixed with its port. Ctrl-C sends SIGTERM to every member (each
// hands its data off and exits); a second Ctrl-C kills them.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const n = Number(args.find((a) => /^\d+$/.test(a)) ?? '3');
const baseAt = args.indexOf('--base-port');
const base = baseAt >= 0 ? Number(args[baseAt + 1]) : 5701;
if (!Number.isInteger(n) || n < 1 || n > 32) {
  console.error('usage: scripts/cluster.ts N (1..32) [--base-port P]');
  process.exit(2);
}
const members = `127.0.0.1:${base}-${base + n - 1}`;
const children: ChildProcess[] = [];
for (let i = 0; i < n; i++) {
  const port = base + i;
  const child = spawn(process.execPath, [path.join(root, 'dist', 'member.js'), '--port', String(port), '--member', members, '--rest', '--rest-groups', 'DATA,CLUSTER_WRITE', '--public-address', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal's Ctrl-C reaches only this script, which then sends one SIGTERM each.
    detached: true,
  });
  const prefix = (chunk: Buffer): string => chunk.toString().split('\n').filter((l) => l !== '').map((l) => `[${port}] ${l}\n`).join('');
  child.stdout?.on('data', (d: Buffer) => process.stdout.write(prefix(d)));
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(prefix(d)));
  child.on('exit', (code) => {
    process.stdout.write(`[${port}] exited with ${code}\n`);
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(0);
  });
  children.push(child);
}
console.log(`started ${n} member(s) on 127.0.0.1:${base}..${base + n - 1}; try: curl http://127.0.0.1:${base}/grid/rest/cluster`);
let signals = 0;
process.on('SIGINT', () => {
  signals++;
  for (const c of children) c.kill(signals > 1 ? 'SIGKILL' : 'SIGTERM');
});
process.on('SIGTERM', () => {
  for (const c of children) c.kill('SIGTERM');
});
