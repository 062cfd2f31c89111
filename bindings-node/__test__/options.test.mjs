// Options are read by core, strictly and alike in every language: a mistyped one is refused,
// naming it (before, Node silently dropped it: `bearerToken` for `bearerTokens` started an open
// server). The options Node lacked (extendedCard, limits) work as in Python.
import assert from 'node:assert/strict';
import test from 'node:test';
import { AgentServer, Client, InvalidParamsError } from '../index.js';
import { CARD, Echo, withServer } from './helpers.mjs';

test('a mistyped server option is refused, naming it', () => {
  for (const [options, name] of [
    [{ bearerToken: 'secret' }, /bearerToken/],
    [{ limits: { maxBodyByte: 10 } }, /maxBodyByte/],
    [{ security: { apiKey: {} } }, /apiKey/],
    [{ store: 5 }, /store/],
  ]) {
    assert.throws(() => new AgentServer(CARD, new Echo(), options), (e) => e instanceof InvalidParamsError && name.test(e.message), JSON.stringify(options));
  }
});

test('a mistyped client option is refused, naming it', async () => {
  await withServer(new Echo(), async (server) => {
    await assert.rejects(Client.connect(server.url, { timout: 5 }), (e) => e instanceof InvalidParamsError && /timout/.test(e.message));
    assert.throws(() => Client.fromCard(CARD, { bearer: 'x' }), InvalidParamsError);
  });
});

test('limits are enforced and the extended card is served', async () => {
  const card = { ...CARD, capabilities: { ...CARD.capabilities, extendedAgentCard: true } };
  const server = new AgentServer(card, new Echo(), {
    bearerTokens: { t: 'ada' },
    limits: { maxPartsPerMessage: 2 },
    extendedCard: { ...card, description: 'for callers who signed in' },
  });
  await server.listen(0);
  try {
    const client = await Client.connect(server.url, { bearerToken: 't' });
    const { task } = await client.send('hi');
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    // Three parts where the server allows two.
    const parts = [{ text: 'a' }, { text: 'b' }, { text: 'c' }];
    await assert.rejects(client.send({ messageId: 'm-parts', role: 'ROLE_USER', parts }), InvalidParamsError);
    const extended = await client.getExtendedCard();
    assert.equal(extended.description, 'for callers who signed in');
  } finally {
    await server.close();
  }
});
