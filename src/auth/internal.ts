// Lent to the other rooms of mrtr, not public API (mrtr/auth is index.ts): the small HTML kit of the server's own pages.
export { escapeHtml, Html, html, type PageFrame, readForm, sendPage } from './signin/index.js';
