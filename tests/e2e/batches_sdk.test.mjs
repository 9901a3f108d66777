// The Batch APIs (docs/batches.md) as the official SDKs call them, against a real gateway and the
// mock provider over real sockets. Gateway mode: the gateway runs every line itself through its
// attempt engine. OpenAI's files and batches (upload through FormData and as a stream, create,
// poll, read the output and error files, page through lists, cancel, a short completion window
// that expires), Anthropic's message batches against an Anthropic deployment and an OpenAI one
// (translated), and who sees what: a key sees only its own files and batches, the master key all.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, eventually, tempDir } from '../integration/harness.mjs';

const MASTER = 'test-master-key-batches-0123';
const KEY_A = 'sk-batches-a-0123456789';
const KEY_B = 'sk-batches-b-0123456789';
let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const openai = `http://127.0.0.1:${mock.port}/v1`;
  const anthropic = `http://127.0.0.1:${mock.port}/v1`;
  gateway = await startGateway(`
server: {master_key: os.environ/MASTER}
retry: {base_ms: 5, cap_ms: 20}
models:
  - name: gpt-batch
    deployments: [{provider: openai, model: gpt-batch, api_base: "${openai}"}]
  - name: slow-batch
    deployments: [{provider: openai, model: slow-batch, api_base: "${openai}"}]
  - name: claude-batch
    deployments: [{provider: anthropic, model: claude-batch, api_base: "${anthropic}"}]
  - name: embed-batch
    mode: embeddings
    deployments: [{provider: openai, model: embed-batch, api_base: "${openai}"}]
keys:
  - {name: a, key: os.environ/KEY_A}
  - {name: b, key: os.environ/KEY_B}
`, { env: { MASTER, KEY_A, KEY_B } });
  await mock.scenario([{ match: { model: 'slow-batch' }, fault: 'delay_headers_ms=400' }]);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const openaiAs = (key) => new OpenAI({ apiKey: key, baseURL: `${gateway.base}/v1`, maxRetries: 0 });
const anthropicAs = (key) => new Anthropic({ apiKey: key, baseURL: gateway.base, maxRetries: 0 });

function chatLines(n, model = 'gpt-batch', prefix = 'req') {
  return Array.from({ length: n }, (_, i) => JSON.stringify({
    custom_id: `${prefix}-${i}`,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `line ${i}` }] },
  })).join('\n') + '\n';
}

async function finished(client, id, timeoutMs = 20000) {
  return eventually(async () => {
    const batch = await client.batches.retrieve(id);
    return ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && batch;
  }, { what: `batch ${id} to end`, timeoutMs, intervalMs: 50 });
}

const jsonl = (text) => text.split('\n').filter((l) => l).map((l) => JSON.parse(l));

test('OpenAI SDK: a 20-line file uploaded, batched and read back, each custom_id once', async () => {
  const client = openaiAs(KEY_A);
  const file = await client.files.create({
    file: await toFile(Buffer.from(chatLines(20)), 'batch.jsonl'), purpose: 'batch',
  });
  assert.equal(file.object, 'file');
  assert.equal(file.purpose, 'batch');
  assert.equal(file.filename, 'batch.jsonl');
  assert.match(file.id, /^file-/);
  const created = await client.batches.create({
    input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h',
    metadata: { job: 'nightly' },
  });
  assert.equal(created.object, 'batch');
  assert.match(created.id, /^batch_/);
  assert.deepEqual(created.metadata, { job: 'nightly' });
  const batch = await finished(client, created.id);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 20, completed: 20, failed: 0 });
  assert.equal(batch.error_file_id, null);
  assert.ok(batch.completed_at >= batch.created_at);
  const output = jsonl(await (await client.files.content(batch.output_file_id)).text());
  assert.equal(output.length, 20);
  assert.deepEqual(output.map((l) => l.custom_id).sort(),
                   Array.from({ length: 20 }, (_, i) => `req-${i}`).sort());
  for (const line of output) {
    assert.match(line.id, /^batch_req_/);
    assert.equal(line.error, null);
    assert.equal(line.response.status_code, 200);
    assert.match(line.response.request_id, /^req_/);
    assert.equal(line.response.body.object, 'chat.completion');
  }
  const outputFile = await client.files.retrieve(batch.output_file_id);
  assert.equal(outputFile.purpose, 'batch_output');
  // The lines ran on the batch lane, as the key's requests: its log lines say so.
  const lines = gateway.logs.filter((l) => l.route === 'chat' && l.model_group === 'gpt-batch');
  assert.ok(lines.length >= 20);
  assert.ok(lines.every((l) => l.lane === 'batch' && l.key === 'a'));
});

test('OpenAI SDK: a file uploaded as a stream; failures go to the error file', async () => {
  const client = openaiAs(KEY_A);
  const dir = tempDir();
  const file = path.join(dir, 'mixed.jsonl');
  const body = chatLines(3) + JSON.stringify({
    custom_id: 'unknown-model', method: 'POST', url: '/v1/chat/completions',
    body: { model: 'no-such-group', messages: [{ role: 'user', content: 'x' }] },
  }) + '\n';
  writeFileSync(file, body);
  const uploaded = await client.files.create({ file: createReadStream(file), purpose: 'batch' });
  assert.equal(uploaded.bytes, Buffer.byteLength(body));
  assert.equal(uploaded.filename, 'mixed.jsonl');
  const created = await client.batches.create({
    input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h',
  });
  const batch = await finished(client, created.id);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 4, completed: 3, failed: 1 });
  const errors = jsonl(await (await client.files.content(batch.error_file_id)).text());
  assert.equal(errors.length, 1);
  assert.equal(errors[0].custom_id, 'unknown-model');
  assert.equal(errors[0].response.status_code, 404);
  assert.equal(errors[0].response.body.error.code, 'model_not_found');
  // The input content comes back as uploaded.
  assert.equal(await (await client.files.content(uploaded.id)).text(), body);
});

test('OpenAI SDK: Responses and embeddings lines; a file that breaks the rules fails validation', async () => {
  const client = openaiAs(MASTER);
  const embeddings = Array.from({ length: 3 }, (_, i) => JSON.stringify({
    custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'embed-batch', input: `text ${i}` },
  })).join('\n');
  let file = await client.files.create({ file: await toFile(Buffer.from(embeddings), 'e.jsonl'), purpose: 'batch' });
  let batch = await finished(client, (await client.batches.create({
    input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h',
  })).id);
  assert.equal(batch.request_counts.completed, 3);
  let output = jsonl(await (await client.files.content(batch.output_file_id)).text());
  assert.ok(output.every((l) => l.response.body.object === 'list'));

  const responses = JSON.stringify({
    custom_id: 'r0', method: 'POST', url: '/v1/responses', body: { model: 'gpt-batch', input: 'hello' },
  });
  file = await client.files.create({ file: await toFile(Buffer.from(responses), 'r.jsonl'), purpose: 'batch' });
  batch = await finished(client, (await client.batches.create({
    input_file_id: file.id, endpoint: '/v1/responses', completion_window: '24h',
  })).id);
  output = jsonl(await (await client.files.content(batch.output_file_id)).text());
  assert.equal(output[0].response.body.object, 'response');

  // A duplicate custom_id, a line for another endpoint and a line that is not JSON.
  const bad = [
    JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-batch', messages: [] } }),
    JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-batch', messages: [] } }),
    JSON.stringify({ custom_id: 'y', method: 'POST', url: '/v1/embeddings', body: { model: 'gpt-batch' } }),
    '{not json',
  ].join('\n');
  file = await client.files.create({ file: await toFile(Buffer.from(bad), 'bad.jsonl'), purpose: 'batch' });
  batch = await finished(client, (await client.batches.create({
    input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h',
  })).id);
  assert.equal(batch.status, 'failed');
  assert.ok(batch.failed_at > 0);
  assert.deepEqual(batch.errors.data.map((e) => [e.code, e.line]),
                   [['duplicate_custom_id', 2], ['url_mismatch', 3], ['invalid_json_line', 4]]);

  // Refused at once: an endpoint that batches do not serve, a window that is no window, an
  // upload for another purpose.
  await assert.rejects(client.batches.create({ input_file_id: file.id, endpoint: '/v1/moderations', completion_window: '24h' }),
                       (e) => e.status === 400 && /endpoint/.test(e.message));
  await assert.rejects(client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '48h' }),
                       (e) => e.status === 400 && /completion_window/.test(e.message));
  await assert.rejects(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' }),
                       (e) => e.status === 400 && /purpose/.test(e.message));
  await assert.rejects(client.batches.retrieve('batch_nope'), (e) => e.status === 404);
});

test('a key sees only its own files and batches; the master key sees all', async () => {
  const a = openaiAs(KEY_A);
  const b = openaiAs(KEY_B);
  const file = await a.files.create({ file: await toFile(Buffer.from(chatLines(1, 'gpt-batch', 'own')), 'own.jsonl'), purpose: 'batch' });
  const batch = await a.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await assert.rejects(b.files.retrieve(file.id), (e) => e.status === 404);
  await assert.rejects(b.batches.retrieve(batch.id), (e) => e.status === 404);
  await assert.rejects(b.batches.cancel(batch.id), (e) => e.status === 404);
  await assert.rejects(b.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
                       (e) => e.status === 404);
  const listedByB = [];
  for await (const x of b.batches.list()) listedByB.push(x.id);
  assert.ok(!listedByB.includes(batch.id));
  const listedByA = [];
  for await (const x of a.batches.list({ limit: 2 })) listedByA.push(x.id);  // pages of two
  assert.ok(listedByA.includes(batch.id));
  assert.equal(new Set(listedByA).size, listedByA.length);
  const all = [];
  for await (const x of openaiAs(MASTER).batches.list({ limit: 100 })) all.push(x.id);
  assert.ok(all.includes(batch.id));
  assert.ok(all.length >= listedByA.length);
  await assert.rejects(openaiAs('sk-wrong').batches.list(), (e) => e.status === 401);
  const filesOfB = [];
  for await (const f of b.files.list()) filesOfB.push(f.id);
  assert.ok(!filesOfB.includes(file.id));
  await finished(a, batch.id);
  assert.deepEqual(await a.files.delete(file.id), { id: file.id, object: 'file', deleted: true });
  await assert.rejects(a.files.retrieve(file.id), (e) => e.status === 404);
});

test('cancel stops new lines and keeps the finished ones; a short window expires', async () => {
  const client = openaiAs(KEY_A);
  const file = await client.files.create({ file: await toFile(Buffer.from(chatLines(40, 'slow-batch', 'slow')), 'slow.jsonl'), purpose: 'batch' });
  const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await eventually(async () => (await client.batches.retrieve(created.id)).request_counts.completed >= 8,
                   { what: 'some lines to finish', timeoutMs: 20000, intervalMs: 50 });
  // Its input cannot be deleted while it runs.
  await assert.rejects(client.files.delete(file.id), (e) => e.status === 400 && /has not ended/.test(e.message));
  const cancelling = await client.batches.cancel(created.id);
  assert.equal(cancelling.status, 'cancelling');
  assert.ok(cancelling.cancelling_at > 0);
  const batch = await finished(client, created.id);
  assert.equal(batch.status, 'cancelled');
  const { completed, failed, total } = batch.request_counts;
  assert.equal(total, 40);
  assert.ok(completed >= 8 && completed < 40, `completed ${completed}`);
  assert.equal(completed + failed, 40);
  const output = jsonl(await (await client.files.content(batch.output_file_id)).text());
  const errors = jsonl(await (await client.files.content(batch.error_file_id)).text());
  assert.equal(output.length, completed);
  assert.ok(errors.every((l) => l.response === null && l.error.code === 'batch_cancelled'));
  assert.equal(new Set([...output, ...errors].map((l) => l.custom_id)).size, 40);

  // 40 lines of 400 ms, 8 at a time, in a 1-second window: some run, the rest expire.
  const short = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1s' });
  const expired = await finished(client, short.id);
  assert.equal(expired.status, 'expired');
  assert.ok(expired.expired_at > 0);
  const late = jsonl(await (await client.files.content(expired.error_file_id)).text());
  assert.ok(late.length > 0 && late.every((l) => l.error.code === 'batch_expired'));
  assert.equal(expired.request_counts.completed + late.length, 40);
});

test('Anthropic SDK: message batches on an Anthropic deployment and, translated, an OpenAI one', async () => {
  const client = anthropicAs(KEY_B);
  const requests = [
    ...Array.from({ length: 5 }, (_, i) => ({
      custom_id: `claude-${i}`,
      params: { model: 'claude-batch', max_tokens: 64, messages: [{ role: 'user', content: `hi ${i}` }] },
    })),
    ...Array.from({ length: 5 }, (_, i) => ({
      custom_id: `gpt-${i}`,
      params: { model: 'gpt-batch', max_tokens: 64, messages: [{ role: 'user', content: `hi ${i}` }] },
    })),
    { custom_id: 'no-model', params: { max_tokens: 64, messages: [{ role: 'user', content: 'x' }] } },
  ];
  const created = await client.messages.batches.create({ requests });
  assert.equal(created.type, 'message_batch');
  assert.match(created.id, /^msgbatch_/);
  assert.equal(created.processing_status, 'in_progress');
  assert.equal(created.results_url, null);
  assert.equal(created.request_counts.processing, 11);
  const batch = await eventually(async () => {
    const b = await client.messages.batches.retrieve(created.id);
    return b.processing_status === 'ended' && b;
  }, { what: 'the message batch to end', timeoutMs: 20000, intervalMs: 50 });
  assert.deepEqual(batch.request_counts, { processing: 0, succeeded: 10, errored: 1, canceled: 0, expired: 0 });
  assert.ok(batch.results_url.startsWith(gateway.base));
  const results = new Map();
  for await (const r of await client.messages.batches.results(created.id)) {
    assert.ok(!results.has(r.custom_id));
    results.set(r.custom_id, r.result);
  }
  assert.equal(results.size, 11);
  for (const prefix of ['claude', 'gpt']) {
    for (let i = 0; i < 5; ++i) {
      const result = results.get(`${prefix}-${i}`);
      assert.equal(result.type, 'succeeded');
      assert.equal(result.message.type, 'message');
      assert.equal(result.message.content[0].type, 'text');
    }
  }
  assert.equal(results.get('no-model').type, 'errored');
  assert.equal(results.get('no-model').error.type, 'error');
  assert.equal(results.get('no-model').error.error.type, 'invalid_request_error');
  const page = await client.messages.batches.list({ limit: 1 });
  assert.equal(page.data.length, 1);
  // Another key does not see it; deleting an ended batch removes it.
  await assert.rejects(anthropicAs(KEY_A).messages.batches.retrieve(created.id), (e) => e.status === 404);
  assert.deepEqual(await client.messages.batches.delete(created.id),
                   { id: created.id, type: 'message_batch_deleted' });
  await assert.rejects(client.messages.batches.retrieve(created.id), (e) => e.status === 404);
  // Refused at once: a custom_id Anthropic would refuse, and the same one twice.
  await assert.rejects(client.messages.batches.create({ requests: [{ custom_id: 'has space', params: {} }] }),
                       (e) => e.status === 400 && e.error.error.type === 'invalid_request_error');
  await assert.rejects(client.messages.batches.create({ requests: [requests[0], requests[0]] }),
                       (e) => e.status === 400 && /Duplicate/.test(e.message));
});

test('Anthropic SDK: cancel a message batch: canceled lines, finished ones kept', async () => {
  const client = anthropicAs(MASTER);
  const requests = Array.from({ length: 40 }, (_, i) => ({
    custom_id: `slow-${i}`,
    params: { model: 'slow-batch', max_tokens: 16, messages: [{ role: 'user', content: `${i}` }] },
  }));
  const sent = async () => (await mock.stats()).requests.filter((r) => r.model === 'slow-batch').length;
  const before = await sent();
  const created = await client.messages.batches.create({ requests });
  // Cancelled once some lines have gone upstream (their results are kept).
  await eventually(async () => (await sent()) >= before + 8,
                   { what: 'lines to go upstream', timeoutMs: 20000, intervalMs: 20 });
  const canceling = await client.messages.batches.cancel(created.id);
  assert.ok(['canceling', 'ended'].includes(canceling.processing_status));
  assert.ok(canceling.cancel_initiated_at);
  const batch = await eventually(async () => {
    const b = await client.messages.batches.retrieve(created.id);
    return b.processing_status === 'ended' && b;
  }, { what: 'the cancelled batch to end', timeoutMs: 20000, intervalMs: 50 });
  const { succeeded, canceled } = batch.request_counts;
  assert.ok(succeeded > 0 && canceled > 0 && succeeded + canceled === 40, JSON.stringify(batch.request_counts));
  let seen = 0;
  for await (const r of await client.messages.batches.results(created.id)) {
    assert.ok(['succeeded', 'canceled'].includes(r.result.type));
    ++seen;
  }
  assert.equal(seen, 40);
});

test('a cancel sent right after the create is not lost', async () => {
  const client = openaiAs(KEY_A);
  const file = await client.files.create({ file: await toFile(Buffer.from(chatLines(10, 'slow-batch', 'now')), 'now.jsonl'), purpose: 'batch' });
  const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const cancelling = await client.batches.cancel(created.id);
  assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
  const batch = await finished(client, created.id);
  assert.equal(batch.status, 'cancelled');
  assert.equal(batch.request_counts.total, 10);
  assert.ok(batch.request_counts.completed < 10);
});
