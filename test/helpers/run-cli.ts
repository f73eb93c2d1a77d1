import { spawn } from 'node:child_process';

export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Output is always text: accepted so a spawnSync call reads the same. */
  encoding?: 'utf8';
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** Milliseconds before the child is killed (SIGTERM), as spawnSync's `timeout`. */
  timeout?: number;
}

/**
 * Runs a command to its end, like spawnSync, without blocking the test's event loop: a worker blocked for a minute
 * misses vitest's own messages and fails the whole run ("Timeout calling onTaskUpdate").
 */
export function runCommand(command: string, args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = options.timeout ? setTimeout(() => child.kill('SIGTERM'), options.timeout) : undefined;
    child.once('error', reject);
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    // A child that exits before reading its input closes the pipe: that is its answer, not the test's error.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
}

/** `mrtr ARGS` from the built CLI in dist/, run from the checkout. */
export function runMrtr(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return runCommand(process.execPath, ['dist/cli/main.js', ...args], options);
}
