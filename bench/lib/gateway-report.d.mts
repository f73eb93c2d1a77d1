// Types of lib/gateway-report.mjs, for test/bench/gateway-bench.test.ts (the bench itself is plain JavaScript).
export interface GatewayPoint {
  callsPerSec: number;
  latencyMs: { p50: number; p99: number };
  frontUsPerCall: number;
  upstreamUsPerCall: number;
  upstreamRequestsPerCall: number;
  frontRssMiB: number;
  totalRssMiB: number;
  otherCpu: number;
  disturbed: boolean;
  errors: number;
  serverDied?: boolean;
  passes?: unknown[];
}
export interface GatewayRowResult {
  label?: string;
  skipped?: boolean;
  failed?: boolean;
  reason?: string;
  byCallers?: Record<number, GatewayPoint>;
}
export type GatewayResults = Record<string, GatewayRowResult>;
export interface Goal {
  goal: string;
  value: number | undefined;
  figure: string;
  target: number;
  met: boolean | undefined;
  disturbed: boolean;
}
export const PROXY_OF: Record<'2026' | '2025', string>;
export function medianPoint(points: GatewayPoint[]): GatewayPoint;
export function point(results: GatewayResults, name: string, callers: number): GatewayPoint | undefined;
export function added(
  results: GatewayResults,
  name: string,
  callers: number,
): { p50: number; p99: number } | undefined;
export function gatewayGoals(results: GatewayResults, callers: number, allCallers?: number[]): Goal[];
export function gatewayTable(results: GatewayResults, callersList: number[]): string;
export function goalLines(goals: Goal[]): string[];
