// A LiteLLM proxy config served as it is: the source article's router_settings block verbatim,
// with a model_list in front of the mock. It must behave as the article documents: retries on a
// group first (RateLimitErrorRetries 3, other classes 2, none for bad requests), then the
// fallbacks; three failures a minute allowed, the fourth cools the deployment for 30 s.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GATEWAY_BIN, startMock, startGateway, request, tempDir } from './harness.mjs';

const MASTER = 'sk-litellm-master-0123456789';
// The block verbatim, shared with tests/unit/config/litellm_import_test.cc.
const ARTICLE_BLOCK = readFileSync(
  new URL('../fixtures/litellm_article_block.yaml', import.meta.url), 'utf8');

let mock;
let gateway;
let file;

function litellmConfig(port) {
  const entry = (name, model) => `  - model_name: ${name}
    litellm_params:
      model: openai/${model}
      api_base: http://127.0.0.1:${port}/v1
      api_key: os.environ/OPENAI_API_KEY
`;
  return `model_list:
${entry('support-primary', 'primary-model')}${entry('support-secondary', 'secondary-model')}${entry('limited', 'limited-model')}${entry('strict', 'strict-model')}general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
${ARTICLE_BLOCK}`;
}

before(async () => {
  mock = await startMock();
  await mock.scenario([
    { match: { model: 'primary-model' }, fault: 'status=500' },
    { match: { model: 'limited-model' }, fault: 'status=429;retry_after_ms=20' },
    { match: { model: 'strict-model' }, fault: 'status=400' },
  ]);
  const dir = tempDir();
  file = path.join(dir, 'litellm.yaml');
  writeFileSync(file, litellmConfig(mock.port));
  gateway = await startGateway(litellmConfig(mock.port), {
    env: { OPENAI_API_KEY: 'sk-upstream', LITELLM_MASTER_KEY: MASTER },
  });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (model) => request(gateway.port, {
  body: { model, messages: [{ role: 'user', content: 'Hello' }] },
  headers: { authorization: `Bearer ${MASTER}` },
});
const calls = async (model) => (await mock.stats()).requests.filter((r) => r.model === model).length;

test('switchyard import litellm prints a config that loads, and says what it left out', () => {
  const out = spawnSync(GATEWAY_BIN, ['import', 'litellm', file], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /cooldown_ms: 30000/);
  assert.match(out.stdout, /num_retries: 3/);
  assert.match(out.stderr, /enable_pre_call_checks/);
  const check = spawnSync(GATEWAY_BIN, ['check', file], {
    encoding: 'utf8', env: { ...process.env, OPENAI_API_KEY: 'x', LITELLM_MASTER_KEY: 'y' },
  });
  assert.equal(check.status, 0, check.stderr);
});

test('server errors: two retries on the group, then the fallback', async () => {
  const res = await chat('support-primary');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'support-secondary');
  assert.equal(res.headers['x-switchyard-fallback-depth'], '1');
  assert.equal(await calls('primary-model'), 3, '1 + DefaultRetries 2');
});

test('the fourth failure within a minute cools the deployment for cooldown_time (30 s)', async () => {
  const second = await chat('support-primary');
  assert.equal(second.status, 200);
  assert.equal(await calls('primary-model'), 4, 'one attempt, then it cooled: no retry into it');
  const third = await chat('support-primary');
  assert.equal(third.status, 200);
  assert.equal(third.headers['x-switchyard-attempts'], '1', 'straight to the fallback');
  assert.equal(await calls('primary-model'), 4);
  const status = await (await fetch(`${gateway.base}/status`,
    { headers: { authorization: `Bearer ${MASTER}` } })).json();
  const primary = status.deployments.find((d) => d.model === 'primary-model');
  assert.equal(primary.state, 'cooling');
  const left = Date.parse(primary.cooling_until) - Date.now();
  assert.ok(left > 25_000 && left <= 31_000, `cooling for ${left} ms more`);
});

test('rate limits: RateLimitErrorRetries 3; bad requests: never retried', async () => {
  const limited = await chat('limited');
  assert.equal(limited.status, 429);
  assert.equal(await calls('limited-model'), 4, '1 + RateLimitErrorRetries 3');
  const strict = await chat('strict');
  assert.equal(strict.status, 400);
  assert.equal(await calls('strict-model'), 1);
});
