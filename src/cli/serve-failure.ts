// What `mrtr serve` says when the server cannot start: a configuration that does not fit together is a usage
// problem (exit 2, named as such), not a listening problem — the server checks how its options combine only when it
// starts, so both kinds of error surface at the same place.
import { InvalidOptionError } from '../server/index.js';

export function explainStartFailure(
  error: unknown,
  doing: string,
  fixture: string,
  command = 'serve',
): { message: string; exitCode: number } {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidOptionError)
    return {
      message: `mrtr ${command}: the configuration of fixture '${fixture}' does not fit together: ${detail}`,
      exitCode: 2,
    };
  // A gateway config or its flags that cannot work together (by its stable code: serve does not load the gateway).
  if ((error as { code?: unknown } | undefined)?.code === 'ERR_GATEWAY_CONFIG')
    return { message: `mrtr ${command}: ${detail}`, exitCode: 2 };
  return { message: `mrtr ${command}: ${doing}: ${detail}`, exitCode: 1 };
}
