// What `mrtr audit` prints comes from clients (a tool name, arguments), authors (notes, keys) and, in a tampered
// trail, from whoever edited it (instance names, the key name on a forged checkpoint). None of it may reach the
// operator's terminal as control characters: an escape sequence can erase a row of the flows table, repaint a
// verdict, or hide text; bidirectional overrides reorder what is read. They are printed escaped, as \u{…}.
import { describe, expect, it } from 'vitest';
import { flowsOf } from '../../src/audit/flows.js';
import type { AuditRecord, VerifyReport } from '../../src/audit/index.js';
import { flowsTable, flowTimeline, verifyText } from '../../src/cli/audit-format.js';

const plain = { width: 200, color: false };
const coloured = { width: 200, color: true };
// ESC (an escape sequence), CSI as one C1 character, a right-to-left override, a carriage return, a tag character.
const HOSTILE = ['\x1b[2K\x1b[1A', '\x9b2K', '\u202e', '\r', '\u{e0041}'];
/** Any control, format or separator character but the newlines that end the formatter's own lines. */
const CONTROLS = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

function record(i: number, hostile: string): AuditRecord {
  return {
    v: 1,
    instance: `i${hostile}`,
    seq: i + 1,
    prev: '0'.repeat(64),
    time: '2026-12-02T03:00:00.000Z',
    requestId: `r${hostile}`,
    flowId: `f${i}${hostile}`,
    round: 0,
    principal: { sub: `ada${hostile}`, iss: `https://id${hostile}`, clientId: `c${hostile}` },
    method: 'tools/call',
    target: `tool${hostile}`,
    arguments: { path: `/x${hostile}` },
    argumentsDigest: 'sha256:x',
    asked: [{ key: `k${hostile}`, kind: `elicitation.form${hostile}` }],
    answers: { [`a${hostile}`]: { action: 'accept', content: { v: hostile } } },
    steps: [`s${hostile}`],
    outcome: 'refused',
    reason: `because${hostile}`,
    decidedBy: `guard${hostile}`,
    durationMs: 1,
    notes: { n: hostile },
  };
}

/** What is left of `text` once the colours the formatter adds itself are removed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what this removes
const withoutOwnColours = (text: string) => text.replace(/\x1b\[\d+m/g, '');

describe('mrtr audit output never passes control characters through', () => {
  it.each(HOSTILE.map((h, i) => [JSON.stringify(h), h, i] as const))('in the flows table: %s', (_, h, i) => {
    const flows = flowsOf([record(i, h)]);
    for (const style of [plain, coloured]) {
      const table = flowsTable(flows, style);
      expect(withoutOwnColours(table)).not.toMatch(CONTROLS);
      expect(table).toContain('tool\\u');
    }
  });

  it.each(HOSTILE.map((h, i) => [JSON.stringify(h), h, i] as const))('in a flow timeline: %s', (_, h, i) => {
    for (const style of [plain, coloured])
      expect(withoutOwnColours(flowTimeline([record(i, h)], style))).not.toMatch(CONTROLS);
  });

  it('in the verdict, where a forged checkpoint names its key and a tampered row its instance', () => {
    const report: VerifyReport = {
      ok: false,
      events: 1,
      checkpoints: 1,
      chains: [{ instance: 'i\x1b[1A', events: 1, headSeq: 1, sealedSeq: 0, unfinished: 0 }],
      firstBad: {
        instance: 'i\x1b[1A',
        seq: 1,
        problem:
          'stored checkpoint: no signature by a known audit key (signed by mrtr-audit\x1b[2K\x1b[1Gintact+0000 only)',
        unknownKey: true,
      },
    };
    for (const style of [plain, coloured]) {
      const text = verifyText(report, style);
      expect(withoutOwnColours(text)).not.toMatch(CONTROLS);
      expect(text).toContain('signed by mrtr-audit\\u001b[2K\\u001b[1Gintact+0000 only');
    }
    expect(
      verifyText({ ...report, firstBad: { ...report.firstBad!, unknownKey: undefined } }, plain),
    ).toContain('TAMPERED: first bad event i\\u001b[1A #1');
  });
});

describe('the verdict on chains', () => {
  it('says how many events of each chain no given key has sealed, and how many rounds have no outcome', () => {
    const report: VerifyReport = {
      ok: true,
      events: 16,
      checkpoints: 1,
      chains: [
        { instance: 'files-1', events: 14, headSeq: 14, sealedSeq: 14, unfinished: 0 },
        // A chain no key has sealed: a writer that has not sealed yet, or one someone added without the key.
        { instance: 'evil-1', events: 2, headSeq: 2, sealedSeq: 0, unfinished: 1 },
      ],
      firstBad: undefined,
    };
    const text = verifyText(report, { width: 120, color: false });
    expect(text).toContain('  files-1: 14 events, head #14, sealed up to #14\n');
    expect(text).toContain(
      '  evil-1: 2 events, head #2, sealed up to #0, 2 not sealed by a given key, 1 round(s) with an intent and no outcome',
    );
  });
});
