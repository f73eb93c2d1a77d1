// Scrape a /metrics endpoint and read it with a Prometheus text parser from npm (not our own reading of the format).
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

type Family = ReturnType<typeof parsePrometheusTextFormat>[number];

export interface Scraped {
  /** The families as the parser read them, by name. */
  families: Map<string, Family>;
  /** The sum of a counter's or gauge's samples whose labels include `labels` (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
  /** A histogram's sample count over the series whose labels include `labels`. */
  count(name: string, labels?: Record<string, string>): number;
  contentType: string;
}

const matches = (have: Record<string, string> | undefined, want: Record<string, string>) =>
  Object.entries(want).every(([k, v]) => have?.[k] === v);

export async function scrape(url: string): Promise<Scraped> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape ${url}: HTTP ${response.status}`);
  const text = await response.text();
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  // This parser folds a histogram's labelled series into one (it follows an old client_python): read without the
  // HELP and TYPE lines, each `<name>_count{…}` series is a sample of its own, labels kept.
  // A series without a TYPE line is a family of its own: samples of one name are gathered again here.
  const untyped = new Map<string, Family>();
  for (const f of parsePrometheusTextFormat(text.replace(/^# (TYPE|HELP) .*\n/gm, ''))) {
    const known = untyped.get(f.name);
    if (known) known.metrics.push(...f.metrics);
    else untyped.set(f.name, f);
  }
  const samples = (from: typeof families, name: string, labels: Record<string, string>) =>
    (from.get(name)?.metrics ?? []).filter((m) => matches(m.labels, labels));
  const sum = (list: ReturnType<typeof samples>) => list.reduce((n, m) => n + Number(m.value), 0);
  return {
    families,
    value: (name, labels = {}) => sum(samples(families, name, labels)),
    count: (name, labels = {}) => sum(samples(untyped, `${name}_count`, labels)),
    contentType: response.headers.get('content-type') ?? '',
  };
}
