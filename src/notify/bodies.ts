// What a webhook says of an approval request: a signed JSON body for programs, or a Slack-compatible message for
// people, each with the deep link to the review page.
import { randomUUID } from 'node:crypto';
import type { ControlEvent, Effect } from '../controls/index.js';
import { ALL_ON_PAGE, previewLines } from '../controls/internal.js';

export interface ApprovalRequested {
  id: string;
  role: string;
  reason: string;
  requester: string;
  effect: Record<string, unknown>;
  /** What a person reads of the effect: every fact and argument by name, each value bounded (the controls' rule). */
  preview: string[];
  effectDigest: string;
  expiresAt: string;
  url: string;
}

/** An event's effect as facts: a value that is no fact (an object) is shown as its JSON, never dropped. */
const factsOf = (effect: Record<string, unknown>): Effect =>
  Object.fromEntries(
    Object.entries(effect).map(([k, v]) => [
      k,
      v === null || ['string', 'number', 'boolean'].includes(typeof v)
        ? (v as string | number | boolean | null)
        : (JSON.stringify(v) ?? String(v)),
    ]),
  );

/** The request an event announces, or undefined for any other event. */
export function requestedOf(event: ControlEvent): ApprovalRequested | undefined {
  if (event.control !== 'approval' || event.action !== 'requested' || !event.detail) return undefined;
  const d = event.detail;
  const text = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : '');
  const effect =
    typeof d.effect === 'object' && d.effect !== null ? (d.effect as Record<string, unknown>) : {};
  return {
    id: event.id,
    role: text('role'),
    reason: text('reason'),
    requester: text('requester') || (event.by ?? ''),
    effect,
    preview: previewLines(factsOf(effect), ALL_ON_PAGE),
    effectDigest: text('effectDigest'),
    expiresAt: text('expiresAt'),
    url: text('url'),
  };
}

export function signedJsonBody(request: ApprovalRequested, now: number): { id: string; body: string } {
  const id = randomUUID();
  return {
    id,
    body: JSON.stringify({
      type: 'approval.requested',
      id,
      createdAt: new Date(now).toISOString(),
      approval: request,
    }),
  };
}

/** Slack reads `&`, `<` and `>` as markup (`<url|text>`, `<@U123>`, `<!channel>`): a requester's text must not. */
export const slackText = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackBody(request: ApprovalRequested): string {
  // One section of bounded lines: every fact and argument by name (Slack allows 3000 characters in a section).
  const facts = slackLines(request.preview.map(slackText));
  return JSON.stringify({
    text: `${slackText(request.requester)} asks for approval: ${slackText(request.reason)} — ${request.url}`,
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${slackText(request.requester)}* asks for approval (role ${slackText(request.role)}):\n${slackText(request.reason)}`,
        },
      },
      ...facts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } })),
      {
        type: 'actions',
        elements: [{ type: 'button', text: { type: 'plain_text', text: 'Review' }, url: request.url }],
      },
    ],
  });
}

/** Lines packed into sections of at most 3000 characters (Slack's limit), in order, none cut. */
function slackLines(lines: string[]): string[] {
  const sections: string[] = [];
  // A line longer than a section (a value of escapes) is carried over whole, in pieces.
  const pieces = lines.flatMap((line) => line.match(/[\s\S]{1,3000}/gu) ?? ['']);
  for (const line of pieces) {
    const last = sections.at(-1);
    if (last !== undefined && last.length + 1 + line.length <= 3000)
      sections[sections.length - 1] = `${last}\n${line}`;
    else sections.push(line);
  }
  return sections;
}
