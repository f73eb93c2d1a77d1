// `--state-keys-file PATH` on `mrtr serve`: the requestState keys kept in a file of their own (0600), made on first
// use, so that restarts keep open flows working; a fleet gives every instance the same MRTR_STATE_KEYS instead.
import { generateKeySpec, Keyring } from '../state/index.js';
import { secretFromFile } from './secret-file.js';

export function keyringFromFile(
  path: string,
  say: (line: string) => void,
): { keyring: Keyring } | { error: string } {
  const read = secretFromFile(
    path,
    { flag: '--state-keys-file', what: 'requestState keys', make: generateKeySpec, parse: Keyring.fromSpec },
    say,
  );
  return 'error' in read ? read : { keyring: read.value };
}
