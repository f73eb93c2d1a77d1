// How `mrtr call` signs a person in to an OAuth-protected MCP server: a loopback listener for the redirect
// (RFC 8252 §7.3), the authorization URL printed and opened in the browser ($BROWSER, or the platform's opener),
// and tokens kept per server in a 0600 file under the user's config directory.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultTokenFile, fileTokenStore, OAuthClient, safe, safeLine } from '../client/index.js';
import { printLine } from './terminal/print.js';

export interface SignInOptions {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** Open the browser (else only print the link). */
  openBrowser: boolean;
  /** Where the link and progress are told. */
  out: NodeJS.WritableStream;
  /** The command's name, for messages. */
  me: string;
  /** The token file. Default: defaultTokenFile(). */
  tokenFile?: string;
}

/** Run $BROWSER, or the platform's URL opener, with the link; failures are fine (the link is printed anyway). */
export function openInBrowser(url: string): void {
  const browser = process.env.BROWSER;
  const [cmd, args] = browser
    ? [browser, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener here: the person uses the printed link.
  }
}

export interface SignIn {
  auth: OAuthClient;
  close(): Promise<void>;
}

export function signIn(options: SignInOptions): SignIn {
  let server: Server | undefined;
  let redirect: Promise<string> | undefined;
  let waiting: ((url: URL) => void) | undefined;
  const listen = (): Promise<string> => {
    redirect ??= new Promise((resolve, reject) => {
      const listener = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/callback') {
          res.writeHead(404);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Signed in. You can close this window and go back to the terminal.\n');
        const w = waiting;
        waiting = undefined;
        w?.(new URL(req.url ?? '/', `http://127.0.0.1:${(listener.address() as AddressInfo).port}`));
      });
      server = listener;
      listener.on('error', reject);
      listener.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`),
      );
    });
    return redirect;
  };
  const auth = new OAuthClient({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    scope: options.scope,
    clientName: 'mrtr',
    redirectUri: listen,
    store: fileTokenStore(options.tokenFile ?? defaultTokenFile()),
    authorize: async (url) => {
      await listen();
      const back = new Promise<URL>((resolve) => {
        waiting = resolve;
      });
      printLine(options.out, safe`${safeLine(options.me)}: sign in to ${safeLine(url.host)} to go on:`);
      printLine(options.out, safe`  ${safeLine(url.href)}`);
      if (options.openBrowser) openInBrowser(url.href);
      return back;
    },
  });
  return {
    auth,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
