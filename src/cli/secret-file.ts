// A secret `mrtr serve` keeps in a file of its own (0600), made on first use: the requestState keys
// (`--state-keys-file`) and the audit signing key (`--audit-key-file`). For a demo on one machine (`npm start`), so that
// restarts keep what they need and nobody is warned about missing keys on every start; a fleet gives every instance
// the same keys through the environment instead.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { makeParentDirectory } from '../files/index.js';

export interface SecretFile<T> {
  /** The flag, for messages: `--state-keys-file`. */
  flag: string;
  /** What the secret is, for the line said when the file is made: `requestState keys`. */
  what: string;
  make(): string;
  parse(text: string): T;
}

export function secretFromFile<T>(
  path: string,
  secret: SecretFile<T>,
  say: (line: string) => void,
): { value: T; made: boolean } | { error: string } {
  let text: string;
  let made = false;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return { error: `cannot read ${secret.flag} ${path}: ${(error as Error).message}` };
    text = secret.make();
    try {
      makeParentDirectory(path);
      // wx: never overwrite a file another process made in the meantime.
      writeFileSync(path, `${text}\n`, { mode: 0o600, flag: 'wx' });
    } catch (writeError) {
      if ((writeError as NodeJS.ErrnoException).code === 'EEXIST') return secretFromFile(path, secret, say);
      return { error: `cannot write ${secret.flag} ${path}: ${(writeError as Error).message}` };
    }
    made = true;
    say(
      `mrtr serve: made new ${secret.what} in ${path} (mode 0600; keep it secret, and out of version control)`,
    );
  }
  // A key file others can read is a key others have: tighten it rather than serve with it as it is.
  if ((statSync(path).mode & 0o077) !== 0) {
    chmodSync(path, 0o600);
    say(`mrtr serve: ${path} was readable by others; its mode is now 0600`);
  }
  try {
    return { value: secret.parse(text), made };
  } catch (error) {
    return { error: `invalid ${secret.what} in ${secret.flag} ${path}: ${(error as Error).message}` };
  }
}
