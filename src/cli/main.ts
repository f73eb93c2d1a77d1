#!/usr/bin/env node
// The `mrtr` command line.
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { runCli } from './run.js';

exitQuietlyOnClosedPipe();
runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mrtr: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
