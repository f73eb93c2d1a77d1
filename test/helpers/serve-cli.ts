// `mrtr serve` as a real child process: resolves with its URL once it prints "listening on", and is killed when the
// test ends.
import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';

export interface ServedCli {
  url: string;
  stderr: () => string;
  /** SIGTERM, then wait for the process to end (it drains, seals its audit checkpoint and closes its stores). */
  stop: () => Promise<void>;
  /** Resolves when the process has ended, whatever ended it (sends nothing). */
  exited: Promise<void>;
  /** Send the process a signal (SIGHUP: the gateway reloads its config). */
  signal: (name: NodeJS.Signals) => void;
  /** Resolves once stderr contains `text` (at once if it already does): an explicit signal, no polling. */
  saidOnStderr: (text: string) => Promise<void>;
}

export interface ServeCliOptions {
  /** Variables added to the child's environment (a client secret the config names by variable). */
  env?: Readonly<Record<string, string>>;
}

/** `command` is `serve` or `gateway` (the gateway takes serve's flags and prints the same line). */
export function serveCli(
  args: string[],
  command: 'serve' | 'gateway' = 'serve',
  options: ServeCliOptions = {},
): Promise<ServedCli> {
  const child = spawn(process.execPath, ['dist/cli/main.js', command, ...args], {
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // Started in a test: killed when it ends. Started in beforeAll: the file's afterAll stops it, and at worst the
  // test process's exit does.
  try {
    onTestFinished(kill);
  } catch {
    process.once('exit', kill);
  }
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let stderr = '';
  const waiting: Array<{ text: string; done: () => void }> = [];
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of waiting.splice(0)) {
      if (stderr.includes(w.text)) w.done();
      else waiting.push(w);
    }
  });
  const saidOnStderr = (text: string) =>
    stderr.includes(text) ? Promise.resolve() : new Promise<void>((done) => waiting.push({ text, done }));
  const signal = (name: NodeJS.Signals) => {
    child.kill(name);
  };
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve({ url: m[1]!, stderr: () => stderr, stop, exited, signal, saidOnStderr });
    });
    child.once('exit', () => reject(new Error(`${command} exited early: ${stderr}`)));
  });
}
