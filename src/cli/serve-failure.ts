// What `mrtr serve` says when the server cannot start: a configuration that does not fit together is a usage
// problem (exit 2, named as such), not a listening problem — the server checks how its options combine only when it
// starts, so both kinds of error surface at the same place.
import { InvalidOptionError } from '../server/index.js';

export function explainStartFailure(
  error: unknown,
  doing: string,
  fixture: string,
): { message: string; exitCode: number } {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidOptionError)
    return {
      message: `mrtr serve: the configuration of fixture '${fixture}' does not fit together: ${detail}`,
      exitCode: 2,
    };
  return { message: `mrtr serve: ${doing}: ${detail}`, exitCode: 1 };
}
