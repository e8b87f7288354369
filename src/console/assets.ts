// The console's files (spec/console.md "Shape"): the page, its style sheet and its scripts, built
// by the project's tsc into dist/console/ui/ and read once, on the first request, into memory.
// Invariants: only files of that directory and of its direct subdirectories are served, by a name
// of lower-case letters, digits and dashes with a known extension, read once into memory (no path
// from a request ever reaches the file system); each carries a strong
// ETag (a hash of its bytes), so a browser revalidates with If-None-Match and gets 304.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const FILE = /^[a-z0-9-]{1,64}\.(html|css|js|svg)$/;
const DIR = /^[a-z0-9-]{1,32}$/;
const NAME = /^([a-z0-9-]{1,32}\/)?[a-z0-9-]{1,64}\.(html|css|js|svg)$/;

/** Files larger than this are not the console's (a guard, not a limit anyone meets): 2 MiB. */
const FILE_BYTES_MAX = 2 * 1024 * 1024;

/** dist/console/ui of this checkout, whether this module runs from src/ (tsx) or from dist/. */
export function defaultAssetDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/console/ui');
}

export class ConsoleAssets {
  private files: Map<string, ConsoleAsset> | null = null;

  constructor(private readonly dir: string = defaultAssetDir()) {}

  /** The file of that name, or null (not a console file, or the console was not built). */
  get(name: string): ConsoleAsset | null {
    if (!NAME.test(name)) return null;
    return this.load().get(name) ?? null;
  }

  /** Whether the page itself is there (a checkout run from source without `npm run build` has none). */
  get built(): boolean {
    return this.load().has('index.html');
  }

  private load(): Map<string, ConsoleAsset> {
    if (this.files !== null) return this.files;
    const files = new Map<string, ConsoleAsset>();
    const read = (dir: string, prefix: string): void => {
      let entries: fs.Dirent[] = [];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        entries = [];
      }
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (e.isDirectory() && prefix === '' && DIR.test(e.name)) read(full, `${e.name}/`);
        if (!e.isFile() || !FILE.test(e.name)) continue;
        if (fs.statSync(full).size > FILE_BYTES_MAX) continue;
        const body = fs.readFileSync(full);
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
        files.set(`${prefix}${e.name}`, { body, contentType: TYPES[path.extname(e.name)] as string, etag });
      }
    };
    read(this.dir, '');
    this.files = files;
    return files;
  }
}
