// Starts a runtime (Bun, Deno, workerd) as a child process and resolves with its URL once it prints that it listens:
// no sleeps; a bounded wait that fails with what the child said, and the child is killed when the file's tests end.
import { spawn } from 'node:child_process';

export interface RuntimeChild {
  url: string;
  stop(): Promise<void>;
}

const READY = /listening on (http:\/\/127\.0\.0\.1:\d+)/i;
/** A cold start loads the whole server; on a loaded 2-core CI machine that can take seconds. */
const START_LIMIT_MS = 15_000;

export function startRuntime(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<RuntimeChild> {
  // Its own process group: a launcher (Deno's npm package runs the real binary as its child) dies with what it
  // started, so no runtime outlives the test file.
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  };
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    killGroup();
    await exited;
  };
  process.once('exit', killGroup);
  let said = '';
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(limit);
      void stop();
      reject(new Error(`${command} ${why}; it said:\n${said}`));
    };
    const limit = setTimeout(() => fail(`did not listen within ${START_LIMIT_MS} ms`), START_LIMIT_MS);
    const read = (chunk: Buffer) => {
      said += chunk.toString();
      const ready = READY.exec(said);
      if (ready) {
        clearTimeout(limit);
        resolve({ url: ready[1]!, stop });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before it listened`));
  });
}
