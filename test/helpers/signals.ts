// Explicit signals for tests: act when something has happened, never after a guessed delay.

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
  /** Whether resolve or reject was called. */
  readonly settled: boolean;
}

/** A promise whose resolve and reject are called from outside, e.g. by a handler when it starts. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  let settled = false;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return {
    promise,
    resolve: (value) => {
      settled = true;
      resolve(value);
    },
    reject: (reason) => {
      settled = true;
      reject(reason);
    },
    get settled() {
      return settled;
    },
  };
}

/** Things that happened, in order; `seen(name)` resolves once `name` has been recorded (at once if it was). */
export class Happenings {
  readonly list: string[] = [];
  private readonly waiting = new Map<string, Deferred<void>>();

  record(name: string): void {
    this.list.push(name);
    this.waiting.get(name)?.resolve();
    this.waiting.delete(name);
  }

  seen(name: string): Promise<void> {
    if (this.list.includes(name)) return Promise.resolve();
    let d = this.waiting.get(name);
    if (!d) {
      d = deferred();
      this.waiting.set(name, d);
    }
    return d.promise;
  }
}

/** How a promise has settled so far, readable synchronously (to check that something has not happened yet). */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly value: T | undefined } {
  const state = { settled: false, value: undefined as T | undefined };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}
