// The console's own mistakes of configuration, thrown where it is built.
import { MrtrError } from '../protocol/index.js';

export class ConsoleUsageError extends MrtrError {
  override readonly name = 'ConsoleUsageError';
  declare readonly code: 'ERR_CONSOLE_USAGE';
  constructor(message: string) {
    super('ERR_CONSOLE_USAGE', message);
  }
}
