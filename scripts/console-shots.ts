// Screenshots of the web console for docs/console.md: 3 members (CP, a WAN publisher, a map with
// persistence, a few maps and a queue with data) on loopback ports the OS picks, every screen at 1280×900 in the light
// theme, the cluster screen in the dark one, written to docs/console/. Needs a built member (npm
// run build) and Debian's chromium (GRID_CHROMIUM to name another).
//
//   node --import tsx scripts/console-shots.ts
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs', 'console');
const browserPath = process.env.GRID_CHROMIUM ?? '/usr/bin/chromium';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function xml(port: number, peers: readonly number[], dead: number, baseDir: string): string {
  return `<grid><cluster-name>shop</cluster-name>
  <network><public-address>127.0.0.1</public-address><port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list>${peers.map((p) => `<member>127.0.0.1:${p}</member>`).join('')}</member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/><endpoint-group name="CLUSTER_WRITE" enabled="true"/><endpoint-group name="WAN" enabled="true"/><endpoint-group name="CP" enabled="true"/><endpoint-group name="PERSISTENCE" enabled="true"/></rest-api></network>
  <cp-subsystem><cp-member-count>3</cp-member-count></cp-subsystem>
  <persistence enabled="true"><base-dir>${baseDir}</base-dir></persistence>
  <map name="orders"><backup-count>1</backup-count><wan-replication-ref name="to-dr"/></map>
  <map name="customers"><backup-count>1</backup-count><data-persistence enabled="true" fsync="false"/></map>
  <wan-replication name="to-dr"><batch-publisher><cluster-name>dr</cluster-name><target-endpoints>127.0.0.1:${dead}</target-endpoints></batch-publisher></wan-replication>
</grid>`;
}

async function until(what: string, f: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await f().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const children: ChildProcess[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-shots-'));
try {
  const ports = [await freePort(), await freePort(), await freePort()];
  const dead = await freePort();
  for (const p of ports) {
    const file = path.join(dir, `${p}.xml`);
    fs.writeFileSync(file, xml(p, ports, dead, path.join(dir, 'persistence')));
    children.push(spawn(process.execPath, [path.join(root, 'dist', 'member.js'), '--config', file], { stdio: 'ignore' }));
  }
  const base = `http://127.0.0.1:${ports[0]}`;
  await until('a safe cluster of 3', async () => {
    const h = (await (await fetch(`${base}/grid/health`)).json()) as { clusterSize: number; clusterSafe: boolean };
    return h.clusterSize === 3 && h.clusterSafe;
  });
  for (let i = 0; i < 2000; i++) await fetch(`${base}/grid/rest/maps/${i % 3 === 0 ? 'orders' : i % 3 === 1 ? 'customers' : 'sessions'}/k${i}`, { method: 'POST', body: `value ${i}`, headers: { 'content-type': 'text/plain' } });
  for (let i = 0; i < 40; i++) await fetch(`${base}/grid/rest/queues/jobs`, { method: 'POST', body: `job ${i}` });
  await fetch(`${base}/grid/rest/log-level`, { method: 'POST', body: 'shop&&INFO' });
  await until('CP discovery', async () => (await fetch(`${base}/grid/rest/cp-subsystem/groups`)).status === 200);
  // A few samples of the metric history.
  for (let i = 0; i < 6; i++) {
    for (let k = 0; k < 300; k++) await fetch(`${base}/grid/rest/maps/orders/k${(k * 7) % 2000}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  fs.mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  for (const screen of ['cluster', 'partitions', 'charts', 'structures', 'wan', 'persistence', 'cp', 'timeline', 'actions']) {
    await page.goto(`${base}/grid/console/#/${screen}`);
    await page.locator(`[data-screen="${screen}"]`).waitFor();
    await page.locator('[data-updated]').filter({ hasText: 'last updated' }).waitFor();
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(out, `${screen}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${base}/grid/console/#/cluster`);
  await page.locator('[data-updated]').filter({ hasText: 'last updated' }).waitFor();
  await page.screenshot({ path: path.join(out, 'cluster-dark.png') });
  await browser.close();
  console.log(`screenshots in ${out}`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
}
