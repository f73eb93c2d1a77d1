// Label values kept few: a Prometheus series per distinct label value, so a caller-chosen tool name must not make
// a new one each time. The first `max` tools seen keep their names; every later one is counted as `other`.
import { kindOfInputRequest, META_HUMAN_REQUIRED } from '../protocol/index.js';

/** Tool label values kept before the rest are `other`. */
export const MAX_TOOL_LABELS = 100;

/** Longer tool names are counted as `other`. */
export const MAX_LABEL_LENGTH = 128;

export class BoundedLabel {
  readonly #seen = new Set<string>();
  constructor(private readonly max: number) {}

  of(value: string | undefined): string {
    if (value === undefined) return 'none';
    // A tool name may be long; a label value need not be.
    if (value.length > MAX_LABEL_LENGTH) return 'other';
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.max) return 'other';
    this.#seen.add(value);
    return value;
  }
}

/** An input request's kind as a short label: form, url, sampling, roots, or unknown. */
export function questionKind(request: unknown): string {
  const kind = kindOfInputRequest(request);
  if (kind === 'elicitation.form') return 'form';
  if (kind === 'elicitation.url') return 'url';
  return kind ?? 'unknown';
}

/** The human control a question is for (its `dev.mrtr/humanRequired` hint), as the control's name. */
export function humanControlOf(request: unknown): string | undefined {
  const params = (request as { params?: { _meta?: Record<string, unknown> } } | null)?.params;
  const hint = params?._meta?.[META_HUMAN_REQUIRED];
  if (hint === 'second_factor') return 'step_up';
  return typeof hint === 'string' ? hint : undefined;
}
