// Whether a tools/call that may become a task is let in: a principal at its limit of unfinished tasks is turned
// away before the call does any work, unless the tool may also run as a plain call.
import { type Result, RoundRefused } from '../../protocol/index.js';
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import type { TaskService } from '../tasks/task-service.js';
import type { Call, Core } from './method.js';
import { runToolRound, type ToolRun } from './tools-call-round.js';

/** Admits the run (only a run that may become a task is checked), then runs its round. */
export function admitThenRun(core: Core, call: Call, run: ToolRun): MaybePromise<Result> {
  const admitted = run.becomesTask && core.tasks ? admit(core.tasks, call, run) : run;
  return thenOrNow(admitted, (admittedRun) => runToolRound(core, call, admittedRun));
}

/** The run as let in: as asked, or, refused for too many tasks, as a plain call (as for a client without tasks). */
function admit(tasks: TaskService, call: Call, run: ToolRun): Promise<ToolRun> {
  return tasks.admits(call.env.principal).then(
    () => run,
    (error: unknown) => {
      if (
        !(error instanceof RoundRefused) ||
        error.reason !== 'too_many_tasks' ||
        run.tool.task?.support !== 'optional'
      )
        throw error;
      call.trace?.note({ task: { created: false, refused: 'too_many_tasks', ranAsPlainCall: true } });
      return { ...run, declared: false, becomesTask: false };
    },
  );
}
