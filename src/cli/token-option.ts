// `--token T` or `--token-env NAME`: the bearer token a client command sends. The environment form keeps the token
// out of the command lines mrtr prints and out of process listings; either way a value no HTTP header can carry is
// a usage error naming it, not Node's "Invalid character in header content".
import { UsageError } from './cli-args.js';

export interface TokenFlags {
  token?: string;
  'token-env'?: string;
}

/** The variable a printed command line reads the token from when the person gave it with --token. */
export const DEFAULT_TOKEN_ENV = 'MRTR_TOKEN';

/** The token the flags give (undefined: none), and the variable it came from, if any. */
export function tokenFromFlags(
  flags: TokenFlags,
  env: NodeJS.ProcessEnv,
): { token: string | undefined; envName: string | undefined } {
  const name = flags['token-env'];
  if (name === undefined) {
    if (flags.token !== undefined) checkToken(flags.token, '--token');
    return { token: flags.token, envName: undefined };
  }
  if (flags.token !== undefined) throw new UsageError('give --token or --token-env, not both');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new UsageError(
      `--token-env ${JSON.stringify(name)}: expected the name of a variable, as MRTR_TOKEN`,
    );
  const token = env[name];
  if (token === undefined || token === '')
    throw new UsageError(`--token-env ${name}: ${name} is not set here (export ${name}=<your token> first)`);
  checkToken(token, `the token in ${name}`);
  return { token, envName: name };
}

/** A bearer token is visible ASCII (RFC 6750's b64token and then some): anything else cannot go in a header. */
function checkToken(token: string, source: string): void {
  if (token === '') throw new UsageError(`${source} is empty`);
  const bad = /[^\x21-\x7e]/.exec(token)?.[0];
  if (bad === undefined) return;
  const code = `U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  const shown = /[\p{L}\p{N}\p{P}\p{S}]/u.test(bad) ? `'${bad}' (${code})` : code;
  throw new UsageError(
    `${source} is not a bearer token: it holds ${shown}, which an HTTP header cannot carry. Give the token itself, or --token-env NAME to read it from a variable`,
  );
}
