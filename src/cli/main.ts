#!/usr/bin/env node
// The `mrtr` command line.
import { runCli } from './run.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mrtr: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
