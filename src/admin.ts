#!/usr/bin/env node
// grid-admin: administers a Grid cluster through the REST API of one member (docs/operations.md,
// "Admin CLI"). This file is the edge: it hands argv, the environment, the file system and the
// HTTP client to the core in admin/run.ts, prints what it returns and exits with its status
// (0 done, 1 refused, 2 usage error, 3 no answer, 4 internal error).
import fs from 'node:fs';
import { exchange } from './admin/http-client.js';
import { EXIT_INTERNAL } from './admin/outcome.js';
import { runAdmin } from './admin/run.js';

async function main(): Promise<void> {
  const outcome = await runAdmin(process.argv.slice(2), process.env, {
    readFile: (file) => fs.readFileSync(file),
    exchange,
  });
  if (outcome.stdout !== '') process.stdout.write(outcome.stdout);
  if (outcome.stderr !== '') process.stderr.write(outcome.stderr);
  // exitCode rather than exit(): stdout to a pipe is flushed before the process ends.
  process.exitCode = outcome.exitCode;
}

main().catch((e: unknown) => {
  process.stderr.write(`grid-admin: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = EXIT_INTERNAL;
});
