// `mrtr serve` as a real child process: resolves with its URL once it prints "listening on", and is killed when the
// test ends.
import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';

export interface ServedCli {
  url: string;
  stderr: () => string;
  /** SIGTERM, then wait for the process to end (it drains, seals its audit checkpoint and closes its stores). */
  stop: () => Promise<void>;
}

export function serveCli(args: string[]): Promise<ServedCli> {
  const child = spawn(process.execPath, ['dist/cli/main.js', 'serve', ...args]);
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve({ url: m[1]!, stderr: () => stderr, stop });
    });
    child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
}
