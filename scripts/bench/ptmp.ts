import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePorts, KeepAliveClient, killAll, until } from '../../tests/harness/cluster.js';
import { startMember } from '../../tests/harness/member-process.js';
import { SeededRandom } from '../../src/util/prng.js';
const map = process.argv[2] ?? 'durable';
const [port] = (await freePorts(1)) as [number];
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ptmp-'));
const xml = `<grid><cluster-name>bench</cluster-name><network><public-address>127.0.0.1</public-address><port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list><member>127.0.0.1:${port}</member></member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api></network>
  <persistence enabled="true"><base-dir>${base}</base-dir></persistence>
  <map name="durable"><data-persistence enabled="true" fsync="false"/></map><map name="synced"><data-persistence enabled="true" fsync="true"/></map></grid>`;
const m = await startMember({ xml, args: ['--port', String(port)] });
await until('ready', 60000, async () => { const c = new KeepAliveClient(port); try { return (await c.request('GET', '/grid/health/ready')).status === 200 ? true : null; } finally { c.close(); } });
let done = 0; const end = performance.now() + 10000;
await Promise.all(Array.from({ length: 24 }, async (_, w) => { const c = new KeepAliveClient(port); const rnd = new SeededRandom(w); try { while (performance.now() < end) { await c.request('POST', `/grid/rest/maps/${map}/k${rnd.nextInt(Number(process.env.KEYS ?? 10000))}`, { body: 'x'.repeat(100) }); done++; } } finally { c.close(); } }));
console.log(map, done / 10, '/s');
await m.stop('SIGTERM', 30000); await killAll([m]); fs.rmSync(base, { recursive: true, force: true });
