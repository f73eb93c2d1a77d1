// Errors the flow room throws at handler authors, each with a stable code.
import { MrtrError } from '../protocol/index.js';

/** A flow used in a way that cannot work (an empty choice, a form zod cannot send, two questions on one key). */
export class FlowUsageError extends MrtrError {
  override readonly name = 'FlowUsageError';
  declare readonly code: 'ERR_FLOW_USAGE';
  constructor(message: string) {
    super('ERR_FLOW_USAGE', message);
  }
}
