// Lent to the other rooms of mrtr, not public API (mrtr/server is index.ts): the gateway adds its guard and store to
// the options it is given, in either spelling of this release.

// The gateway's upstream round as a client span of the round that relays it.
export { inClientSpan } from './round/client-span.js';
export { withOptionGroups } from './server-options.js';
