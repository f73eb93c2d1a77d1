// How `mrtr call` signs a person in to an OAuth-protected MCP server: a loopback listener for the redirect
// (RFC 8252 §7.3), the authorization URL shown with the host it really opens, opened in the browser ($BROWSER, or
// the platform's opener) only when the person asks for it at the terminal, and tokens kept per server in a 0600
// file under the user's config directory.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import {
  defaultTokenFile,
  fileTokenStore,
  inspectLink,
  OAuthClient,
  OAuthError,
  safe,
  safeLine,
} from '../client/index.js';
import { printLine } from './terminal/print.js';

export interface SignInOptions {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /**
   * A person at a terminal: offer to open the link (`o` then Enter). Otherwise the link is only printed: nothing
   * is ever opened without a keypress, whatever $BROWSER says.
   */
  interactive: boolean;
  /** Where the keypress is read. Default process.stdin. */
  input?: NodeJS.ReadableStream;
  /** Opens a link in the browser. Default openInBrowser. */
  open?: (url: string) => void;
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

/**
 * Read lines from the terminal while the sign-in waits: `o` opens the link, once per keypress. Returns the function
 * that stops listening (the browser came back, or the command ends).
 */
function offerToOpen(options: SignInOptions, href: string, host: string): () => void {
  const out = options.out;
  printLine(out, safe`  Nothing is opened unless you say so: type o and Enter to open it in your browser.`);
  const rl = createInterface({ input: options.input ?? process.stdin, terminal: false });
  rl.on('line', (line) => {
    if (line.trim().toLowerCase() !== 'o') return;
    printLine(out, safe`  opening ${safeLine(host)} in your browser…`);
    (options.open ?? openInBrowser)(href);
  });
  return () => rl.close();
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
    onNotice: (message) => printLine(options.out, safe`${safeLine(options.me)}: ${safeLine(message)}`),
    authorize: async (url, _redirectUri, signal) => {
      // The rules of URL-mode questions: only http(s) links (the OAuth client has already refused plain http off
      // this machine), the host a browser would really contact, and its warnings.
      const link = inspectLink(url.href);
      if (!link.ok) throw new OAuthError(`the sign-in link was refused: ${link.reason}`, 401);
      // The host a browser will contact (as inspectLink resolves it), with the port a person can check too.
      const where = new URL(link.href).host;
      await listen();
      const back = new Promise<URL>((resolve) => {
        waiting = resolve;
      });
      const out = options.out;
      printLine(out, safe`${safeLine(options.me)}: sign in to ${safeLine(where)} to go on:`);
      printLine(out, safe`  ${safeLine(link.href)}`);
      for (const w of link.warnings) printLine(out, safe`  ⚠ ${safeLine(w)}`);
      if (!options.interactive) return back;
      const stop = offerToOpen(options, link.href, where);
      const stopped = () => stop();
      signal.addEventListener('abort', stopped, { once: true });
      try {
        return await back;
      } finally {
        signal.removeEventListener('abort', stopped);
        stop();
      }
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
