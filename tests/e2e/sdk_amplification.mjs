// Retry amplification with the official SDKs: upstream calls per request when the SDK keeps its
// default retries (2) and when it is set to maxRetries: 0, for a provider that answers every call
// with a 429 or a 529. Switchyard retries on its own and tells the SDKs not to retry on top
// (x-should-retry: false), so both rows should cost the same.
//
//   node tests/e2e/sdk_amplification.mjs [requests]      (bench/sdk_amplification.sh builds first)
//
// needs SWITCHYARD_BIN and SWITCHYARD_MOCK_BIN, like the tests.

import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, metricValue } from '../integration/harness.mjs';

const FAULTS = {
  // retry-after as the providers send it; `fast` shortens it for the test suite.
  429: (fast) => (fast ? 'status=429;retry_after_ms=100' : 'status=429;retry_after=1'),
  529: () => 'status=529',
};

async function call(sdk, gateway, maxRetries) {
  try {
    if (sdk === 'openai') {
      const client = new OpenAI({ baseURL: `${gateway.base}/v1`, apiKey: 'unused', maxRetries });
      await client.chat.completions.create({
        model: 'openai-upstream', messages: [{ role: 'user', content: 'Hello' }],
      });
    } else {
      const client = new Anthropic({ baseURL: gateway.base, apiKey: 'unused', maxRetries });
      await client.messages.create({
        model: 'anthropic-upstream', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }],
      });
    }
    return 200;
  } catch (error) {
    return error.status ?? 'no status';
  }
}

// One row: a fresh gateway (so no row inherits another's cooldowns), `requests` requests in a
// row. Returns upstream calls per request and seconds per request.
async function row(mock, { sdk, status, maxRetries, requests, fast }) {
  await mock.scenario([{ fault: FAULTS[status](fast) }]);
  const p = mock.port;
  const gateway = await startGateway(`
retry: {base_ms: ${fast ? 10 : 500}, cap_ms: ${fast ? 50 : 20000}}
models:
  - name: openai-upstream
    deployments: [{name: openai-upstream, model: gpt-4o, api_base: "http://127.0.0.1:${p}/v1"}]
  - name: anthropic-upstream
    deployments: [{name: anthropic-upstream, provider: anthropic, model: claude-sonnet-4-5,
                   api_key: unused, api_base: "http://127.0.0.1:${p}/v1"}]
`, { env: {} });
  try {
    await mock.reset();
    const statuses = new Set();
    const t0 = Date.now();
    for (let i = 0; i < requests; i++) statuses.add(await call(sdk, gateway, maxRetries));
    const seconds = (Date.now() - t0) / 1000 / requests;
    const calls = (await mock.stats()).total / requests;
    // Requests that arrived as an SDK's own retry (x-stainless-retry-count >= 1).
    const sdkRetries = metricValue(await gateway.metrics(), 'switchyard_client_retries_total') ?? 0;
    return { sdk, status, maxRetries, calls, seconds, sdkRetries,
             answered: [...statuses].join(',') };
  } finally {
    await gateway.stop();
  }
}

// Every SDK, fault and retry setting. `fast` shortens retry-after and backoff for the tests.
export async function measure({ requests = 3, fast = false } = {}) {
  const mock = await startMock();
  try {
    const rows = [];
    for (const sdk of ['openai', 'anthropic']) {
      for (const status of [429, 529]) {
        for (const maxRetries of [undefined, 0]) {
          rows.push(await row(mock, { sdk, status, maxRetries, requests, fast }));
        }
      }
    }
    return rows;
  } finally {
    await mock.stop();
  }
}

export function table(rows) {
  const lines = ['| SDK | upstream answer | SDK maxRetries | upstream calls per request | s per request | SDK retries sent | client saw |',
                 '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    lines.push(`| ${r.sdk} | ${r.status} | ${r.maxRetries === undefined ? 'default (2)' : r.maxRetries} ` +
               `| ${r.calls.toFixed(2)} | ${r.seconds.toFixed(2)} | ${r.sdkRetries} | ${r.answered} |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const requests = Number(process.argv[2] ?? 3);
  console.log(table(await measure({ requests })));
}
