// Errors the flow room throws at handler authors, each with a stable code.
import { MrtrError } from '../protocol/index.js';
import type { FlowJournal } from './journal.js';

/** A flow used in a way that cannot work (an empty choice, a form zod cannot send, two questions on one key). */
export class FlowUsageError extends MrtrError {
  override readonly name = 'FlowUsageError';
  declare readonly code: 'ERR_FLOW_USAGE';
  constructor(message: string) {
    super('ERR_FLOW_USAGE', message);
  }
}

/**
 * Thrown to stop a round where it stands so that it can go on elsewhere (a call that becomes a task). The flow fills
 * in `journal` — the questions answered and steps run so far — once every running step has settled, so that whoever
 * continues the round finds them done instead of running them again.
 */
export class FlowPause extends Error {
  override readonly name: string = 'FlowPause';
  /** What the round resolved before it paused; undefined when it never touched `ask`. */
  journal: FlowJournal | undefined;
}
