// `mrtr serve` as a real child process: resolves with its URL once it prints "listening on", and is killed when the
// test ends.
import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';

export function serveCli(args: string[]): Promise<{ url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['dist/cli/main.js', 'serve', ...args]);
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve({ url: m[1]!, stderr: () => stderr });
    });
    child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
}
