// The front door's bound on what a request may nest: checked once, in the dispatcher, before any method reads the
// request. Arguments, answers and `_meta` are forms, messages and small objects; a client that nests them hundreds
// of levels deep is probing for the step that overflows (canonical JSON, the audit record, the sealed journal), so
// it is stopped before any of those steps, and before any handler, with an error that names the limit. Their size
// is bounded already by the transports (maxBodyBytes, maxLineBytes) for the message as a whole.
import { invalidParams, isJsonObject, nestsDeeperThan } from '../protocol/index.js';

/** The parts of a request's params a client fills with structured JSON of its own choosing. */
const BOUNDED = ['arguments', 'inputResponses', '_meta'] as const;

/** Throws -32602 naming the member and the limit when one of them nests deeper than `maxDepth` levels. */
export function checkInputBounds(params: unknown, maxDepth: number): void {
  if (!isJsonObject(params)) return;
  for (const name of BOUNDED) {
    const value = params[name];
    if (typeof value === 'object' && value !== null && nestsDeeperThan(value, maxDepth))
      throw invalidParams(`Invalid params: ${name} nests deeper than ${maxDepth} levels (the limit)`, {
        limit: 'maxInputDepth',
        member: name,
        maxDepth,
      });
  }
}
