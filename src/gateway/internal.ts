// The gateway's parts the CLI uses that are not public API.
export { DURATION_HINT, parseDuration } from './durations.js';
