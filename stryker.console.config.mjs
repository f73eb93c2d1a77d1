// `npm run mutation:console`: mutation testing of the console's gatekeeping — who may open which panel, the CSRF and
// role checks before a decision, what a card shows — against the console's in-process tests.
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'src/console/console.ts',
    'src/console/roles.ts',
    'src/console/approvals-panel.ts',
    'src/console/flows-panel.ts',
    'src/console/audit-panel.ts',
    'src/console/live.ts',
    'src/controls/approval-decisions.ts',
  ],
  vitest: { ...base.vitest, configFile: 'vitest.console-mutation.config.ts' },
  // No score of this run is on record: `break` is set low and safe until a run says more.
  thresholds: { high: 80, low: 60, break: 50 },
  reporters: ['clear-text', 'json', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/console.json' },
};
