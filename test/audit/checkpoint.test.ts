// Checkpoints and audit keys: the signed-note encoding matches Go's golang.org/x/mod/sumdb/note (its documented
// example key and signature), a checkpoint verifies under its key and under no other, and any edit breaks it.
import { describe, expect, it } from 'vitest';
import {
  AuditSigner,
  AuditVerifier,
  GENESIS,
  readCheckpoint,
  sealCheckpoint,
  splitNotes,
} from '../../src/audit/index.js';

// The example in the documentation of Go's note package.
const GO_SIGNER = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VERIFIER = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_SIGNATURE =
  'x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=';

const HEAD = { seq: 42, hash: 'ab'.repeat(32) };
const NOW = new Date('2026-07-28T12:00:00.000Z');

describe('audit keys', () => {
  it('read and write the note key encoding exactly as Go does', () => {
    const signer = AuditSigner.parse(GO_SIGNER);
    expect(signer.text).toBe(GO_SIGNER);
    expect(signer.verifier.text).toBe(GO_VERIFIER);
    expect(AuditVerifier.parse(GO_VERIFIER).text).toBe(GO_VERIFIER);
    const signature = Buffer.concat([signer.verifier.id, signer.sign(Buffer.from(GO_TEXT))]).toString(
      'base64',
    );
    expect(signature).toBe(GO_SIGNATURE);
    const note = `${GO_TEXT}\n\u2014 PeterNeumann ${GO_SIGNATURE}\n`;
    expect(note.split('\n\n')[0]).toBe(GO_TEXT.slice(0, -1));
  });

  it('refuse malformed keys with ERR_AUDIT_CONFIG, naming what is wrong', () => {
    expect(() =>
      AuditVerifier.parse('PeterNeumann+00000000+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
    ).toThrow('its key id does not match its name and key');
    expect(() => AuditVerifier.parse('PeterNeumann+c74f20a3+AAAA')).toThrow('not an Ed25519 key');
    expect(() => AuditSigner.parse(GO_VERIFIER)).toThrow('expected PRIVATE+KEY+');
    expect(() => AuditSigner.generate('has space')).toThrow(/must have no spaces/);
    try {
      AuditSigner.parse('PRIVATE+KEY+x+00+AA');
    } catch (error) {
      expect((error as { code: string }).code).toBe('ERR_AUDIT_CONFIG');
    }
  });
});

describe('checkpoints', () => {
  const signer = AuditSigner.generate('mrtr-audit');

  it('are signed notes with origin, size, hash and time lines', () => {
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    const body = `mrtr-audit/api-1\n42\n${Buffer.from(HEAD.hash, 'hex').toString('base64')}\ntime 2026-07-28T12:00:00.000Z\n`;
    expect(cp.note.startsWith(`${body}\n\u2014 mrtr-audit `)).toBe(true);
    const reading = readCheckpoint(cp.note, [signer.verifier]);
    expect(reading).toEqual({
      ok: true,
      checkpoint: { instance: 'api-1', seq: 42, hash: HEAD.hash, note: cp.note },
      signedBy: [signer.verifier.text],
    });
  });

  it('fail when edited, when signed by another key, or when not a checkpoint', () => {
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    expect(readCheckpoint(cp.note.replace('\n42\n', '\n43\n'), [signer.verifier])).toEqual({
      ok: false,
      problem: 'the signature by mrtr-audit does not verify',
    });
    const other = AuditSigner.generate('mrtr-audit');
    expect(readCheckpoint(cp.note, [other.verifier])).toEqual({
      ok: false,
      unknownKey: true,
      // The key that did sign is named (name and key id), so an operator can tell an old key of theirs.
      problem: `no signature by a known audit key (signed by mrtr-audit+${signer.verifier.id.toString('hex')} only)`,
    });
    expect(readCheckpoint('hello\n', [signer.verifier]).ok).toBe(false);
    expect(readCheckpoint(`other/origin\n1\n${GENESIS}\n\n\u2014 x y\n`, [signer.verifier])).toMatchObject({
      problem: 'not an mrtr audit checkpoint (origin, size and hash lines)',
    });
  });

  it('call a note with no signature, or none shaped like an audit key’s, tampered rather than unverified', () => {
    // UNVERIFIED says "perhaps an old key of yours": only a signature that one of the operator's keys could have made
    // (4-byte key id and a 64-byte Ed25519 signature) may say that. Stripped signatures are an edit.
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    const body = cp.note.slice(0, cp.note.indexOf('\n\n') + 1);
    const stripped = readCheckpoint(`${body}\n`, [signer.verifier]);
    expect(stripped).toEqual({
      ok: false,
      problem: 'no signature by a known audit key (and no signature at all)',
    });
    const short = readCheckpoint(`${body}\n\u2014 mrtr-audit AAAA\n`, [signer.verifier]);
    expect(short).toEqual({
      ok: false,
      problem: 'no signature by a known audit key (signed by mrtr-audit only, not with an Ed25519 audit key)',
    });
  });

  it('ignore cosignatures by keys they do not know (a witness’s)', () => {
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    const witness = AuditSigner.generate('witness');
    const body = cp.note.slice(0, cp.note.indexOf('\n\n') + 1);
    const cosigned = `${cp.note}\u2014 witness ${Buffer.concat([witness.verifier.id, witness.sign(Buffer.from(body))]).toString('base64')}\n`;
    expect(readCheckpoint(cosigned, [signer.verifier])).toMatchObject({
      ok: true,
      signedBy: [signer.verifier.text],
    });
    expect(readCheckpoint(cosigned, [signer.verifier, witness.verifier])).toMatchObject({ ok: true });
  });

  it('split back out of an export of several', () => {
    const a = sealCheckpoint('api-1', HEAD, signer, NOW);
    const b = sealCheckpoint('api-2', { seq: 1, hash: 'cd'.repeat(32) }, signer, NOW);
    expect(splitNotes(`${a.note}\n${b.note}`)).toEqual([a.note, b.note]);
  });
});
