// Lent to the other rooms of mrtr, not public API (mrtr/client is index.ts): the form reading the CLI's terminal uses,
// and client_secret_basic, which the gateway's token exchange sends as the OAuth client does.
export { checkContent, checkValue, type FormField, parseTyped, readForm } from './form.js';
export { clientSecretBasic } from './oauth/client-secret-basic.js';
