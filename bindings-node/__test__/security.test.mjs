// Security options through the Node package: API keys where the card says, JWT scopes (401 vs
// 403), scopes per skill (context.skills), bad options refused, and the push signing keys
// published. Keys: core/tests/fixtures.
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { AgentServer, Client, InvalidParamsError, PermissionDeniedError, PushVerifier, UnauthenticatedError, canonicalize, verifyCard } from '../index.js';
import { CARD, withServer } from './helpers.mjs';

const fixtures = new URL('../../core/tests/fixtures/', import.meta.url);
const EC_PEM = readFileSync(new URL('jwt-ec.pem', fixtures), 'utf8');
const whoami = {
  async execute(context, events) {
    await events.complete(context.principal ? context.principal.name : 'anonymous');
  },
};
const answer = (reply) => reply.task.status.message.parts[0].text;
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** An ES256 JWT signed with the fixture key. */
function jwt(claims) {
  const input = `${b64({ alg: 'ES256', kid: 'k1', typ: 'JWT' })}.${b64(claims)}`;
  const sig = sign('sha256', Buffer.from(input), { key: createPrivateKey(EC_PEM), dsaEncoding: 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}

test('API keys are required where the card says', () =>
  withServer(
    whoami,
    async (server) => {
      const anonymous = await Client.connect(server.url);
      assert.deepEqual(anonymous.card.securitySchemes.apiKey.apiKeySecurityScheme, { location: 'header', name: 'X-Key' });
      await assert.rejects(anonymous.send('hi'), (e) => e instanceof UnauthenticatedError);
      const client = await Client.connect(server.url, { apiKey: ['X-Key', 'k-1'] });
      assert.equal(answer(await client.send('hi')), 'svc');
    },
    { security: { apiKeys: { 'k-1': 'svc' }, apiKeyLocation: { in: 'header', name: 'X-Key' } } },
  ));

test('JWTs against a JWKS, with scopes per operation: 401 without a valid token, 403 without the scope', () => {
  const jwk = { ...createPublicKey(EC_PEM).export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' };
  const now = Math.floor(Date.now() / 1000);
  const token = (scope, extra = {}) => jwt({ iss: 'https://idp.test', aud: 'a2a', sub: 'ada', scope, exp: now + 60, ...extra });
  const security = {
    jwt: { jwks: { keys: [jwk] }, issuers: ['https://idp.test'], audiences: ['a2a'] },
    requiredScopes: { '*': ['a2a.read'], SendMessage: ['a2a.write'] },
  };
  return withServer(
    whoami,
    async (server) => {
      const reader = await Client.connect(server.url, { bearerToken: token('a2a.read') });
      await assert.rejects(reader.send('hi'), (e) => e instanceof PermissionDeniedError && e.code === -31403);
      assert.deepEqual((await reader.listTasks()).tasks ?? [], []);
      const writer = await Client.connect(server.url, { bearerToken: token('a2a.read a2a.write') });
      assert.equal(answer(await writer.send('hi')), 'ada');
      const expired = await Client.connect(server.url, { bearerToken: token('a2a.read', { exp: now - 600 }) });
      await assert.rejects(expired.listTasks(), (e) => e instanceof UnauthenticatedError);
    },
    { security },
  );
});

test('scopes per skill: the executor sees the skills the caller may use, others get 403', async () => {
  const jwk = { ...createPublicKey(EC_PEM).export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' };
  const token = (scope) => jwt({ iss: 'https://idp.test', aud: 'a2a', sub: 'ada', scope, exp: Math.floor(Date.now() / 1000) + 60 });
  const scoped = (id, scope) => ({
    id, name: id, description: 'd', tags: ['t'], securityRequirements: [{ schemes: { bearer: { list: [scope] } } }],
  });
  const card = { ...CARD, skills: [scoped('translate', 'translate'), scoped('summarize', 'summarize')] };
  const skillsSeen = {
    async execute(context, events) {
      await events.complete(context.skills.join(','));
    },
  };
  const jwtSpec = { jwks: { keys: [jwk] }, issuers: ['https://idp.test'], audiences: ['a2a'] };
  const server = new AgentServer(card, skillsSeen, { security: { jwt: jwtSpec } });
  await server.listen(0);
  try {
    const translator = await Client.connect(server.url, { bearerToken: token('translate') });
    assert.equal(answer(await translator.send('hi')), 'translate');
    const both = await Client.connect(server.url, { bearerToken: token('summarize translate') });
    assert.equal(answer(await both.send('hi')), 'translate,summarize');
    const other = await Client.connect(server.url, { bearerToken: token('other') });
    await assert.rejects(other.send('hi'), (e) => e instanceof PermissionDeniedError && /translate/.test(e.message));
  } finally {
    await server.close();
  }
});

test('bad security options are refused at construction', () => {
  assert.throws(() => new AgentServer(CARD, whoami, { security: { apiKeyz: {} } }), /apiKeyz/);
  assert.throws(() => new AgentServer(CARD, whoami, { security: { jwt: { issuers: ['x'], audiences: ['a'] } } }), /jwksUrl/);
  // A JWT scheme names its issuers and audiences: else any issuer's token for any service passes.
  assert.throws(() => new AgentServer(CARD, whoami, { security: { jwt: { jwks: { keys: [] }, issuers: ['x'] } } }), /jwt\.audiences/);
  assert.throws(() => new AgentServer(CARD, whoami, { security: { taskVisibility: 'everyone' } }), /taskVisibility|principal/);
});

test('a push signing key is published as a JWKS', () =>
  withServer(
    whoami,
    async (server) => {
      const jwks = await (await fetch(`${server.url}/.well-known/a2a-push-jwks.json`)).json();
      assert.equal(jwks.keys[0].kid, 'push-1');
      assert.equal(jwks.keys[0].d, undefined, 'no private part');
    },
    { security: { pushSigningKey: { pem: EC_PEM, alg: 'ES256', kid: 'push-1' } } },
  ));

test('HTTPS with a client certificate, a signed card verified, card credentials and signed push', async () => {
  const posts = [];
  const { createServer } = await import('node:http');
  const hook = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts.push([Object.entries(req.headers).map(([k, v]) => [k, String(v)]), Buffer.concat(chunks)]);
      res.end();
    });
  });
  await new Promise((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${hook.address().port}/hook`;
  const pem = (name) => readFileSync(new URL(name, fixtures), 'utf8');
  const card = { ...CARD, capabilities: { streaming: true, pushNotifications: true } };
  const security = {
    tls: { cert: new URL('tls-server.pem', fixtures).pathname, key: new URL('tls-server.key', fixtures).pathname, clientCa: new URL('tls-ca.pem', fixtures).pathname },
    apiKeys: { 'k-1': 'svc' },
    cardSigningKey: { pem: EC_PEM, alg: 'ES256', kid: 'card-1' },
    pushSigningKey: { pem: EC_PEM, alg: 'ES256', kid: 'push-1' },
    allowPrivateWebhooks: true,
  };
  const server = new AgentServer(card, whoami, { security });
  await server.listen(0);
  try {
    assert.ok(server.url.startsWith('https://'), server.url);
    const tls = { caCert: pem('tls-ca.pem'), clientIdentity: pem('tls-client.pem') + pem('tls-client.key') };
    const client = await Client.connect(server.url, { ...tls, cardApiKey: 'k-1' });
    const jwk = { ...createPublicKey(EC_PEM).export({ format: 'jwk' }), kid: 'card-1' };
    assert.equal(verifyCard(client.card, { keys: [jwk] }), 'card-1');
    assert.throws(() => verifyCard({ ...client.card, name: 'impostor' }, { keys: [jwk] }), (e) => e instanceof UnauthenticatedError);
    const { task } = await client.send('hi', { configuration: { taskPushNotificationConfig: { url: hookUrl, token: 't-1' } } });
    assert.match(answer({ task }), /^(svc|cert:)/);
    for (let i = 0; i < 100 && posts.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(posts.length >= 1, 'a notification arrived');
    const verifier = new PushVerifier({ keys: [{ ...jwk, kid: 'push-1' }] }, hookUrl, { issuer: server.url, token: 't-1' });
    const [headers, body] = posts[0];
    assert.equal(verifier.verify(headers, body).taskId, task.id);
    assert.throws(() => verifier.verify(headers, body), /replayed/);
    // Options are core's: maxAge in seconds (as every duration), unknown keys refused.
    const keys = { keys: [{ ...jwk, kid: 'push-1' }] };
    const aged = (maxAge) => new PushVerifier(keys, hookUrl, { issuer: server.url, maxAge });
    // Over a second old, the delivery is fresh at 60 (it would be stale at 60 ms).
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(aged(60).verify(headers, body).taskId, task.id);
    assert.throws(() => new PushVerifier(keys, hookUrl, { maxAgeMs: 500 }), (e) => e instanceof InvalidParamsError && /maxAgeMs/.test(e.message));
    // iat counts whole seconds: under a second is refused, as is nonsense.
    for (const bad of [0, 0.5, -1, 1e19]) assert.throws(() => aged(bad), InvalidParamsError);
    assert.equal(canonicalize({ b: 1e21, a: [1.0, 'é'] }), '{"a":[1,"é"],"b":1e+21}');
  } finally {
    await server.close();
    hook.close();
  }
});
