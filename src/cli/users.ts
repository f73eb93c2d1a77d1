// `mrtr users totp <subject>`: enrol a person's authenticator app for step-up. Writes a new secret to the TOTP
// secrets file (mode 0600; the server reads it on every check, so no restart is needed) and prints the otpauth://
// URI and a QR code to scan. Re-running it replaces the secret (it says so, naming when the old one was enrolled):
// the old app stops working.
import { parseArgs } from 'node:util';
import qrcode from 'qrcode-terminal';
import { enrolTotp } from '../controls/index.js';
import { makeParentDirectory } from '../files/index.js';
import { DEFAULT_TOTP_FILE } from './serve.js';

const USAGE = `usage: mrtr users totp <subject> [--totp FILE] [--label NAME] [--no-qr]
  enrol <subject>'s authenticator app for step-up: writes a new secret to FILE (default ${DEFAULT_TOTP_FILE},
  mode 0600, read by mrtr serve --totp FILE) and prints the otpauth:// URI and a QR code to scan
`;

const SUBJECT = /^[\x21-\x7e]{1,200}$/;

export async function usersCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'totp') {
    process.stderr.write(`mrtr users: unknown command '${sub}'\n\n${USAGE}`);
    return 2;
  }
  let values: { totp?: string; label?: string; 'no-qr'?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: {
        totp: { type: 'string', default: DEFAULT_TOTP_FILE },
        label: { type: 'string', default: 'mrtr' },
        'no-qr': { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr users totp: ${(error as Error).message}\n`);
    return 2;
  }
  const [subject, ...extra] = positionals;
  if (subject === undefined || extra.length > 0 || !SUBJECT.test(subject)) {
    process.stderr.write(
      `mrtr users totp: give exactly one subject (printable, no spaces), got ${positionals.length ? JSON.stringify(positionals.join(' ')) : 'none'}\n\n${USAGE}`,
    );
    return 2;
  }
  const file = values.totp ?? DEFAULT_TOTP_FILE;
  let uri: string;
  let replaced: { enrolledAt: string } | undefined;
  try {
    makeParentDirectory(file);
    ({ uri, replaced } = enrolTotp(file, subject, values.label ?? 'mrtr'));
  } catch (error) {
    process.stderr.write(`mrtr users totp: cannot write ${file}: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(
    `Enrolled ${subject} in ${file}. Scan this with an authenticator app, or add the URI:\n${uri}\n`,
  );
  if (!values['no-qr']) {
    const qr = await new Promise<string>((resolve) => qrcode.generate(uri, { small: true }, resolve));
    process.stdout.write(`${qr}\n`);
  }
  if (replaced)
    process.stderr.write(
      `mrtr users totp: replaced ${subject}'s earlier secret (enrolled ${replaced.enrolledAt}): the app enrolled with it no longer gives valid codes\n`,
    );
  process.stdout.write('Keep the file private (mode 0600).\n');
  return 0;
}
