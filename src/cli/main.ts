#!/usr/bin/env node
// The `mrtr` command line.
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { runCli } from './run.js';
import { printLine } from './terminal/print.js';

exitQuietlyOnClosedPipe();
runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  async (error: unknown) => {
    // An error no command caught may carry a server's words: sanitized, every further line quoted. The client's
    // sanitizer is loaded here, not at start: `mrtr help` and the commands that do not need it start faster.
    const { afterLabel, safe } = await import('../client/index.js');
    const [first, ...rest] = afterLabel(error instanceof Error ? error.message : String(error));
    printLine(process.stderr, safe`mrtr: ${first}`);
    for (const l of rest) printLine(process.stderr, l);
    process.exitCode = 1;
  },
);
