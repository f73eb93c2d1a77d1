// The signal a round uses to become a task.
import { RoundPause } from '../round/pause.js';

/**
 * Thrown by `ctx.startTask()` (or before the handler, for `start: 'call'`) in a round whose client declared the
 * extension: the round stops before anything else runs, its guards let go of its state, and tools/call answers with a
 * task that continues the round on the server's side. What the round resolved before it stopped (answers, and steps
 * that ran) is sealed into `requestState` by the pipeline, so the task's first round finds them done.
 */
export class TaskStart extends RoundPause {
  override readonly name = 'TaskStart';
  constructor(
    /** The id the task will have: noted in the round's audit event before the task exists. */
    readonly taskId: string,
    /** How long the task lives: the state sealed for its first round lives as long. */
    ttlMs: number,
  ) {
    super('the call becomes a task', ttlMs);
  }
}
