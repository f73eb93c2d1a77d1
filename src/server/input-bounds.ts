// The front door's bound on what a request may nest: checked once, in the dispatcher, before any method reads the
// request. Arguments, answers and `_meta` are forms, messages and small objects; a client that nests them hundreds
// of levels deep is probing for the step that overflows (canonical JSON, the audit record, the sealed journal), so
// it is stopped before any of those steps, and before any handler, with an error that names the limit. Their size
// is bounded already by the transports (maxBodyBytes, maxLineBytes) for the message as a whole.
import { invalidParams, isJsonObject, nestsDeeperThan } from '../protocol/index.js';

const tooDeepMessage = (where: string, maxDepth: number) =>
  `Invalid params: ${where} nests deeper than ${maxDepth} levels`;

const tooDeep = (member: string, where: string, maxDepth: number) =>
  invalidParams(tooDeepMessage(where, maxDepth), {
    limit: 'maxInputDepth',
    member,
    maxDepth,
  });

/**
 * Throws -32602 naming the member (each answer by its key) and the limit when the arguments, an answer or `_meta`
 * nests deeper than `maxDepth` levels.
 */
export function checkInputBounds(params: unknown, maxDepth: number): void {
  if (!isJsonObject(params)) return;
  const { arguments: args, inputResponses: answers, _meta: meta } = params;
  if (nestsDeeperThan(args, maxDepth)) throw tooDeep('arguments', 'arguments', maxDepth);
  if (nestsDeeperThan(meta, maxDepth)) throw tooDeep('_meta', '_meta', maxDepth);
  if (isJsonObject(answers)) {
    // Each answer on its own, as the round opens them: the error names the one that is too deep.
    for (const key of Object.keys(answers))
      if (nestsDeeperThan(answers[key], maxDepth))
        throw tooDeep('inputResponses', `inputResponses["${key}"]`, maxDepth);
  }
}

/**
 * What a refusal's audit event holds of the arguments: as sent, unless they nest past the limit — no record could
 * hold them (canonical JSON stops at 1000 levels) — and then what was wrong with them.
 */
export function recordableArguments(args: unknown, maxDepth: number): unknown {
  return nestsDeeperThan(args, maxDepth) ? { $refused: tooDeepMessage('arguments', maxDepth) } : args;
}
