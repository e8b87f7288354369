// Path joining without node:path, so the configuration core stays free of Node modules. Paths are
// POSIX style; an absolute path (leading `/`, or a Windows drive) is returned unchanged.

export function joinPath(cwd: string, path: string): string {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return path;
  const base = cwd.endsWith('/') ? cwd.slice(0, -1) : cwd;
  const rest = path.startsWith('./') ? path.slice(2) : path;
  return `${base}/${rest}`;
}
