// Types of lib/svg-chart.mjs, for test/bench/svg-chart.test.ts (the bench itself is plain JavaScript).
export interface Tick {
  value: number;
  label: string;
}
export interface Axis {
  label: string;
  log?: boolean;
  ticks?: Tick[];
  format?: (v: number) => string;
}
export interface Series {
  name: string;
  dashed?: boolean;
  points: Array<{ x: number; y: number; label?: string }>;
}
export interface Panel {
  title: string;
  x: Axis;
  y: Axis;
  series: Series[];
}
export interface Chart {
  title: string;
  notes?: string[];
  columns: number;
  panelWidth?: number;
  panelHeight?: number;
  panels: Panel[];
}
export function renderChart(chart: Chart): string;
export function escapeXml(s: unknown): string;
export function formatCompact(v: number): string;
