// Which server `mrtr call` and `mrtr tools` talk to: an http(s) endpoint, or a local command run over stdio
// (`--stdio -- <command> [args…]`, or the older `stdio:<command>` form), with a minimal environment.
import {
  type ClientTransport,
  HttpClientTransport,
  type OAuthClient,
  StdioClientTransport,
} from '../client/index.js';
import { UsageError } from './cli-args.js';

export interface TargetOptions {
  token?: string;
  /** Extra variables for a stdio server, on top of the minimal environment. */
  env?: Record<string, string>;
  /** OAuth sign-in for an HTTP server that asks for it (not used with --token). */
  auth?: OAuthClient;
}

/** Check an endpoint URL the way a newcomer types it, and say what is wrong with it. */
export function endpointUrl(target: string): URL {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    // `localhost:3000/mcp` parses as a URL with the scheme "localhost:": say what was meant instead.
    if (/^[\w.-]+(:\d+)?(\/|$)/.test(target) || /^\[[0-9a-f:]+\](:\d+)?/i.test(target))
      throw new UsageError(`'${target}' has no scheme: did you mean http://${target} ?`);
    throw new UsageError(`'${target}' is not a URL (expected http(s)://host/path, or --stdio -- <command>)`);
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UsageError(`'${target}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(
      `'${target}' is not an http(s) URL (the scheme is ${url.protocol.replace(':', '')})`,
    );
  return url;
}

/** A stdio transport for a command line; its stderr is kept (the last lines) to explain an exit. */
export function stdioTransport(command: string[], env: Record<string, string> | undefined): ClientTransport {
  const [program, ...args] = command;
  if (!program)
    throw new UsageError('--stdio needs the server command after --, e.g. --stdio -- node server.js');
  return new StdioClientTransport({ command: program, args, env, stderr: 'tail' });
}

/** `http(s)://…` → Streamable HTTP; `stdio:<command> [args…]` → a child process speaking stdio. */
export function transportFor(target: string, options: TargetOptions = {}): ClientTransport {
  if (target.startsWith('stdio:'))
    return stdioTransport(target.slice('stdio:'.length).trim().split(/\s+/).filter(Boolean), options.env);
  return new HttpClientTransport({
    url: endpointUrl(target),
    token: options.token,
    auth: options.token ? undefined : options.auth,
  });
}
