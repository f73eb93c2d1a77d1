// mrtr/metrics: Prometheus metrics of the rounds, the audit trail, approvals and the gateway's upstreams, on a
// registry of their own. A curated list: what is not named here is internal.
export { MAX_TOOL_LABELS } from './labels.js';
export type { MeasuredRound, MeasuredUpstreamRound } from './measured.js';
export {
  MrtrMetrics,
  type MrtrMetricsOptions,
  type ObserverLike,
  type UpstreamState,
} from './mrtr-metrics.js';
