// The flows the fleet test drives: the four workflows in turn, each answered as a person would, with the driver's
// retry on so that a round whose instance died is sent again. Every flow leaves a mark of its own (a ticket title,
// a recovery address, a justification) so the databases can show its effect happened exactly once.
import {
  type InputQuestion,
  McpClient,
  type MrtrEvent,
  type MrtrOutcome,
  scriptedResolver,
} from 'mrtr/client';

export const KINDS = ['ticket', 'profile', 'search', 'resize'] as const;
export type FlowKind = (typeof KINDS)[number];

export interface FlowRun {
  kind: FlowKind;
  mark: string;
  outcome: MrtrOutcome;
  /** Each round's time from sending to its answer (resends included), in ms. */
  roundMs: number[];
  /** The keys of the questions asked, in order (a question asked again shows twice). */
  asked: string[];
  /** Rounds sent again because they got no answer (an instance died under them). */
  resends: number;
}

const accept = (content: Record<string, string | number | boolean | string[]>) => ({
  action: 'accept' as const,
  content,
});
const firstOfEach = (q: InputQuestion) => {
  const props = (q.request.params as { requestedSchema: { properties: Record<string, { enum?: string[] }> } })
    .requestedSchema.properties;
  return accept(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, (v.enum ?? [])[0] as string])));
};

/** Resends while a round gets no answer: enough to outlast a dead instance's replay lease (7 s). */
const RETRY = { attempts: 40, initialMs: 50, maxMs: 500 };

export function runFlow(
  url: string,
  token: string,
  kind: FlowKind,
  mark: string,
  assetTag: string,
): Promise<FlowRun> {
  const answers = scriptedResolver(
    {
      category: accept({ choice: 'hardware' }),
      'asset-1': accept({ text: assetTag }),
      department: accept({ department: 'security' }),
      'recovery-1': accept({ recoveryEmail: `${mark}@home.example` }),
      justification: accept({ text: `capacity for ${mark}` }),
    },
    {
      fallback: (q) =>
        q.key === 'vm' ? firstOfEach(q) : q.key.startsWith('narrow') ? firstOfEach(q) : undefined,
    },
  );
  const client = new McpClient({ server: url, token, resolvers: [answers], protocol: '2026-07-28' });
  const roundMs: number[] = [];
  const asked: string[] = [];
  let resends = 0;
  let sent: number | undefined;
  const onEvent = (e: MrtrEvent) => {
    if (e.type === 'input_needed') asked.push(e.key);
    if (e.type === 'round') sent = performance.now();
    else if (
      sent !== undefined &&
      (e.type === 'input_needed' || e.type === 'done' || e.type === 'retrying')
    ) {
      if (e.type === 'retrying' && e.reason === 'no_answer') {
        resends++;
        return; // still the same round
      }
      roundMs.push(performance.now() - sent);
      sent = undefined;
    }
  };
  const args: Record<FlowKind, Record<string, unknown>> = {
    ticket: { title: `fleet ticket ${mark}`, description: 'laptop battery swollen' },
    profile: { department: 'nowhere', recoveryEmail: 'not an address' },
    search: { query: 'incident' },
    resize: { size: (['small', 'medium', 'large', 'xlarge'] as const)[mark.length % 4] },
  };
  const tool = {
    ticket: 'create_ticket',
    profile: 'update_profile',
    search: 'search_documents',
    resize: 'resize_vm',
  }[kind];
  return client
    .callTool(tool, args[kind], { retry: RETRY, onEvent, timeoutMs: 120_000 })
    .then(async (outcome) => {
      await client.close();
      return { kind, mark, outcome, roundMs, asked, resends };
    });
}

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
