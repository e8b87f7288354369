// One client process of the client bench (client.ts): an official Node client (`hazelcast-client`,
// smart routing) on the member the parent names, running map get or set loops with a number of
// calls in flight when the parent asks, and reporting the calls it completed and the seconds it
// took. Talks to the parent over the fork IPC channel only.
//
// Usage (by client.ts): fork scripts/bench/client-worker.ts <host:port> <clusterName> <inFlight> <keys> <valueBytes> <seed>
import { createRequire } from 'node:module';

interface HzMap {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<void>;
}
interface HzClient {
  getMap(name: string): Promise<HzMap>;
  shutdown(): Promise<void>;
}
const hz = createRequire(import.meta.url)('hazelcast-client') as { Client: { newHazelcastClient(config: unknown): Promise<HzClient> } };

/** What the parent sends. */
export type WorkerCommand = { readonly cmd: 'preload'; readonly from: number; readonly to: number } | { readonly cmd: 'run'; readonly method: 'GET' | 'POST'; readonly seconds: number } | { readonly cmd: 'stop' };
/** What a worker answers. */
export type WorkerReply = { readonly kind: 'ready' } | { readonly kind: 'done'; readonly calls: number; readonly seconds: number } | { readonly kind: 'error'; readonly message: string };

const [address, clusterName, inFlightText, keysText, valueBytesText, seedText] = process.argv.slice(2);
const inFlight = Number(inFlightText);
const keys = Number(keysText);
const value = 'v'.repeat(Number(valueBytesText));
let seed = Number(seedText) >>> 0;

function reply(r: WorkerReply): void {
  process.send?.(r);
}

async function run(map: HzMap, method: 'GET' | 'POST', seconds: number): Promise<{ calls: number; seconds: number }> {
  let calls = 0;
  const end = Date.now() + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (Date.now() < end) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      const key = `k${seed % keys}`;
      if (method === 'GET') await map.get(key);
      else await map.set(key, value);
      calls++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inFlight }, () => loop()));
  return { calls, seconds: (Date.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const client = await hz.Client.newHazelcastClient({ clusterName, network: { clusterMembers: [address] }, properties: { 'hazelcast.logging.level': 'OFF' } });
  const map = await client.getMap('bench');
  process.on('message', (m: WorkerCommand) => {
    const work = async (): Promise<void> => {
      if (m.cmd === 'stop') {
        await client.shutdown().catch(() => null);
        process.disconnect();
        return;
      }
      if (m.cmd === 'preload') {
        for (let i = m.from; i < m.to; i += inFlight) await Promise.all(Array.from({ length: Math.min(inFlight, m.to - i) }, (_, j) => map.set(`k${i + j}`, value)));
        reply({ kind: 'done', calls: m.to - m.from, seconds: 0 });
        return;
      }
      reply({ kind: 'done', ...(await run(map, m.method, m.seconds)) });
    };
    work().catch((e: unknown) => reply({ kind: 'error', message: e instanceof Error ? e.message : String(e) }));
  });
  reply({ kind: 'ready' });
}

main().catch((e: unknown) => {
  reply({ kind: 'error', message: e instanceof Error ? e.message : String(e) });
  process.exitCode = 1;
});
