// Batches on the provider's batch API (docs/batches.md#on-the-providers-batch-api), with the
// official SDKs against a real gateway and the mock's batch endpoints over real sockets: an OpenAI
// batch submitted as an OpenAI provider batch, message batches on an Anthropic deployment and,
// translated, on an OpenAI one; results back under the client's custom_ids, priced at the batch
// price against the key; partial failures and expiry as the provider reports them; a refusal (a
// full batch queue) hands the job to the gateway; a kill -9 while the provider works resumes the
// same provider batch.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, eventually, request, tempDir } from '../integration/harness.mjs';

const MASTER = 'test-master-key-provider-0123';
const KEY = 'sk-provider-batches-0123456789';
let mock;
const running = [];


after(async () => {
  for (const g of running) if (g.child.exitCode === null) g.child.kill('SIGKILL');
  await mock?.stop();
});

function config() {
  const base = `http://127.0.0.1:${mock.port}/v1`;
  return `
server: {master_key: os.environ/MASTER}
retry: {base_ms: 5, cap_ms: 20}
batches: {poll_ms: 100, max_poll_ms: 400}
models:
  - name: gpt-provider
    batch: {mode: provider}
    deployments: [{name: gpt-dep, provider: openai, model: gpt-upstream, api_base: "${base}", input_price: 2, output_price: 8}]
  - name: gpt-priced
    batch: {mode: auto}
    deployments: [{name: priced-dep, provider: openai, model: gpt-priced-upstream, api_base: "${base}", input_price: 2, output_price: 8, batch_output_price: 1}]
  - name: claude-provider
    batch: {mode: provider}
    deployments: [{name: claude-dep, provider: anthropic, model: claude-upstream, api_base: "${base}"}]
  - name: refused
    batch: {mode: provider}
    deployments: [{name: refused-dep, provider: openai, model: refused-upstream, api_base: "${base}"}]
  - name: claude-refused
    batch: {mode: provider}
    deployments: [{name: claude-refused-dep, provider: anthropic, model: claude-refused-upstream, api_base: "${base}"}]
keys:
  - {name: batcher, key: os.environ/KEY}
`;
}

async function start(dataDir) {
  const gateway = await startGateway(config(), { dataDir, env: { MASTER, KEY } });
  running.push(gateway);
  return gateway;
}

let gateway;
before(async () => {
  mock = await startMock(['--batch-ms', '300']);
  gateway = await start();
});

const openai = (key = KEY) => new OpenAI({ apiKey: key, baseURL: `${gateway.base}/v1`, maxRetries: 0 });
const anthropic = (key = KEY) => new Anthropic({ apiKey: key, baseURL: gateway.base, maxRetries: 0 });

function lines(n, model, prefix) {
  return Array.from({ length: n }, (_, i) => JSON.stringify({
    custom_id: `${prefix}-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `line ${i}` }] },
  })).join('\n');
}

async function run(client, text, window = '24h') {
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
  const created = await client.batches.create({
    input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: window,
  });
  return eventually(async () => {
    const b = await client.batches.retrieve(created.id);
    return ['completed', 'failed', 'expired', 'cancelled'].includes(b.status) && b;
  }, { what: `batch ${created.id} to end`, timeoutMs: 30000, intervalMs: 50 });
}

const jsonl = (text) => text.split('\n').filter((l) => l).map((l) => JSON.parse(l));
const syncRequests = async (model) => (await mock.stats()).requests.filter((r) => r.model === model).length;
const spent = async () => {
  const r = await request(gateway.port, { method: 'GET', path: '/admin/keys', headers: { authorization: `Bearer ${MASTER}` } });
  return JSON.parse(r.body).keys.find((k) => k.name === 'batcher').usage;
};

test('an OpenAI batch on the provider batch API: 20 results, none sent synchronously, half price', async () => {
  const before = (await mock.stats()).batches;
  const usageBefore = await spent();
  const batch = await run(openai(), lines(20, 'gpt-provider', 'p'));
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 20, completed: 20, failed: 0 });
  const output = jsonl(await (await openai().files.content(batch.output_file_id)).text());
  assert.deepEqual(output.map((l) => l.custom_id).sort(), Array.from({ length: 20 }, (_, i) => `p-${i}`).sort());
  assert.ok(output.every((l) => l.response.status_code === 200 && l.response.body.model === 'gpt-upstream'));
  const after = (await mock.stats()).batches;
  assert.equal(after.created - before.created, 1, 'one provider batch');
  assert.equal(after.lines - before.lines, 20);
  assert.ok(after.polls > before.polls);
  assert.equal(await syncRequests('gpt-upstream'), 0, 'no line went to the synchronous API');
  // Priced at half the synchronous price: (input * 2 + output * 8) / 1e6 / 2.
  let input = 0;
  let out = 0;
  for (const l of output) {
    input += l.response.body.usage.prompt_tokens;
    out += l.response.body.usage.completion_tokens;
  }
  const usage = await spent();
  assert.equal(usage.requests_this_month - usageBefore.requests_this_month, 20);
  assert.equal(usage.tokens_this_month - usageBefore.tokens_this_month, input + out);
  const cost = usage.spent_this_month - usageBefore.spent_this_month;
  assert.ok(Math.abs(cost - (input * 2 + out * 8) / 1e6 / 2) < 1e-12, `cost ${cost}`);
  assert.equal(batch.usage.input_tokens, input);
  assert.equal(batch.usage.output_tokens, out);
});

test('batch_output_price overrides the ratio; a failing line is in the error file', async () => {
  await mock.scenario([{ match: { model: 'gpt-priced-upstream' }, fault: 'status=500', times: 2 }]);
  const usageBefore = await spent();
  const batch = await run(openai(), lines(6, 'gpt-priced', 'q'));
  await mock.scenario([]);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 6, completed: 4, failed: 2 });
  const errors = jsonl(await (await openai().files.content(batch.error_file_id)).text());
  assert.equal(errors.length, 2);
  assert.ok(errors.every((l) => l.response.status_code === 500 && l.response.body.error.type === 'server_error'));
  const output = jsonl(await (await openai().files.content(batch.output_file_id)).text());
  let input = 0;
  let out = 0;
  for (const l of output) {
    input += l.response.body.usage.prompt_tokens;
    out += l.response.body.usage.completion_tokens;
  }
  const cost = (await spent()).spent_this_month - usageBefore.spent_this_month;
  assert.ok(Math.abs(cost - (input * 2 * 0.5 + out * 1) / 1e6) < 1e-12, `cost ${cost}`);
});

test('Anthropic message batches on the provider: an Anthropic deployment, and an OpenAI one translated', async () => {
  const client = anthropic();
  const requests = [
    ...Array.from({ length: 4 }, (_, i) => ({
      custom_id: `native-${i}`,
      params: { model: 'claude-provider', max_tokens: 32, messages: [{ role: 'user', content: `hi ${i}` }] },
    })),
  ];
  const ended = async (id) => eventually(async () => {
    const b = await client.messages.batches.retrieve(id);
    return b.processing_status === 'ended' && b;
  }, { what: 'the message batch to end', timeoutMs: 30000, intervalMs: 50 });
  const before = (await mock.stats()).batches;
  let batch = await ended((await client.messages.batches.create({ requests })).id);
  assert.deepEqual(batch.request_counts, { processing: 0, succeeded: 4, errored: 0, canceled: 0, expired: 0 });
  for await (const r of await client.messages.batches.results(batch.id)) {
    assert.equal(r.result.type, 'succeeded');
    assert.equal(r.result.message.model, 'claude-upstream');
  }
  // The same Anthropic client, a group on an OpenAI deployment: an OpenAI provider batch.
  const translated = requests.map((r, i) => ({ custom_id: `translated-${i}`, params: { ...r.params, model: 'gpt-provider' } }));
  batch = await ended((await client.messages.batches.create({ requests: translated })).id);
  assert.equal(batch.request_counts.succeeded, 4);
  const seen = [];
  for await (const r of await client.messages.batches.results(batch.id)) {
    assert.equal(r.result.type, 'succeeded');
    assert.equal(r.result.message.type, 'message');
    assert.equal(r.result.message.content[0].type, 'text');
    seen.push(r.custom_id);
  }
  assert.deepEqual(seen.sort(), translated.map((r) => r.custom_id).sort());
  const after = (await mock.stats()).batches;
  assert.equal(after.created - before.created, 2);
  assert.equal(after.lines - before.lines, 8);
  assert.equal(await syncRequests('claude-upstream'), 0);
});

test('a provider that refuses the batch (full queue) hands the job to the gateway', async () => {
  await mock.scenario([
    { match: { model: 'refused-upstream' }, fault: 'batch_refuse=queue_limit' },
    { match: { model: 'claude-refused-upstream' }, fault: 'batch_refuse=queue_limit' },
  ]);
  const batch = await run(openai(), lines(5, 'refused', 'r'));
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 5, completed: 5, failed: 0 });
  assert.equal(await syncRequests('refused-upstream'), 5, 'the gateway ran the lines itself');
  assert.match(gateway.stderr(), /refused it \(token_limit_exceeded: Enqueued token limit reached/);
  // Anthropic refuses with a 429 at once; the same hand-over.
  const client = anthropic();
  const created = await client.messages.batches.create({
    requests: [{ custom_id: 'c', params: { model: 'claude-refused', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }],
  });
  const ended = await eventually(async () => {
    const b = await client.messages.batches.retrieve(created.id);
    return b.processing_status === 'ended' && b;
  }, { what: 'the refused message batch to end', timeoutMs: 30000, intervalMs: 50 });
  assert.equal(ended.request_counts.succeeded, 1);
  assert.equal(await syncRequests('claude-refused-upstream'), 1);
  await mock.scenario([]);
});

test('a provider batch that expires: what ran is kept, the rest expired', async () => {
  await mock.scenario([{ match: { model: 'gpt-upstream' }, fault: 'batch_expire=1' }]);
  const batch = await run(openai(), lines(6, 'gpt-provider', 'x'));
  await mock.scenario([]);
  assert.equal(batch.status, 'expired');
  assert.deepEqual(batch.request_counts, { total: 6, completed: 3, failed: 3 });
  const errors = jsonl(await (await openai().files.content(batch.error_file_id)).text());
  assert.ok(errors.every((l) => l.response === null && l.error.code === 'batch_expired'));
});

test('a cancel is sent on to the provider; its requests come back cancelled', async () => {
  await mock.scenario([{ match: { model: 'gpt-upstream' }, fault: 'batch_ms=3000' }]);
  const client = openai();
  const file = await client.files.create({ file: await toFile(Buffer.from(lines(4, 'gpt-provider', 'c')), 'c.jsonl'), purpose: 'batch' });
  const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await eventually(() => new RegExp(`${created.id}: 4 line\\(s\\) on gpt-dep`).test(gateway.stderr()),
                   { what: 'the provider batch', timeoutMs: 10000 });
  assert.equal((await client.batches.cancel(created.id)).status, 'cancelling');
  const batch = await eventually(async () => {
    const b = await client.batches.retrieve(created.id);
    return b.status === 'cancelled' && b;
  }, { what: 'the batch to be cancelled', timeoutMs: 30000, intervalMs: 50 });
  await mock.scenario([]);
  assert.deepEqual(batch.request_counts, { total: 4, completed: 0, failed: 4 });
  const errors = jsonl(await (await client.files.content(batch.error_file_id)).text());
  assert.ok(errors.every((l) => l.error.code === 'batch_cancelled'));
  const metrics = await gateway.metrics(MASTER);
  assert.match(metrics, /switchyard_batch_lines_total\{mode="provider",result="canceled"\} [1-9]/);
  assert.match(metrics, /switchyard_batch_jobs_total\{status="cancelled"\} [1-9]/);
});

test('kill -9 while the provider works: after a restart the same provider batch is read', async () => {
  const dataDir = tempDir();
  let own = await start(dataDir);
  await mock.scenario([{ match: { model: 'gpt-upstream' }, fault: 'batch_ms=2500' }]);
  const client = new OpenAI({ apiKey: KEY, baseURL: `${own.base}/v1`, maxRetries: 0 });
  const file = await client.files.create({ file: await toFile(Buffer.from(lines(10, 'gpt-provider', 'k')), 'k.jsonl'), purpose: 'batch' });
  const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await eventually(() => /on gpt-dep's batch API as batch_/.test(own.stderr()), { what: 'the provider batch', timeoutMs: 10000 });
  const before = (await mock.stats()).batches.created;
  own.child.kill('SIGKILL');
  await own.exited();
  await mock.scenario([]);
  own = await start(dataDir);
  const restarted = new OpenAI({ apiKey: KEY, baseURL: `${own.base}/v1`, maxRetries: 0 });
  const batch = await eventually(async () => {
    const b = await restarted.batches.retrieve(created.id);
    return b.status === 'completed' && b;
  }, { what: 'the resumed batch to complete', timeoutMs: 30000, intervalMs: 100 });
  assert.equal(batch.request_counts.completed, 10);
  assert.equal((await mock.stats()).batches.created, before, 'no second provider batch');
  const output = jsonl(await (await restarted.files.content(batch.output_file_id)).text());
  assert.equal(new Set(output.map((l) => l.custom_id)).size, 10);
  await own.stop();
});
