// Lent to the other rooms of mrtr, not public API (mrtr/client is index.ts): the form reading the CLI's terminal uses,
// client_secret_basic, which the gateway's token exchange sends as the OAuth client does, the keep-alive agent
// the gateway shares between its clients of one upstream, and the OAuth document fetching (https or loopback, capped,
// timed) a server's connections use as the third party's OAuth client.
export { checkContent, checkValue, type FormField, parseTyped, readForm } from './form.js';
export { keepAliveAgent } from './http-transport.js';
export { clientSecretBasic } from './oauth/client-secret-basic.js';
export { checkOAuthUrl, deadline, documentFetch, isLoopback } from './oauth/fetch-document.js';
