// No bare Error in src/: everything mrtr throws at a caller is an MrtrError with a code (docs/architecture.md,
// "Errors"). A plain Error, TypeError or RangeError — made, or extended — is allowed only where the list below
// names it, each an internal assertion or an internal signal that never reaches a caller, with the reason.
import { describe, expect, it } from 'vitest';
import { type SourceFile, sourceFiles } from './boundaries.js';

interface Allowed {
  /** Path relative to src/. */
  file: string;
  /** Text on the line that makes or extends the plain Error. */
  line: string;
  why: string;
}

const ALLOWED: readonly Allowed[] = [
  { file: 'protocol/mrtr-error.ts', line: 'class MrtrError extends Error', why: 'the base itself' },
  {
    file: 'protocol/errors.ts',
    line: 'class McpError extends Error',
    why: 'a JSON-RPC error: its numeric code is the wire’s',
  },
  {
    file: 'client/errors.ts',
    line: 'class RemoteError extends Error',
    why: 'a JSON-RPC error the server sent: its numeric code is the server’s',
  },
  {
    file: 'flow/errors.ts',
    line: 'class FlowPause extends Error',
    why: 'internal: a round that stops to go on in a task; tools/call turns it into the task, it never reaches a caller',
  },
  {
    file: 'client/answer-questions.ts',
    line: 'class ResolverFailed extends Error',
    why: 'internal: ends the call as resolver_error',
  },
  {
    file: 'client/legacy-questions.ts',
    line: 'class LegacyRoundCap extends Error',
    why: 'internal: ends the call as round_cap',
  },
  {
    file: 'client/http-transport.ts',
    line: 'class AuthChallenge extends Error',
    why: 'internal: send() signs in or throws a TransportFailure',
  },
  {
    file: 'client/terminal.ts',
    line: 'class Closed extends Error',
    why: 'internal: the resolver turns it into a RequestAborted',
  },
  {
    file: 'flow/run.ts',
    line: "new Error('flow suspended without a pending question')",
    why: 'cannot happen: a question was parked',
  },
  {
    file: 'controls/passkey-script.ts',
    line: "throw new Error(j.message || 'refused')",
    why: 'the text of the script the browser runs, not code of ours: it shows the refusal on the page',
  },
  {
    file: 'controls/approval-book.ts',
    line: "new Error('approval id collision')",
    why: 'cannot happen: 96 random bits',
  },
  {
    file: 'controls/approval.ts',
    line: "new Error('unreachable: a pending approval question does not resolve')",
    why: 'cannot happen: the question parks the flow',
  },
  {
    file: 'cli/terminal/print.ts',
    line: "new TypeError('writeData is for pipes and files, not terminals')",
    why: 'cannot happen: callers check isTTY',
  },
  {
    file: 'client/stdio-transport.ts',
    line: 'error instanceof Error ? error : new Error(String(error))',
    why: 'wraps a non-Error rejection; Errors pass as they are',
  },
  {
    file: 'client/http-transport.ts',
    line: 'error instanceof Error ? error : new Error(String(error))',
    why: 'wraps a non-Error rejection; Errors pass as they are',
  },
];

const BARE = /\bnew (?:Error|TypeError|RangeError|SyntaxError)\(|\bextends (?:Error|TypeError|RangeError)\b/;

/** Every line of src/ that makes or extends a plain Error and is not on the list, as "file:line: text". */
function bareErrors(files: readonly SourceFile[], allowed: readonly Allowed[] = ALLOWED): string[] {
  const found: string[] = [];
  for (const file of files) {
    file.text.split('\n').forEach((text, i) => {
      if (!BARE.test(text)) return;
      if (allowed.some((a) => a.file === file.path && text.includes(a.line))) return;
      found.push(`${file.path}:${i + 1}: ${text.trim()}`);
    });
  }
  return found;
}

describe('no bare Error in src/', () => {
  it('every Error made or extended in src/ is an MrtrError, or on the list of internal ones', () => {
    expect(bareErrors(sourceFiles())).toEqual([]);
  });

  it('every entry on the list still names a line in src/ (a fixed one leaves the list)', () => {
    const files = sourceFiles();
    const stale = ALLOWED.filter(
      (a) => !files.some((f) => f.path === a.file && f.text.split('\n').some((l) => l.includes(a.line))),
    );
    expect(stale).toEqual([]);
  });

  it('catches a new bare throw, reject, abort reason or subclass', () => {
    const planted: SourceFile[] = [
      { path: 'server/x.ts', text: "if (!ok) throw new Error('bad option');" },
      { path: 'client/y.ts', text: "return Promise.reject(new TypeError('bad input'));" },
      {
        path: 'stores/z.ts',
        text: "controller.abort(new RangeError('late'));\nconst fine = new MrtrError('ERR_TIMEOUT', 'late');",
      },
      { path: 'audit/w.ts', text: 'export class SinkError extends Error {}' },
      { path: 'flow/run.ts', text: "throw new Error('flow suspended without a pending question');" },
    ];
    expect(bareErrors(planted)).toEqual([
      "server/x.ts:1: if (!ok) throw new Error('bad option');",
      "client/y.ts:1: return Promise.reject(new TypeError('bad input'));",
      "stores/z.ts:1: controller.abort(new RangeError('late'));",
      'audit/w.ts:1: export class SinkError extends Error {}',
    ]);
  });
});
