// Every control's decision on the round's span, recorded once here around each control's link rather than in every
// control: calling next() is "allowed", an answer in the handler's place "answered" (or "refused" when it is a tool
// error, a policy's deny), a throw "refused" with its reason code, and a link still waiting when the round asks for
// input "asked". Untraced and unsampled rounds go straight to the link.
import { FlowEnded } from '../../flow/index.js';
import { McpError, type Result, RoundRefused } from '../../protocol/index.js';
import type { MaybePromise } from '../maybe-async.js';
import type { RoundLink } from './link.js';

/** Why a control refused, as a code (never a message: it may quote what the caller sent). */
function reasonOf(error: unknown): string {
  // A guard's refusal, or a flow ended by a person (declined, cancelled): their reason codes.
  if (error instanceof RoundRefused || error instanceof FlowEnded) return error.reason;
  if (error instanceof McpError) {
    const reason = (error.data as { reason?: unknown } | undefined)?.reason;
    return typeof reason === 'string' ? reason : `code ${error.code}`;
  }
  return error instanceof Error ? error.name : 'error';
}

/** `link`, its decision recorded as the `control` event when the round is traced. */
export function decided(link: RoundLink, control: string = link.name): RoundLink {
  return {
    name: link.name,
    handle(round, next) {
      const span = round.span;
      // An unsampled round's span records nothing: no decision is built for it.
      if (span === undefined || !span.recording) return link.handle(round, next);
      const decide = span.judging(control);
      let passed = false;
      const onward = () => {
        passed = true;
        decide('allowed');
        return next();
      };
      const answered = (result: Result) => {
        if (!passed) decide(result.isError === true ? 'refused' : 'answered');
        return result;
      };
      const refused = (error: unknown): never => {
        if (!passed) decide('refused', reasonOf(error));
        throw error;
      };
      let result: MaybePromise<Result>;
      try {
        result = link.handle(round, onward);
      } catch (error) {
        return refused(error);
      }
      return result instanceof Promise ? result.then(answered, refused) : answered(result);
    },
  };
}
