// Where TOTP secrets live: a JSON file (mode 0600) that `mrtr users totp <sub>` writes and the server reads on each
// check, so a person enrolled after start-up can step up without a restart. Keyed by subject: a server accepts the
// tokens of one issuer.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Secret, TOTP } from 'otpauth';
import { CorruptDataError } from '../protocol/index.js';

export interface TotpSecrets {
  /** The base32 secret enrolled for `subject`, or undefined. */
  secretOf(subject: string): string | undefined | Promise<string | undefined>;
}

interface SecretsFile {
  version: 1;
  users: Record<string, { secret: string; enrolledAt: string }>;
}

function readSecretsFile(path: string): SecretsFile {
  if (!existsSync(path)) return { version: 1, users: {} };
  const notOurs = () => new CorruptDataError(`${path} is not a TOTP secrets file (version 1)`);
  let parsed: SecretsFile;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as SecretsFile;
  } catch (error) {
    if (error instanceof SyntaxError) throw notOurs();
    throw error;
  }
  if (parsed?.version !== 1 || typeof parsed.users !== 'object' || parsed.users === null) throw notOurs();
  return parsed;
}

/** Secrets read from `path` on every check. */
export function totpSecretsFile(path: string): TotpSecrets {
  return {
    secretOf(subject) {
      const users = readSecretsFile(path).users;
      return Object.hasOwn(users, subject) ? users[subject]!.secret : undefined;
    },
  };
}

/**
 * Enrol (or re-enrol) `subject`: a new random secret written to `path`; returns the otpauth:// URI, and when the
 * subject had a secret before, when that one was enrolled (its app stops working now).
 */
export function enrolTotp(
  path: string,
  subject: string,
  issuerLabel = 'mrtr',
): { uri: string; secret: string; replaced?: { enrolledAt: string } } {
  const file = readSecretsFile(path);
  const earlier = Object.hasOwn(file.users, subject) ? file.users[subject] : undefined;
  const secret = new Secret({ size: 20 });
  // Defined, not assigned: `users.__proto__ = …` would set the object's prototype, and JSON.stringify would drop it.
  Object.defineProperty(file.users, subject, {
    value: { secret: secret.base32, enrolledAt: new Date().toISOString() },
    enumerable: true,
    writable: true,
    configurable: true,
  });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
  const totp = new TOTP({
    issuer: issuerLabel,
    label: subject,
    secret,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  });
  const enrolled = { uri: totp.toString(), secret: secret.base32 };
  return earlier
    ? { ...enrolled, replaced: { enrolledAt: String(earlier.enrolledAt ?? 'at an unknown time') } }
    : enrolled;
}
