// Signed checkpoints in the C2SP signed-note format (c2sp.org/signed-note), with a body shaped like a C2SP
// tlog-checkpoint: origin line, size line, hash line, then one extension line with the time:
//
//   mrtr-audit/<instance>
//   <seq of the chain head>
//   <chain head hash, standard base64>
//   time <ISO 8601>
//
//   — <key name> <base64(4-byte key id ‖ Ed25519 signature over the body)>
//
// The hash is the head of a hash chain, not a Merkle tree root: a checkpoint proves "the chain up to seq N ended
// in this hash", which is what a verifier holding the chain needs (docs/audit.md compares it with transparency logs).
import type { AuditSigner, AuditVerifier } from './audit-key.js';
import type { ChainHead } from './chain.js';

export const ORIGIN_PREFIX = 'mrtr-audit/';
const DASH = '\u2014';

/** A checkpoint as sinks store it: whose chain, where it stood, and the signed note. */
export interface StoredCheckpoint {
  instance: string;
  seq: number;
  hash: string;
  note: string;
}

export function sealCheckpoint(
  instance: string,
  head: ChainHead,
  signer: AuditSigner,
  now: Date,
): StoredCheckpoint {
  const body =
    `${ORIGIN_PREFIX}${instance}\n${head.seq}\n${Buffer.from(head.hash, 'hex').toString('base64')}\n` +
    `time ${now.toISOString()}\n`;
  const signature = Buffer.concat([signer.verifier.id, signer.sign(Buffer.from(body))]);
  return {
    instance,
    seq: head.seq,
    hash: head.hash,
    note: `${body}\n${DASH} ${signer.name} ${signature.toString('base64')}\n`,
  };
}

export type CheckpointReading =
  | { ok: true; checkpoint: StoredCheckpoint; signedBy: string[] }
  | { ok: false; problem: string; unknownKey?: true };

/**
 * Parse a signed note and check its signatures against `verifiers`: ok only when at least one known key signed it.
 * Signatures by unknown keys are ignored (a note may be cosigned by witnesses), as the signed-note spec says.
 */
export function readCheckpoint(note: string, verifiers: readonly AuditVerifier[]): CheckpointReading {
  const split = note.indexOf('\n\n');
  if (split < 0) return { ok: false, problem: 'not a signed note (no blank line before the signatures)' };
  const body = note.slice(0, split + 1);
  const lines = body.slice(0, -1).split('\n');
  const [origin, size, hashLine] = lines;
  if (!origin?.startsWith(ORIGIN_PREFIX) || size === undefined || hashLine === undefined)
    return { ok: false, problem: 'not an mrtr audit checkpoint (origin, size and hash lines)' };
  if (!/^\d+$/.test(size)) return { ok: false, problem: `checkpoint size line "${size}" is not a number` };
  const hash = Buffer.from(hashLine, 'base64');
  if (hash.length !== 32 || hash.toString('base64') !== hashLine)
    return { ok: false, problem: 'checkpoint hash line is not a base64 SHA-256' };
  const signedBy: string[] = [];
  /** Unknown keys that could be one of the operator's own (an mrtr audit signature: key id and Ed25519). */
  const unknown: string[] = [];
  /** Names on signatures no mrtr audit key makes. */
  const foreign: string[] = [];
  for (const line of note.slice(split + 2).split('\n')) {
    if (line === '') continue;
    const m = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!m) return { ok: false, problem: `malformed signature line "${line}"` };
    const sig = Buffer.from(m[2]!, 'base64');
    let known = false;
    for (const v of verifiers) {
      if (v.name === m[1] && sig.length === 68 && sig.subarray(0, 4).equals(v.id)) {
        if (!v.verify(Buffer.from(body), sig.subarray(4)))
          return { ok: false, problem: `the signature by ${v.name} does not verify` };
        signedBy.push(v.text);
        known = true;
      }
    }
    if (known) continue;
    if (sig.length === 68) unknown.push(`${m[1]}+${sig.subarray(0, 4).toString('hex')}`);
    else foreign.push(m[1]!);
  }
  if (signedBy.length === 0 && unknown.length > 0)
    return {
      ok: false,
      unknownKey: true,
      // Naming the key that did sign lets an operator tell an old key of their own (a per-process key, a rotated
      // one: give it with another --vkey) from a forgery; the bytes alone cannot tell the two apart.
      problem: `no signature by a known audit key (signed by ${[...unknown, ...foreign].join(', ')} only)`,
    };
  // No signature at all, or none an audit key could have made: an edit (stripped or garbled), not an old key.
  if (signedBy.length === 0)
    return {
      ok: false,
      problem: `no signature by a known audit key (${foreign.length > 0 ? `signed by ${foreign.join(', ')} only, not with an Ed25519 audit key` : 'and no signature at all'})`,
    };
  return {
    ok: true,
    checkpoint: {
      instance: origin.slice(ORIGIN_PREFIX.length),
      seq: Number(size),
      hash: hash.toString('hex'),
      note,
    },
    signedBy,
  };
}

/** Several notes in one file (an export): each ends with its signature lines, and a blank line separates them. */
export function splitNotes(text: string): string[] {
  const notes: string[] = [];
  const lines = text.split('\n');
  let current: string[] = [];
  let inSignatures = false;
  for (const line of lines) {
    if (inSignatures && !line.startsWith(`${DASH} `)) {
      notes.push(`${current.join('\n')}\n`);
      current = [];
      inSignatures = false;
      if (line === '') continue;
    }
    if (!inSignatures && line === '' && current.length > 0) inSignatures = true;
    if (line === '' && current.length === 0) continue;
    current.push(line);
  }
  if (current.length > 0) notes.push(`${current.join('\n')}\n`);
  return notes;
}
