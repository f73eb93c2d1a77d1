// Checkpoints and audit keys: the signed-note encoding matches Go's golang.org/x/mod/sumdb/note (its documented
// example key and signature), a checkpoint verifies under its key and under no other, and any edit breaks it.
import { describe, expect, it } from 'vitest';
import {
  AuditSigner,
  AuditVerifier,
  GENESIS,
  readCheckpoint,
  sealCheckpoint,
} from '../../src/audit/index.js';
import { splitNotes } from '../../src/audit/internal.js';

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

  it('name each way a note can be malformed', () => {
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    const [body, signatures] = cp.note.split('\n\n') as [string, string];
    const lines = body.split('\n');
    const withBody = (edit: (l: string[]) => string[]) => `${edit([...lines]).join('\n')}\n\n${signatures}`;
    const cases: Array<[string, string, string]> = [
      [
        'no blank line',
        cp.note.replace('\n\n', '\n'),
        'not a signed note (no blank line before the signatures)',
      ],
      [
        'another origin',
        withBody((l) => ['other/api-1', ...l.slice(1)]),
        'not an mrtr audit checkpoint (origin, size and hash lines)',
      ],
      [
        'no hash line',
        `${lines[0]}\n${lines[1]}\n\n${signatures}`,
        'not an mrtr audit checkpoint (origin, size and hash lines)',
      ],
      ['an empty note', '\n\n', 'not an mrtr audit checkpoint (origin, size and hash lines)'],
      [
        'a size with a sign',
        withBody((l) => [l[0]!, '-42', ...l.slice(2)]),
        'checkpoint size line "-42" is not a number',
      ],
      [
        'a size with a suffix',
        withBody((l) => [l[0]!, '42x', ...l.slice(2)]),
        'checkpoint size line "42x" is not a number',
      ],
      [
        'a size with a prefix',
        withBody((l) => [l[0]!, 'x42', ...l.slice(2)]),
        'checkpoint size line "x42" is not a number',
      ],
      [
        'a short hash',
        withBody((l) => [l[0]!, l[1]!, Buffer.alloc(31).toString('base64'), ...l.slice(3)]),
        'checkpoint hash line is not a base64 SHA-256',
      ],
      [
        'a hash in non-canonical base64',
        withBody((l) => [l[0]!, l[1]!, `${l[2]!.slice(0, -2)}t=`, ...l.slice(3)]),
        'checkpoint hash line is not a base64 SHA-256',
      ],
      [
        'a signature line without its signature',
        `${body}\n\n\u2014 mrtr-audit\n`,
        'malformed signature line "\u2014 mrtr-audit"',
      ],
      [
        'a signature line with an ASCII dash',
        `${body}\n\n${signatures.replace('\u2014', '-')}`,
        `malformed signature line "${signatures.replace('\u2014', '-').trim()}"`,
      ],
      [
        'a signature line with a third field',
        `${body}\n\n${signatures.trim()} extra\n`,
        `malformed signature line "${signatures.trim()} extra"`,
      ],
      [
        'leading text before the dash',
        `${body}\n\nx${signatures}`,
        `malformed signature line "x${signatures.trim()}"`,
      ],
    ];
    for (const [what, note, problem] of cases)
      expect(readCheckpoint(note, [signer.verifier]), what).toEqual({ ok: false, problem });
    // Blank lines among the signatures are allowed; the note still reads.
    expect(readCheckpoint(`${cp.note}\n\n`, [signer.verifier])).toMatchObject({
      ok: true,
      checkpoint: { seq: 42 },
    });
  });

  it('count a signature as the known key’s only when name, key id and length all match', () => {
    const cp = sealCheckpoint('api-1', HEAD, signer, NOW);
    const [body, line] = cp.note.split('\n\n') as [string, string];
    const sig = Buffer.from(line.trim().split(' ')[2]!, 'base64');
    const idHex = signer.verifier.id.toString('hex');
    const other = Buffer.from(sig);
    other[0] = other[0]! ^ 0xff;
    const otherId = other.subarray(0, 4).toString('hex');
    const note = (name: string, bytes: Buffer) => `${body}\n\n\u2014 ${name} ${bytes.toString('base64')}\n`;
    // Another name with the same key id and signature: not this key.
    expect(readCheckpoint(note('mrtr-audit2', sig), [signer.verifier])).toEqual({
      ok: false,
      unknownKey: true,
      problem: `no signature by a known audit key (signed by mrtr-audit2+${idHex} only)`,
    });
    // The same name with another key id: not this key either.
    expect(readCheckpoint(note('mrtr-audit', other), [signer.verifier])).toEqual({
      ok: false,
      unknownKey: true,
      problem: `no signature by a known audit key (signed by mrtr-audit+${otherId} only)`,
    });
    // The right name and id but a signature a byte short: no audit key's.
    expect(readCheckpoint(note('mrtr-audit', sig.subarray(0, 67)), [signer.verifier])).toEqual({
      ok: false,
      problem: 'no signature by a known audit key (signed by mrtr-audit only, not with an Ed25519 audit key)',
    });
    // An unknown key beside a foreign-shaped one: both named, still only unverified.
    const both = `${note('mrtr-audit', other).trimEnd()}\n\u2014 witness AAAA\n`;
    expect(readCheckpoint(both, [signer.verifier])).toEqual({
      ok: false,
      unknownKey: true,
      problem: `no signature by a known audit key (signed by mrtr-audit+${otherId}, witness only)`,
    });
  });

  it('split an export with blank lines around and between its notes, and a last note with no newline', () => {
    const a = sealCheckpoint('api-1', HEAD, signer, NOW);
    const b = sealCheckpoint('api-2', { seq: 1, hash: 'cd'.repeat(32) }, signer, NOW);
    const c = sealCheckpoint('api-3', { seq: 7, hash: 'ef'.repeat(32) }, signer, NOW);
    expect(splitNotes(`\n\n${a.note}\n\n\n${b.note}${c.note.slice(0, -1)}`)).toEqual([
      a.note,
      b.note,
      c.note,
    ]);
    expect(splitNotes('')).toEqual([]);
    expect(splitNotes('\n\n\n')).toEqual([]);
  });
});
