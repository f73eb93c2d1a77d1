// Switching a SQLite file to WAL, when other processes may be opening the same fresh file at the same moment.
// The switch reads the file (a shared lock) and then needs it alone. When another connection already waits for
// its own write lock, SQLite does not call the busy handler for that upgrade — waiting could deadlock — it fails
// at once with SQLITE_BUSY whatever busy_timeout says. Three fleet instances starting on one data directory met
// this now and then. The cure is the one SQLite's documentation gives: let go and try again, here until the
// busy timeout has passed.

/** The one method of a better-sqlite3 `Database` this needs (this room loads no driver). */
export interface PragmaRunner {
  pragma(source: string): unknown;
}

export interface WalSwitchOptions {
  /** How long to keep trying, in ms: the connection's busy timeout. */
  timeoutMs: number;
  /** The clock (tests pass a fake one). */
  now?: () => number;
  /** Waits `ms` without yielding: this runs while a store or sink opens, before any request is served. */
  sleep?: (ms: number) => void;
}

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** Puts `db` in WAL mode, trying again while another process holds the lock (SQLITE_BUSY), up to the timeout. */
export function switchToWal(db: PragmaRunner, options: WalSwitchOptions): void {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepSync;
  const deadline = now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || now() >= deadline) throw error;
      // Backing off with jitter, so that processes that collided do not collide again in step.
      sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random() / 2));
    }
  }
}
