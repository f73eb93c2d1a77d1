// A control's decision on the round's span when the round is traced: passed is "allowed", a refusal "refused" with
// its reason code; a control still waiting when the round asks for input is recorded as "asked" by the round itself.
import { FlowEnded } from '../flow/index.js';
import type { ControlContext } from './context.js';

export function judged<T>(ctx: ControlContext, control: string, work: () => Promise<T>): Promise<T> {
  const decide = ctx.audit.judging?.(control);
  if (decide === undefined) return work();
  return work().then(
    (value) => {
      decide('allowed');
      return value;
    },
    (error: unknown) => {
      decide(
        'refused',
        error instanceof FlowEnded ? error.reason : error instanceof Error ? error.name : 'error',
      );
      throw error;
    },
  );
}
