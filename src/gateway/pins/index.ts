// pins: tool-definition pinning, the gateway's defence against an upstream changing a tool after it was approved.
export {
  definitionDigest,
  PINNED_FIELDS,
  type PinnedKind,
  pinnedDefinition,
  pinnedKindOf,
  SURFACE_PINNED_FIELDS,
  surfacePinUpstream,
} from './digest.js';
export { describeDrift } from './drift.js';
export { FleetPins, type FleetPinsOptions, PINS_TOPIC } from './fleet-pins.js';
export { LOCK_FILE_VERSION, type PinnedTool } from './lock-file.js';
export { PinBook, type PinBookOptions, type PinCheck, type PinDrift } from './pin-book.js';
export { type PinCommandOptions, type PinCommandPlan, pinCommandPlan, type SeenTool } from './pin-command.js';
export { pinKey, pinPattern, splitPinKey } from './pin-key.js';
