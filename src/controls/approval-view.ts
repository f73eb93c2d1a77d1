// What a reviewer is shown of a request, as HTML for the pages and as JSON for the API — and the digest of exactly
// that view, which a vote records (and a page's form carries back, so a vote for a view that changed is refused).
import { createHash } from 'node:crypto';
import { type Html, html } from '../auth/internal.js';
import { canonicalJson } from '../state/index.js';
import { type ApprovalRecord, countOf, stateAt } from './approval-book.js';
import type { Effect } from './effect.js';
import { effectPreview, type PreviewRow, previewLines, previewRows } from './effect-preview.js';

const when = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

const duration = (ms: number): string => {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} hours` : `${Math.round(hours / 24)} days`;
};

/**
 * A reviewer reads labels, not field names: `currentRoles` is "Current roles", `grant_ttl` "Grant ttl". The API keeps
 * the keys as they are.
 */
export function factLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The heading of a request's page, by its state, in the words of the people involved. */
export const STATUS_TEXT: Readonly<Record<string, string>> = {
  pending: 'Waiting for a decision',
  approved: 'Approved — it happens when the person who asked continues in their app',
  denied: 'Denied',
  expired: 'Expired',
  redeemed: 'Approved and carried out',
  cancelled: 'Withdrawn by the person who asked',
  withdrawn: 'Withdrawn by the server',
};

/** Where every row of a request can be read whole: what a surface with less room says of the rest. */
export const ALL_ON_PAGE = 'the review page shows every one';

/** One row of the effect as a table row: an argument under its own name, a fact under its label. */
export function previewRow(row: PreviewRow, whole: boolean): Html {
  const name =
    row.kind === 'argument' ? html`Argument <code>${row.name}</code>` : html`${factLabel(row.name)}`;
  const value = row.kind === 'argument' ? html`<code>${row.value}</code>` : html`${row.value}`;
  // A value shown cut is there whole too, one click away (escaped like everything else on the page).
  const all =
    whole && row.cut
      ? html`<details><summary>Show all ${row.chars.toLocaleString('en-US')} characters</summary><pre>${row.whole}</pre></details>`
      : '';
  return html`<tr><th scope="row">${name}</th><td>${value}${all}</td></tr>`;
}

/** The effect for an HTML surface with little room: the first rows, then how many more and where they are. */
export function previewTable(effect: Effect, more: Html | string): Html {
  const preview = effectPreview(effect);
  const rest = preview.hidden.count
    ? html`<tr><td colspan="2">…and ${preview.hidden.count.toLocaleString('en-US')} more not shown here (${preview.hidden.names.join(', ')}${preview.hidden.count > preview.hidden.names.length ? ', …' : ''}): ${more}</td></tr>`
    : '';
  return html`<table>${preview.rows.map((row) => previewRow(row, false))}${rest}</table>`;
}

/**
 * The one line every surface (the inbox's JSON, the pages, the console) says a request's state in: the heading's
 * words, and why when the server withdrew it.
 */
export function statusLine(r: ApprovalRecord, now: number): string {
  const state = stateAt(r, now);
  const text = STATUS_TEXT[state] ?? state;
  return state === 'withdrawn' && r.withdrawnBecause ? `${text}: ${r.withdrawnBecause}` : text;
}

/** A withdrawn request says why, in the words every surface uses; other states need no line. */
export const withdrawnNote = (r: ApprovalRecord, state: string, now: number): Html | string =>
  state === 'withdrawn' ? html`<p class="card" role="status">${statusLine(r, now)}</p>` : '';

/** The facts a decision rests on, and nothing that changes while it is pending (the votes are shown apart). */
export function decisionCard(r: ApprovalRecord): Html {
  // The review page shows every row, each with its whole value: it is where "the page shows all" points.
  const rows = previewRows(r.effect).map((row) => previewRow(row, true));
  const who = r.requester.name ?? r.requester.subject;
  return html`<section class="card" aria-labelledby="what-${r.id}">
<p><strong>${r.requester.name ?? r.requester.subject}</strong> <span class="muted">(${r.requester.subject})</span> asks for approval.</p>
<h2 id="what-${r.id}">What will happen</h2>
<table>${rows}</table>
<h2>Why</h2><p>${r.reason}</p>${r.risk ? html`<p>Risk, as the tool rates it: <strong class="risk-${r.risk}">${r.risk}</strong></p>` : ''}
<h2>How long</h2><p>Open for decision until ${when(r.expiresAt)}. Once approved, the grant is valid for ${duration(r.grantTtlMs)}: ${who} can then have it done once, from the same request.</p>
<p class="muted">Needs ${r.approve} approval${r.approve === 1 ? '' : 's'} by the role <strong>${r.role}</strong>; ${r.deny} denial${r.deny === 1 ? '' : 's'} end${r.deny === 1 ? 's' : ''} it. Fingerprint of what will happen: <code>${r.effectDigest.slice(0, 16)}</code>.</p>
</section>`;
}

export const digestOf = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** The digest of the card a reviewer is shown: a form carries it back. */
export const pageDigest = (r: ApprovalRecord): string => digestOf(decisionCard(r).markup);

export function votesList(r: ApprovalRecord): Html {
  const k = countOf(r, 'approve');
  const d = countOf(r, 'deny');
  const items = r.votes.map(
    (v) =>
      html`<li><strong>${v.decision === 'approve' ? 'Approved' : 'Denied'}</strong> by ${v.by.name ?? v.by.subject} at ${when(v.at)}${v.comment ? html`: “${v.comment}”` : ''}</li>`,
  );
  return html`<section aria-label="Decisions so far"><p role="status">Approved by ${k} of ${r.approve}; denied by ${d} of ${r.deny}.</p>${
    items.length ? html`<ul>${items}</ul>` : ''
  }</section>`;
}

/** The preview as JSON: each row's kind, name, bounded value and size; the rows left out counted and named. */
export function previewJson(effect: Effect) {
  const preview = effectPreview(effect);
  return {
    rows: preview.rows.map(({ kind, name, value, chars, cut }) => ({ kind, name, value, chars, cut })),
    hidden: preview.hidden,
  };
}

/** The API's view of a request: what GET /mrtr/approvals lists and a vote's `seen` digest is computed from. */
export function approvalSummary(r: ApprovalRecord, origin: string, now: number) {
  return {
    id: r.id,
    state: stateAt(r, now),
    status: statusLine(r, now),
    requester: { subject: r.requester.subject, ...(r.requester.name ? { name: r.requester.name } : {}) },
    effect: r.effect,
    effectDigest: r.effectDigest,
    // What a person reads (the same rule as every surface); `effect` above is the whole, for a program.
    preview: previewJson(r.effect),
    summary: previewLines(r.effect, ALL_ON_PAGE).join('; '),
    reason: r.reason,
    ...(r.risk ? { risk: r.risk } : {}),
    role: r.role,
    votes: {
      approvals: countOf(r, 'approve'),
      denials: countOf(r, 'deny'),
      needed: { approve: r.approve, deny: r.deny },
      list: r.votes.map((v) => ({
        by: v.by.subject,
        decision: v.decision,
        comment: v.comment,
        at: new Date(v.at).toISOString(),
      })),
    },
    createdAt: new Date(r.createdAt).toISOString(),
    expiresAt: new Date(r.expiresAt).toISOString(),
    grantTtlMs: r.grantTtlMs,
    url: `${origin}/mrtr/approvals/${r.id}`,
  };
}

/** What an API vote records as seen: the fixed facts of the summary (not the votes, which move). */
export const apiSeenDigest = (r: ApprovalRecord): string =>
  digestOf(
    canonicalJson({
      id: r.id,
      requester: r.requester,
      effect: r.effect,
      effectDigest: r.effectDigest,
      reason: r.reason,
      role: r.role,
      approve: r.approve,
      deny: r.deny,
      expiresAt: r.expiresAt,
      grantTtlMs: r.grantTtlMs,
    }),
  );
