// The audit room's own tests, for `npm run mutation:audit`: the mutation config's settings with only test/audit.
import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

export default defineConfig({ ...base, test: { ...base.test, include: ['test/audit/**/*.test.ts'] } });
