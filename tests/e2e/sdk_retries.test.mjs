// The official SDKs with their default retries cost no more upstream calls than with
// maxRetries: 0: Switchyard is the one layer that retries (docs/resilience.md#one-layer-retries).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measure, table } from './sdk_amplification.mjs';

test('SDK default retries do not multiply upstream calls (persistent 429 and 529)', async () => {
  const rows = await measure({ requests: 2, fast: true });
  console.log(table(rows));
  for (const sdk of ['openai', 'anthropic']) {
    for (const status of [429, 529]) {
      const pick = (maxRetries) =>
        rows.find((r) => r.sdk === sdk && r.status === status && r.maxRetries === maxRetries);
      const defaults = pick(undefined);
      const none = pick(0);
      assert.ok(none.calls >= 1, `${sdk} ${status}: the gateway reached the upstream`);
      assert.equal(defaults.calls, none.calls, `${sdk} ${status}: calls per request`);
      assert.equal(defaults.sdkRetries, 0, `${sdk} ${status}: the SDK obeyed x-should-retry`);
      assert.equal(defaults.answered, none.answered, `${sdk} ${status}: what the client saw`);
    }
  }
});
