// `mrtr …` as a user types it, for the task tests: run to its end, or started and watched (stderr as it arrives, so
// a test can act when a line appears — e.g. press Ctrl-C once the task is announced).
import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';
import { CLI } from '../client/helpers.js';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  /** Resolves once stderr contains `text` (at once if it already does). */
  saidOnStderr(text: string): Promise<void>;
  stderr(): string;
  interrupt(): void;
  done: Promise<Finished>;
}

export function start(args: string[]): Running {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  const waiting: { text: string; done: () => void }[] = [];
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of waiting.splice(0)) {
      if (stderr.includes(w.text)) w.done();
      else waiting.push(w);
    }
  });
  const done = new Promise<Finished>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    saidOnStderr: (text) =>
      stderr.includes(text)
        ? Promise.resolve()
        : new Promise((resolve) => waiting.push({ text, done: resolve })),
    stderr: () => stderr,
    interrupt: () => child.kill('SIGINT'),
    done,
  };
}

export const mrtr = (...args: string[]): Promise<Finished> => start(args).done;

/** The task id `mrtr call` announced on stderr ("task <id> — resume with: …"). */
export function announcedTask(stderr: string): string {
  const m = /^task (\S+) — resume with: \.\/bin\/mrtr task get \1 /m.exec(stderr);
  if (!m?.[1]) throw new Error(`no task was announced on stderr:\n${stderr}`);
  return m[1];
}
