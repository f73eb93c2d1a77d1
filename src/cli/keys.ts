// `mrtr keys generate`: print a new requestState key in the `kid:secret` form MRTR_STATE_KEYS takes.
import { generateKeySpec } from '../state/index.js';

const USAGE = `usage: mrtr keys generate [--kid ID]

Prints a new key as kid:secret. Give every instance of a fleet the same MRTR_STATE_KEYS, current key first:
  MRTR_STATE_KEYS="<new>,<old>"   rotate in three phases: add as accepted everywhere, make current, retire.
`;

export function keysCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub !== 'generate') {
    process.stderr.write(sub === undefined ? USAGE : `mrtr keys: unknown subcommand '${sub}'\n\n${USAGE}`);
    return 2;
  }
  let kid: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--kid' && rest[i + 1] !== undefined) kid = rest[++i];
    else {
      process.stderr.write(`mrtr keys generate: unexpected argument '${rest[i]}'\n\n${USAGE}`);
      return 2;
    }
  }
  try {
    process.stdout.write(`${generateKeySpec(kid === undefined ? {} : { kid })}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`mrtr keys generate: ${(error as Error).message}\n`);
    return 2;
  }
}
