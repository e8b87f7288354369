// A write's key reaches the owner borrowed: REST and client calls on the owner's fast path pass a
// view of LocalMember's key scratch buffer, which the next call overwrites. The replicator sends the
// first backup at once, but keeps the write for a resend (half the backup timeout) and, unconfirmed,
// for the hand-back after a cut-off. Kept as a view, the resend carried whatever key the scratch held
// by then: the backup applied another key at the write's version and acknowledged it, so the real
// key lived on the owner alone, with nothing to show it (same version on both), and was gone with
// the owner (docs/cluster.md "Why an acknowledged write survives").
import test from 'node:test';
import assert from 'node:assert/strict';
import type { Replicator } from '../../src/replication/replicator.js';
import type { Transport } from '../../src/cluster/transport.js';
import { decodeMessage, encodeBody, MESSAGE_TYPES, type Message } from '../../src/cluster/messages.js';
import { BACKUP } from '../../src/data/replica-store.js';
import type { FakeTime } from '../harness/fake-time.js';
import { ownerReplicator } from '../harness/replicator.js';

function setUp(sent: Message[], deliver: () => boolean): { replicator: Replicator; time: FakeTime } {
  // Encoded at once, as the TCP transport does: what is sent is what the bytes were then.
  const transport: Transport = {
    send: (_address, m) => {
      if (!deliver()) return false;
      sent.push(decodeMessage(MESSAGE_TYPES[m.kind], m.callId, encodeBody(m)));
      return true;
    },
    disconnect: () => {},
    connectionCount: () => 1,
  };
  return ownerReplicator(transport, () => ['owner', 'b']);
}

test('a resent backup carries the key it was written with, though the caller reused its key buffer', () => {
  const sent: Message[] = [];
  let up = false; // the first send is dropped (no connection yet, or one that just closed)
  const { replicator, time } = setUp(sent, () => up);
  const scratch = Buffer.from('k-5-3647');
  const op = { code: BACKUP.MAP_PUT, name: 'once', key: scratch.subarray(0, 8), value: Buffer.from('v-5-3647'), contentType: null, itemId: 0, timeMs: 1 };
  let answered = false;
  replicator.replicate(1, 1, op, 'map', 'once', () => (answered = true));
  scratch.write('k-3-3659'); // the next REST call's key, written into the same scratch buffer
  up = true;
  time.advance(600); // half the backup timeout: sent again
  const backups = sent.filter((m) => m.kind === 'backup');
  assert.equal(backups.length, 1);
  const body = (backups[0] as Extract<Message, { kind: 'backup' }>).body;
  assert.equal(Buffer.from(body.op.key).toString(), 'k-5-3647');
  assert.equal(answered, false);
});

test('a write handed back after a cut-off keeps its own key, though the caller reused its key buffer', () => {
  const sent: Message[] = [];
  const { replicator } = setUp(sent, () => true);
  const scratch = Buffer.from('k-5-3647');
  const op = { code: BACKUP.MAP_PUT, name: 'once', key: scratch.subarray(0, 8), value: Buffer.from('v-5-3647'), contentType: null, itemId: 0, timeMs: 1 };
  replicator.replicate(1, 1, op, 'map', 'once', () => {});
  scratch.write('k-3-3659');
  const kept = replicator.reset(); // cut off from the cluster before the backup answered
  assert.equal(kept.length, 1);
  assert.equal(Buffer.from((kept[0] as { op: { key: Uint8Array } }).op.key).toString(), 'k-5-3647');
  // What was sent at once was encoded at once: it is right either way.
  const first = sent.find((m) => m.kind === 'backup') as Extract<Message, { kind: 'backup' }>;
  assert.equal(Buffer.from(first.body.op.key).toString(), 'k-5-3647');
});
