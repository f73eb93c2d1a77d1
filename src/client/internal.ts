// Lent to the other rooms of mrtr, not public API (mrtr/client is index.ts): the form reading the CLI's terminal uses,
// the client authentication the gateway's token exchange and a server's connections send as the OAuth client does,
// the keep-alive agent the gateway shares between its clients of one upstream, and the OAuth document fetching
// (https or loopback, capped, timed) a server's connections use as the third party's OAuth client.
export { bearerDigest } from './bearer-digest.js';
export { checkContent, checkValue, type FormField, parseTyped, readForm } from './form.js';
export { keepAliveAgent } from './http-transport.js';
export { clientAuth, clientSecretBasic } from './oauth/client-secret-basic.js';
export { checkOAuthUrl, deadline, documentFetch, isLoopback } from './oauth/fetch-document.js';
