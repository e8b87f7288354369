// Runs the official Python client (`hazelcast-python-client` 5.x) against three real members:
// scripts/python-client/smoke.py connects with smart routing and checks every map and queue call of
// spec/client.md, and the CP subsystem's AtomicLong, AtomicReference and CountDownLatch, against REST in both directions (docs/client.md, "Python"). Not part of `npm test`:
// CI machines have Node and npm only. Needs python3 with the client importable: `pip install
// hazelcast-python-client`, or PYTHONPATH pointing at its source (it has no dependencies).
//
// Usage: npm run check:python-client [-- --python /usr/bin/python3]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts, killAll, startClusterMembers, until, waitSettled } from '../tests/harness/cluster.js';
import { request } from '../tests/harness/raw-http.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const i = process.argv.indexOf('--python');
const python = i >= 0 ? (process.argv[i + 1] ?? 'python3') : 'python3';

async function main(): Promise<number> {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports, { cpXml: '<cp-member-count>3</cp-member-count>' });
  try {
    await waitSettled(ports, 3, 60_000);
    await until('CP discovery', 60_000, async () => ((await request(ports[0] as number, 'GET', '/grid/rest/cp-subsystem/groups')).status === 200 ? true : null));
    const child = spawn(python, [path.join(here, 'python-client', 'smoke.py'), ...ports.map(String)], { stdio: 'inherit' });
    return await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    await killAll(members);
  }
}

main().then(
  (code) => {
    process.stdout.write(code === 0 ? 'python client check: passed\n' : `python client check: FAILED (exit ${code})\n`);
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`python client check: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
