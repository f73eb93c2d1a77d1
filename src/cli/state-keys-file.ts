// `--state-keys-file PATH` on `mrtr serve`: the requestState keys kept in a file of their own (0600), made on first
// use. For a demo on one machine (`npm start`), so that restarts keep open flows working and nobody is warned about
// missing keys on every start; a fleet gives every instance the same MRTR_STATE_KEYS instead.
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateKeySpec, Keyring } from '../state/index.js';

export function keyringFromFile(
  path: string,
  say: (line: string) => void,
): { keyring: Keyring } | { error: string } {
  let spec: string;
  try {
    spec = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return { error: `cannot read --state-keys-file ${path}: ${(error as Error).message}` };
    spec = generateKeySpec();
    try {
      mkdirSync(dirname(path), { recursive: true });
      // wx: never overwrite a file another process made in the meantime.
      writeFileSync(path, `${spec}\n`, { mode: 0o600, flag: 'wx' });
    } catch (writeError) {
      if ((writeError as NodeJS.ErrnoException).code === 'EEXIST') return keyringFromFile(path, say);
      return { error: `cannot write --state-keys-file ${path}: ${(writeError as Error).message}` };
    }
    say(
      `mrtr serve: made new requestState keys in ${path} (mode 0600; keep it secret, and out of version control)`,
    );
  }
  // A key file others can read is a key others have: tighten it rather than serve with it as it is.
  if ((statSync(path).mode & 0o077) !== 0) {
    chmodSync(path, 0o600);
    say(`mrtr serve: ${path} was readable by others; its mode is now 0600`);
  }
  try {
    return { keyring: Keyring.fromSpec(spec) };
  } catch (error) {
    return { error: `invalid keys in --state-keys-file ${path}: ${(error as Error).message}` };
  }
}
