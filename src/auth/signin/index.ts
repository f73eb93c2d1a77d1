// Browser sign-in for the server's own pages.
export {
  BrowserSignIn,
  type BrowserSignInOptions,
  SIGNIN_DEFAULTS,
  SignInConfigError,
} from './browser-signin.js';
export { FormError, readForm } from './form.js';
export { escapeHtml, Html, html, type PageFrame, sendPage } from './html.js';
export type { OidcSignInOptions } from './oidc-client.js';
export { type ExpectedPrincipal, isSamePrincipal, type PageSession } from './page-session.js';
export type { SigningKey } from './signed-value.js';
