// A round that stops where it stands to go on elsewhere, carrying what it resolved so far.
import { FlowPause } from '../../flow/internal.js';

/**
 * Thrown from a handler's round to continue it somewhere else (a task). The pipeline seals what the round resolved
 * before it stopped — answers taken and steps run — into `requestState`, bound like any round's state and living
 * `stateTtlMs`, so the round that continues it opens that state and finds them done.
 */
export class RoundPause extends FlowPause {
  override readonly name: string = 'RoundPause';
  /** The sealed state to continue from; undefined when the round never touched `ask` (nothing to carry). */
  requestState: string | undefined;
  constructor(
    message: string,
    /** How long the sealed state lives: as long as whatever continues the round may take to start. */
    readonly stateTtlMs: number,
  ) {
    super(message);
  }
}
