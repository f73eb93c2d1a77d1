// Moves SQLite's WAL checkpoints off the serving thread. In WAL mode with synchronous=NORMAL a commit never waits
// for the disk; a checkpoint does (it syncs the WAL, copies it into the database and syncs that). better-sqlite3 is
// synchronous, so a checkpoint run by a commit would stall every request of the process while the disk works. A
// worker thread with its own connection checkpoints on a timer instead, beside the writers (PASSIVE never blocks
// them), and the serving connection turns its automatic checkpoints off.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Plain CommonJS evaluated in the worker: no file to resolve, so it runs the same from src/ (tests) and dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: the next tick tries again */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage('closed');
});
`;

export class SqliteCheckpointer {
  readonly #worker: Worker;

  constructor(path: string, intervalMs: number) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    // Not the parent's flags: under --input-type=module the CommonJS source would be read as a module.
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { driver, path, intervalMs },
    });
    // A checkpointer never keeps a process alive, and its failure never takes the store down: SQLite then
    // checkpoints at close, and the WAL only grows until then.
    this.#worker.unref();
    this.#worker.on('error', () => undefined);
  }

  /** One last checkpoint, then the worker ends. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      this.#worker.once('message', () => resolve());
      this.#worker.once('exit', () => resolve());
    });
    this.#worker.postMessage('stop');
    await closed;
    await this.#worker.terminate();
  }
}
