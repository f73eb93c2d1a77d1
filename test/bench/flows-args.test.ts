// `npm run bench -- --baseline DIR`: the earlier build runs right after the row it is compared with, bare and full
// stack, so each pair shares the machine's conditions. Nothing is timed: only the run order is read.
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../bench/lib/args.mjs';

describe('bench run order with --baseline', () => {
  it('puts the earlier build beside bare mrtr, and beside the full stack when that row runs', () => {
    const opts = parseArgs(['--baseline', '/tmp/earlier', '--only', 'ours,ours-full,sdk']);
    expect(opts.only).toEqual(['ours', 'baseline', 'ours-full', 'baseline-full', 'sdk']);
  });

  it('adds no full-stack baseline when the full stack is not measured', () => {
    const opts = parseArgs(['--baseline', '/tmp/earlier', '--only', 'ours']);
    expect(opts.only).toEqual(['ours', 'baseline']);
  });
});
