// The gateway's unit tests, for `npm run mutation:gateway`: the mutation config's settings with only the tests that
// need no built dist/ and no upstream process.
import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/gateway/policy.test.ts',
      'test/gateway/config.test.ts',
      'test/gateway/paths.test.ts',
      'test/gateway/paths-unicode.test.ts',
      'test/gateway/pins.test.ts',
      'test/gateway/rate-limit.test.ts',
      'test/gateway/names.test.ts',
    ],
  },
});
