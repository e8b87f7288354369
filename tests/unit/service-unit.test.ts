// The systemd unit shipped in scripts/ must let a graceful stop finish: its TimeoutStopSec covers the
// longest stop the default properties allow (hand-off bound + the wait for the clients to move + the
// in-flight bound), with a margin of at
// most a minute, and it reloads with SIGHUP (TLS certificates).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../harness/member-process.js';
import { GRID_PROPERTY_SPECS } from '../../src/config/properties.js';
import { DEPART_WAIT_MS } from '../../src/member/cluster-node.js';

test('grid-member.service: TimeoutStopSec covers the longest default graceful stop; ExecReload sends SIGHUP', () => {
  const unit = fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'grid-member.service'), 'utf8');
  const timeout = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
  const defaultOf = (name: string): number => GRID_PROPERTY_SPECS.find((p) => p.name === name)?.defaultValue as number;
  const longest = defaultOf('grid.graceful.shutdown.max.wait.seconds') + DEPART_WAIT_MS / 2 / 1000 + defaultOf('grid.shutdown.inflight.wait.seconds');
  assert.ok(timeout >= longest && timeout <= longest + 60, `TimeoutStopSec=${timeout}, longest stop ${longest} s`);
  assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  assert.match(unit, /^RestartPreventExitStatus=2$/m);
});
