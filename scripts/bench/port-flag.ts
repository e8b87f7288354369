// The `--port N` flag of the bench's own servers (bare-server.ts, net-server.ts): 0 lets the OS pick;
// anything else that is not a port ends the process with exit code 2.
export function portFlag(argv: readonly string[], program: string): number {
  const index = argv.indexOf('--port');
  const text = index >= 0 ? argv[index + 1] : '0';
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`${program}: bad --port ${String(text)}\n`);
    process.exit(2);
  }
  return port;
}
