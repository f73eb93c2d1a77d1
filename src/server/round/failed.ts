// How a request that failed travels to its answer (answers.ts) without being thrown through the round's code.

/** A request that failed: what it threw, or — `unrecorded` — an observer that could not make room for it. */
export class Failed {
  constructor(
    readonly error: unknown,
    readonly unrecorded = false,
  ) {}
}
