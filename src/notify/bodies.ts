// What a webhook says of an approval request: a signed JSON body for programs, or a Slack-compatible message for
// people, each with the deep link to the review page.
import { randomUUID } from 'node:crypto';
import type { ControlEvent } from '../controls/index.js';

export interface ApprovalRequested {
  id: string;
  role: string;
  reason: string;
  requester: string;
  effect: Record<string, unknown>;
  effectDigest: string;
  expiresAt: string;
  url: string;
}

/** The request an event announces, or undefined for any other event. */
export function requestedOf(event: ControlEvent): ApprovalRequested | undefined {
  if (event.control !== 'approval' || event.action !== 'requested' || !event.detail) return undefined;
  const d = event.detail;
  const text = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : '');
  return {
    id: event.id,
    role: text('role'),
    reason: text('reason'),
    requester: text('requester') || (event.by ?? ''),
    effect: typeof d.effect === 'object' && d.effect !== null ? (d.effect as Record<string, unknown>) : {},
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
  const facts = Object.entries(request.effect)
    .slice(0, 10)
    .map(([k, v]) => ({ type: 'mrkdwn', text: `*${slackText(k)}*\n${slackText(String(v)).slice(0, 500)}` }));
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
      ...(facts.length ? [{ type: 'section', fields: facts }] : []),
      {
        type: 'actions',
        elements: [{ type: 'button', text: { type: 'plain_text', text: 'Review' }, url: request.url }],
      },
    ],
  });
}
