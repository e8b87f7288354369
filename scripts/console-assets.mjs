// Build step: copies the console's page and style sheet next to its compiled scripts
// (dist/console/ui/), so that dist/ holds everything a member serves. Plain Node, no dependency.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const from = path.join(root, 'src', 'console', 'ui');
const to = path.join(root, 'dist', 'console', 'ui');
fs.mkdirSync(to, { recursive: true });
for (const name of fs.readdirSync(from)) {
  if (!/\.(html|css|svg)$/.test(name)) continue;
  fs.copyFileSync(path.join(from, name), path.join(to, name));
}
