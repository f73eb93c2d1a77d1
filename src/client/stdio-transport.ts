// stdio client transport: launch the server as a child process, newline-delimited JSON-RPC on its stdin/stdout.
// The child gets a minimal environment and its own process group, so that closing ends everything it started.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import {
  classifyMessage,
  InvalidArgumentError,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcResponse,
  LineSplitter,
  type RequestId,
} from '../protocol/index.js';
import { CLIENT_DEFAULTS } from './driver.js';
import { abortError, ProtocolViolation, TransportFailure } from './errors.js';
import { StderrTail } from './stderr-tail.js';
import { minimalEnvironment } from './stdio-env.js';
import type { ClientTransport, LegacySessionWire, TransportRequest } from './transport.js';

export interface StdioClientTransportOptions {
  command: string;
  args?: string[];
  cwd?: string;
  /** Variables for the server on top of the minimal environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env?: Record<string, string | undefined>;
  /** Pass this process's whole environment instead of the minimal one (its secrets included). Default false. */
  inheritEnv?: boolean;
  /**
   * The server's stderr (its logs): shown ('inherit', the default), dropped ('ignore'), or kept quietly and its last
   * lines told when the server exits ('tail').
   */
  stderr?: 'inherit' | 'ignore' | 'tail';
  /** Longest line accepted from the server (a longer one fails the requests in flight). Default 16 MiB. */
  maxLineBytes?: number;
  /** How long to wait for the server to exit after its stdin closes, before SIGTERM then SIGKILL. Default 2000 ms. */
  shutdownGraceMs?: number;
}

interface Pending {
  resolve: (r: JsonRpcResponse) => void;
  reject: (e: Error) => void;
  onNotification: TransportRequest['onNotification'];
  onServerRequest: TransportRequest['onServerRequest'];
  progressToken: unknown;
}

export class StdioClientTransport implements ClientTransport {
  readonly kind = 'stdio' as const;
  readonly label: string;
  private readonly options: StdioClientTransportOptions;
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly lines: LineSplitter;
  private exited: Promise<void> | undefined;
  private closed = false;
  /** Set once the server has exited: later requests fail with it rather than starting the server again. */
  private dead: TransportFailure | undefined;
  private readonly tail = new StderrTail();
  /** Notifications not tied to a request in flight (e.g. log messages) go here. */
  onNotification: ((n: JsonRpcNotification) => void) | undefined;
  /** Told once when the server exits (or cannot be run) without close() asking it to: a supervisor starts another. */
  onExit: ((failure: TransportFailure) => void) | undefined;
  /** Legacy sessions: answers server requests that arrive when no single request is in flight. */
  onServerRequest: TransportRequest['onServerRequest'];
  private legacySession = false;
  /** Set while this turn's writes are held back to leave together (write()). */
  private corked = false;

  /** Legacy sessions over stdio: the process is the session; the server may send requests. */
  readonly legacy: LegacySessionWire = {
    beginSession: () => {
      this.legacySession = true;
    },
    resetSession: () => {
      this.legacySession = false;
    },
    notify: async (notification) => {
      if (this.dead) throw this.dead;
      this.write(this.start(), notification);
    },
    listen: (answer) => {
      this.onServerRequest = answer;
    },
  };

  constructor(options: StdioClientTransportOptions) {
    this.options = options;
    this.label = [options.command, ...(options.args ?? [])].join(' ');
    // Built here, so that a maxLineBytes that is no cap (NaN, 0) fails now, naming the option.
    this.lines = new LineSplitter(options.maxLineBytes ?? CLIENT_DEFAULTS.maxResponseBytes, {
      line: (line) => this.onLine(line),
      overflow: () =>
        this.failAll(new ProtocolViolation('server wrote a line longer than the limit on stdout')),
    });
  }

  /** The last lines of the server's stderr, when `stderr: 'tail'` (else []). */
  stderrTail(): string[] {
    return this.tail.lines();
  }

  private exitMessage(code: number | null, sig: NodeJS.Signals | null): string {
    const how = sig ? `signal ${sig}` : `code ${code}`;
    const lines = this.tail.lines();
    return lines.length === 0
      ? `server process exited (${how})`
      : `server process exited (${how}); its last words on stderr:\n${lines.map((l) => `  ${l}`).join('\n')}`;
  }

  /** Signal the server's whole process group (its children too); the child alone where there are no groups. */
  private signal(child: ChildProcessWithoutNullStreams, sig: NodeJS.Signals): void {
    if (process.platform !== 'win32' && child.pid !== undefined) {
      try {
        process.kill(-child.pid, sig);
        return;
      } catch {
        // No such group any more: every process in it has exited.
        return;
      }
    }
    child.kill(sig);
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const mode = this.options.stderr ?? 'inherit';
    const child = spawn(this.options.command, this.options.args ?? [], {
      cwd: this.options.cwd,
      env: this.options.inheritEnv
        ? { ...process.env, ...this.options.env }
        : minimalEnvironment(this.options.env),
      stdio: ['pipe', 'pipe', mode === 'tail' ? 'pipe' : mode],
      // Its own process group: a grandchild holding stdout open is ended with it (see close()).
      detached: process.platform !== 'win32',
    }) as unknown as ChildProcessWithoutNullStreams;
    this.child = child;
    if (mode === 'tail') child.stderr.on('data', (chunk: Buffer) => this.tail.push(chunk));
    let exitedResolve!: () => void;
    this.exited = new Promise((resolve) => {
      exitedResolve = resolve;
    });
    child.stdout.on('data', (chunk: Buffer) => this.lines.push(chunk));
    child.stdin.on('error', () => {}); // EPIPE when the child died; reported through 'exit' below
    child.once('error', (error) => {
      this.dead = new TransportFailure(`cannot run ${this.label}: ${error.message}`);
      this.failAll(this.dead);
      this.tellExit(this.dead);
      exitedResolve();
    });
    child.once('exit', (code, sig) => {
      // What it wrote just before exiting may still be in the pipe: tell the requests once stdout and stderr are
      // drained ('close'), or at once if a process it left behind keeps them open.
      const report = () => {
        this.dead ??= new TransportFailure(this.exitMessage(code, sig));
        this.failAll(this.dead);
        this.tellExit(this.dead);
      };
      let reported = false;
      child.once('close', () => {
        if (!reported) report();
        reported = true;
      });
      // Whatever it started goes with it: a grandchild must not outlive the server (or keep our pipes open).
      this.signal(child, 'SIGKILL');
      // A process outside the group (one that called setsid) may still hold the pipes: stop waiting for them.
      setTimeout(() => {
        if (reported) return;
        reported = true;
        report();
        child.stdout.destroy();
        child.stderr?.destroy();
      }, 1000).unref();
      exitedResolve();
    });
    return child;
  }

  /** Whether the server has exited (or could not be run): a request now fails at once. */
  get isDead(): boolean {
    return this.dead !== undefined;
  }

  private tellExit(failure: TransportFailure): void {
    if (this.closed) return;
    const told = this.onExit;
    this.onExit = undefined;
    told?.(failure);
  }

  private onLine(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // stdout must carry only MCP messages; an unreadable line cannot be correlated, so every request fails.
      this.failAll(new ProtocolViolation('server wrote a line that is not JSON on stdout'));
      return;
    }
    const m = classifyMessage(parsed);
    switch (m.kind) {
      case 'invalid':
        this.failAll(new ProtocolViolation(`invalid JSON-RPC message on stdout: ${m.reason}`));
        return;
      case 'request': {
        // Legacy sessions: the server asks mid-call; the request in flight (if only one) or the transport answers.
        const only = this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
        const answer = only?.onServerRequest ?? this.onServerRequest;
        if (!this.legacySession || !answer) {
          this.failAll(
            new ProtocolViolation(
              'server sent a JSON-RPC request (2026-07-28 servers must use MRTR instead)',
            ),
          );
          return;
        }
        void answer(m.request).then(
          (reply) => {
            if (this.child) this.write(this.child, reply);
          },
          // The answerer's Errors pass as they are; the Error wrap is only a guard for a non-Error rejection.
          (error: unknown) => this.failAll(error instanceof Error ? error : new Error(String(error))),
        );
        return;
      }
      case 'notification': {
        const n = m.notification;
        const token = (n.params as JsonObject | undefined)?.progressToken;
        if (n.method === 'notifications/progress' && token !== undefined) {
          for (const p of this.pending.values()) if (p.progressToken === token) p.onNotification?.(n);
          return;
        }
        // A list change is about the server, never about the request in flight: it goes to the transport's listener.
        if (this.pending.size === 1 && !n.method.endsWith('/list_changed')) {
          for (const p of this.pending.values()) p.onNotification?.(n);
          return;
        }
        this.onNotification?.(n);
        return;
      }
      case 'response': {
        const id = m.response.id;
        const p = id === undefined || id === null ? undefined : this.pending.get(id);
        if (!p) {
          // An error without an id answers an unreadable request; with several in flight we cannot tell which.
          if ('error' in m.response && this.pending.size === 1) {
            for (const [only, entry] of this.pending) {
              this.pending.delete(only);
              entry.resolve(m.response);
            }
          }
          return;
        }
        this.pending.delete(id as RequestId);
        p.resolve(m.response);
      }
    }
  }

  private failAll(error: Error): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(error);
    }
  }

  send(request: TransportRequest): Promise<JsonRpcResponse> {
    if (this.closed) return Promise.reject(new TransportFailure('transport is closed'));
    if (this.dead) return Promise.reject(this.dead);
    const { message, signal } = request;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.pending.has(message.id))
      return Promise.reject(new InvalidArgumentError(`request id ${message.id} is already in flight`));
    const child = this.start();
    const meta = message.params?._meta as JsonObject | undefined;
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(message.id)) return;
        const cancel = {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: message.id, reason: 'cancelled by the client' },
        };
        this.write(child, cancel);
        reject(abortError(signal as AbortSignal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(message.id, {
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
        onNotification: request.onNotification,
        onServerRequest: request.onServerRequest,
        progressToken: meta?.progressToken,
      });
      this.write(child, message);
    });
  }

  /**
   * One message on the server's stdin. The messages of one turn of the event loop (32 callers' requests arriving
   * together) leave in one pipe write: the pipe is corked at the first and uncorked once that turn's I/O is done.
   */
  private write(child: ChildProcessWithoutNullStreams, message: unknown): void {
    const stdin = child.stdin;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      setImmediate(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(`${JSON.stringify(message)}\n`);
  }

  /**
   * Shut down as stdio.mdx says: close stdin, wait, then SIGTERM, then SIGKILL — sent to the server's process group,
   * so nothing it started outlives it.
   */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child || !this.exited) return;
    const grace = this.options.shutdownGraceMs ?? 2000;
    const wait = (ms: number) =>
      Promise.race([
        this.exited?.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
      ]);
    child.stdin.end();
    if (!(await wait(grace))) {
      this.signal(child, 'SIGTERM');
      if (!(await wait(grace))) {
        this.signal(child, 'SIGKILL');
        await wait(grace);
      }
    }
    // The server is gone; anything still in its group is not.
    this.signal(child, 'SIGKILL');
    child.stdout.destroy();
    child.stderr?.destroy();
  }
}
