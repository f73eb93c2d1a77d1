// Types of lib/args.mjs, for test/bench/gateway-bench.test.ts (the bench itself is plain JavaScript).
export interface BenchOptions {
  seconds: number;
  warmup: number;
  concurrency: number;
  only: string[];
  json: boolean;
  verbose: boolean;
  client: 'raw' | 'node';
  quietWait: number;
  retries: number;
  repeat: number;
  pin: boolean | 'auto';
  curves: boolean;
  curvesSeconds: number;
  curvesWarmup: number;
  curvesOnly: string[];
  gateway: boolean;
  together: boolean;
  callers: number[];
  gatewayRows: string[];
  baseline?: string;
  help?: boolean;
}
export const GATEWAY_NAMES: string[];
export const SERVER_NAMES: string[];
export const CURVE_SWEEPS: string[];
export const USAGE: string;
export function parseArgs(argv: string[]): BenchOptions;
