// Command dispatch for `mrtr`: each command lives in its own file.
import { serveCommand } from './serve.js';

const USAGE = `usage: mrtr <command> [options]

commands:
  serve [--fixture example|conformance|bench] [--host H] [--port P] [--stdio]
        serve an MCP 2026-07-28 server (prints "listening on <url>" when ready)
  help  show this text
`;

/** Returns the exit code, or undefined for a command that keeps running (a server). */
export async function runCli(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serveCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`mrtr: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}
