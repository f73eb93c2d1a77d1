// The signal a round uses to become a task.

/**
 * Thrown by `ctx.startTask()` (or before the handler, for `start: 'call'`) in a round whose client declared the
 * extension: the round stops before anything else runs, its guards let go of its state, and tools/call answers with a
 * task that runs the same round again on the server's side.
 */
export class TaskStart {
  constructor(
    /** The id the task will have: noted in the round's audit event before the task exists. */
    readonly taskId: string,
  ) {}
}
