// `mrtr serve` as a child process that outlives one test: ready once it prints "listening on", stopped by the
// caller (SIGKILL for a crash, SIGTERM for a drain), with its stderr kept for assertions.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '../../dist/cli/main.js');

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** SIGKILL (the default: nothing to drain in a test) and wait for the exit. */
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

export function spawnServe(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ServeProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ url: m[1] as string, child, stderr: () => stderr, stop });
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`serve exited early (${code ?? signal}): ${stderr}`)),
    );
  });
}
