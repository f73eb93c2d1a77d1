// Errors the flow room throws at handler authors, each with a stable code.

/** A flow used in a way that cannot work (an empty choice, a form zod cannot send, two questions on one key). */
export class FlowUsageError extends Error {
  override readonly name = 'FlowUsageError';
  readonly code = 'ERR_FLOW_USAGE';
}
