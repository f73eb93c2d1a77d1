// A secret the gateway holds (a static upstream token, its own client secret), read once at start from a variable
// or a file: a wrong name or path fails the start, naming it, rather than the first request.
import { readFileSync } from 'node:fs';
import { GatewayConfigError } from './errors.js';

export interface SecretSource {
  env?: string | undefined;
  file?: string | undefined;
}

/**
 * The secret `source` names (`what` says whose, for the message). A file's content is trimmed (a trailing newline
 * is not part of a token); a variable's is taken as it is. Unset, unreadable or empty: GatewayConfigError.
 */
export function readSecret(source: SecretSource, what: string, env: NodeJS.ProcessEnv = process.env): string {
  if (source.env !== undefined && source.file !== undefined)
    throw new GatewayConfigError(`${what}: give a variable or a file, not both`);
  if (source.env !== undefined) {
    const value = env[source.env];
    if (value === undefined) throw new GatewayConfigError(`${what}: the variable ${source.env} is not set`);
    if (value === '') throw new GatewayConfigError(`${what}: the variable ${source.env} is empty`);
    return value;
  }
  if (source.file !== undefined) {
    let content: string;
    try {
      content = readFileSync(source.file, 'utf8');
    } catch (error) {
      throw new GatewayConfigError(
        `${what}: the file ${source.file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    const value = content.trim();
    if (value === '') throw new GatewayConfigError(`${what}: the file ${source.file} is empty`);
    return value;
  }
  throw new GatewayConfigError(`${what}: give a variable (env) or a file`);
}
