// HTTPS upstream: certificate verification on, SNI, a CA file made at test time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startMock, startGateway, request, tempDir, makeCertificates } from './harness.mjs';

let mock;
let gateway;

before(async () => {
  const dir = tempDir();
  makeCertificates(dir);
  mock = await startMock(['--tls-cert', path.join(dir, 'server.pem'),
                          '--tls-key', path.join(dir, 'server.key')]);
  gateway = await startGateway(`
models:
  - name: trusted
    deployments:
      - {model: tls-model, api_base: "https://localhost:${mock.port}/v1", ca_file: "${path.join(dir, 'ca.pem')}"}
  - name: untrusted
    deployments:
      - {model: tls-model, api_base: "https://localhost:${mock.port}/v1"}
  - name: wrong-name
    deployments:
      - {model: tls-model, api_base: "https://127.0.0.1:${mock.port}/v1", ca_file: "${path.join(dir, 'ca.pem')}"}
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

test('a TLS upstream signed by the configured CA serves requests', async () => {
  for (const stream of [false, true]) {
    const res = await request(gateway.port, { body: { model: 'trusted', stream, messages: [] } });
    assert.equal(res.status, 200, res.body);
    if (stream) assert.match(res.body, /data: \[DONE\]/);
    else assert.equal(JSON.parse(res.body).model, 'tls-model');
  }
});

test('an upstream certificate the gateway does not trust is refused (502)', async () => {
  const res = await request(gateway.port, { body: { model: 'untrusted', messages: [] } });
  assert.equal(res.status, 502);
  const error = JSON.parse(res.body).error;
  assert.equal(error.code, 'upstream_unreachable');
  assert.match(error.message, /TLS handshake/);
});

test('a certificate that does not name the host is refused (502)', async () => {
  const res = await request(gateway.port, { body: { model: 'wrong-name', messages: [] } });
  assert.equal(res.status, 502, res.body);
  assert.match(JSON.parse(res.body).error.message, /TLS handshake/);
});
