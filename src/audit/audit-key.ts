// The Ed25519 audit key that signs checkpoints, in the key encoding of signed notes (C2SP signed-note, as in
// golang.org/x/mod/sumdb/note): a signer key `PRIVATE+KEY+<name>+<key id hex>+<base64(0x01 ‖ seed)>` and a
// verifier key `<name>+<key id hex>+<base64(0x01 ‖ public key)>`. The key id is the first 4 bytes of
// SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key). Hand-written (node:crypto does the signing): the format is ~30 lines.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import { auditConfigError } from './errors.js';

const ED25519 = 0x01;
// DER prefixes of PKCS#8 and SPKI Ed25519 keys: the raw 32 bytes follow them.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const NAME = /^[^\s+]+$/;

/** Split at the first `count` '+' only: the base64 key at the end may itself hold '+' (as Go's note package does). */
function chop(text: string, count: number): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  for (let i = 0; i < count; i++) {
    const at = rest.indexOf('+');
    if (at < 0) return [...parts, rest];
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  return [...parts, rest];
}

function keyId(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([ED25519]), publicKey]))
    .digest()
    .subarray(0, 4);
}

export class AuditVerifier {
  readonly #key: KeyObject;
  constructor(
    readonly name: string,
    readonly id: Buffer,
    readonly publicKey: Buffer,
  ) {
    this.#key = createPublicKey({
      key: Buffer.concat([SPKI_PREFIX, publicKey]),
      format: 'der',
      type: 'spki',
    });
  }
  /** The verifier key text (`name+id+base64`). */
  get text(): string {
    return `${this.name}+${this.id.toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), this.publicKey]).toString('base64')}`;
  }
  verify(message: Buffer, signature: Buffer): boolean {
    return signature.length === 64 && verify(null, message, this.#key, signature);
  }
  static parse(text: string): AuditVerifier {
    const parts = chop(text, 2);
    if (parts.length !== 3 || !NAME.test(parts[0]!))
      throw auditConfigError('audit verifier key: expected <name>+<key id hex>+<base64 key>');
    const raw = Buffer.from(parts[2]!, 'base64');
    if (raw.length !== 33 || raw[0] !== ED25519)
      throw auditConfigError('audit verifier key: not an Ed25519 key (expected 0x01 and 32 bytes, base64)');
    const publicKey = raw.subarray(1);
    const id = keyId(parts[0]!, publicKey);
    if (id.toString('hex') !== parts[1]!.toLowerCase())
      throw auditConfigError('audit verifier key: its key id does not match its name and key');
    return new AuditVerifier(parts[0]!, id, publicKey);
  }
}

export class AuditSigner {
  readonly verifier: AuditVerifier;
  readonly #key: KeyObject;
  readonly #seed: Buffer;
  private constructor(name: string, seed: Buffer) {
    if (!NAME.test(name)) throw auditConfigError(`audit key name "${name}" must have no spaces and no '+'`);
    this.#seed = seed;
    this.#key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(this.#key).export({ format: 'der', type: 'spki' });
    const publicKey = Buffer.from(spki.subarray(SPKI_PREFIX.length));
    this.verifier = new AuditVerifier(name, keyId(name, publicKey), publicKey);
  }
  get name(): string {
    return this.verifier.name;
  }
  /** The signer key text (`PRIVATE+KEY+…`): a secret, like a state key. */
  get text(): string {
    const v = this.verifier;
    return `PRIVATE+KEY+${v.name}+${v.id.toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), this.#seed]).toString('base64')}`;
  }
  sign(message: Buffer): Buffer {
    return sign(null, message, this.#key);
  }
  /** A key derived from this one for another purpose (the redaction digests), so one secret is all a fleet shares. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#seed, Buffer.alloc(0), `mrtr audit ${purpose}`, 32));
  }
  static generate(name: string): AuditSigner {
    const { privateKey } = generateKeyPairSync('ed25519');
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    return new AuditSigner(name, Buffer.from(der.subarray(PKCS8_PREFIX.length)));
  }
  static parse(text: string): AuditSigner {
    const parts = chop(text, 4);
    if (parts.length !== 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY')
      throw auditConfigError(
        'audit key: expected PRIVATE+KEY+<name>+<key id hex>+<base64 seed> (mrtr audit keygen)',
      );
    const raw = Buffer.from(parts[4]!, 'base64');
    if (raw.length !== 33 || raw[0] !== ED25519)
      throw auditConfigError('audit key: not an Ed25519 key (expected 0x01 and a 32-byte seed, base64)');
    const signer = new AuditSigner(parts[2]!, Buffer.from(raw.subarray(1)));
    if (signer.verifier.id.toString('hex') !== parts[3]!.toLowerCase())
      throw auditConfigError('audit key: its key id does not match its name and key');
    return signer;
  }
}
