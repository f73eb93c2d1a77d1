// The server's own pages: escaped text, one layout, and headers that let a browser run nothing it did not get from
// us (a strict Content-Security-Policy, no framing, no sniffing, no referrer to other sites, never cached).

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text for HTML content and attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Markup built only from escaped text: the type is the promise that no caller forgot to escape. */
export class Html {
  constructor(readonly markup: string) {}
}

/** `html\`<p>${value}</p>\``: every interpolated value is escaped unless it is already Html. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) {
      out +=
        item instanceof Html
          ? item.markup
          : escapeHtml(item === undefined || item === null ? '' : String(item));
    }
    out += strings[i + 1]!;
  });
  return new Html(out);
}

export const STYLESHEET_PATH = '/mrtr/assets/mrtr.css';

/** Readable on a phone, high contrast, no web fonts, no script. */
export const STYLESHEET = `:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{max-width:40rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.4rem}main>*+*{margin-top:1rem}
.card{border:1px solid #8886;border-radius:.5rem;padding:1rem}
button,.button{font:inherit;padding:.6rem 1rem;border-radius:.4rem;border:1px solid #444;background:#1f4fd1;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:transparent;color:inherit}
label{display:block;font-weight:600}input{font:inherit;padding:.5rem;box-sizing:border-box}
input:not([type=radio]):not([type=checkbox]){width:100%}input[type=radio]{margin-right:.5rem}
h2{font-size:1.1rem;margin:.75rem 0 .25rem}table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid #8884;overflow-wrap:anywhere}
textarea{width:100%;font:inherit;box-sizing:border-box;padding:.5rem}button.deny{background:#b3261e}
ul.list{list-style:none;padding:0}ul.list>li+li{margin-top:.5rem}
.muted{opacity:.75}.error{border-color:#c00}code{word-break:break-all}
:focus-visible{outline:3px solid #f90;outline-offset:2px}
body:has(header.console){max-width:64rem}
header.console{display:flex;flex-wrap:wrap;gap:.5rem 1rem;justify-content:space-between;align-items:center;border-bottom:1px solid #8886;padding-bottom:.5rem}
header.console nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}[aria-current=page]{font-weight:700}
.whoami{display:flex;gap:.5rem;align-items:center}.whoami button{padding:.3rem .6rem}
.risk-high{color:#b3261e;font-weight:700}.badge{border:1px solid #8886;border-radius:1rem;padding:0 .5rem}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}.filters label{font-weight:400}
.filters input,.filters select{width:auto!important}.scroll{overflow-x:auto}`;

const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on our own form posts.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** What a page may add around its main content: a banner (navigation) and scripts of our own. */
export interface PageFrame {
  /** Markup before `<main>` (a `<header>` with navigation). */
  readonly banner?: Html;
  /** Paths of our own scripts (`/mrtr/assets/…`): the page's CSP then allows scripts and fetches from this origin. */
  readonly scripts?: readonly string[];
}

/** A whole page with its security headers. */
export function sendPage(
  res: PageResponse,
  status: number,
  title: string,
  body: Html,
  headers: Record<string, string | string[]> = {},
  frame: PageFrame = {},
): void {
  const scripts = (frame.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`);
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="${STYLESHEET_PATH}">${scripts}</head>
<body>${frame.banner ?? ''}<main><h1>${title}</h1>${body}</main></body></html>`;
  const csp = scripts.length
    ? {
        'content-security-policy': `${SECURITY_HEADERS['content-security-policy']}; script-src 'self'; connect-src 'self'`,
      }
    : {};
  res.writeHead(status, { ...SECURITY_HEADERS, ...csp, ...headers });
  res.end(page.markup);
}

export function sendStylesheet(res: PageResponse): void {
  res.writeHead(200, {
    'content-type': 'text/css; charset=utf-8',
    'cache-control': 'public, max-age=3600',
    'x-content-type-options': 'nosniff',
  });
  res.end(STYLESHEET);
}

/** A 303 to `location` (after a POST, or into a sign-in), with any cookies to set. */
export function redirect(res: PageResponse, location: string, cookies: string[] = []): void {
  res.writeHead(303, {
    location,
    'cache-control': 'no-store',
    ...(cookies.length ? { 'set-cookie': cookies } : {}),
  });
  res.end();
}

import type { PageResponse } from '../../protocol/index.js';
