import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BootError } from '../errors.js';

/** What `gatehouse plugin new` can write. */
export const PLUGIN_KINDS = ['method', 'fds', 'channel', 'grant'] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

const NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** `@acme/method-secret-question` → `secret-question` (the part after the kind's prefix). */
function shortName(name: string, kind: PluginKind): string {
  const bare = name.replace(/^@[^/]+\//, '');
  return bare.startsWith(`${kind}-`) ? bare.slice(kind.length + 1) : bare;
}

/**
 * Writes a plugin package of `kind` named `name` into `dir`: package.json, index.js (ESM with
 * type checking from the core's declarations), a test that passes as written (node --test,
 * against `@gatehouse-auth/core/testing`), and a README. Returns the files written.
 */
export function writePluginTemplate(kind: PluginKind, name: string, dir: string): string[] {
  if (!NAME.test(name)) throw new BootError('CONFIG_INVALID', `plugin name "${name}" is not an npm package name`);
  if (existsSync(dir) && readdirSync(dir).length)
    throw new BootError('CONFIG_INVALID', `${dir} exists and is not empty`);
  const short = shortName(name, kind);
  const files = TEMPLATES[kind]({ name, short });
  mkdirSync(path.join(dir, 'test'), { recursive: true });
  const all: Record<string, string> = {
    'package.json': `${JSON.stringify(packageJson(name, kind), null, 2)}\n`,
    'README.md': readme(name, kind),
    ...files,
  };
  for (const [file, text] of Object.entries(all)) writeFileSync(path.join(dir, file), text);
  return Object.keys(all).map((file) => path.join(dir, file));
}

function packageJson(name: string, kind: PluginKind) {
  return {
    name,
    version: '0.1.0',
    description: `A Gatehouse ${kind === 'fds' ? 'FDS rule' : kind} plugin`,
    type: 'module',
    main: './index.js',
    exports: { '.': './index.js' },
    files: ['index.js'],
    keywords: ['gatehouse-plugin'],
    scripts: { test: 'node --test' },
    // One copy of the core: the server's. The plugin names it as a peer, and as a dev
    // dependency for its own tests.
    peerDependencies: { '@gatehouse-auth/core': '^0.1.0' },
    devDependencies: { '@gatehouse-auth/core': '^0.1.0' },
  };
}

function readme(name: string, kind: PluginKind): string {
  return `# ${name}

A Gatehouse ${kind === 'fds' ? 'FDS rule' : kind} plugin, from \`gatehouse plugin new ${kind} ${name}\`.

\`\`\`sh
npm install --save-dev <the core>   # as \`gatehouse plugin new\` printed: a link to the installed core
npm test                            # node --test
\`\`\`

Install it where the server runs (the directory you start \`gatehouse\` from) and name it in the
config:

\`\`\`yaml
plugins:
  - name: '${name}'
\`\`\`

See docs/plugins.md of Gatehouse for the contract.
`;
}

interface TemplateInput {
  name: string;
  short: string;
}

const TEMPLATES: Record<PluginKind, (input: TemplateInput) => Record<string, string>> = {
  method: ({ name, short }) => {
    const id = short.replace(/[^a-z0-9]/gi, '').toUpperCase();
    return {
      'index.js': `// @ts-check
/**
 * ${id}: the user proves they know an answer they set up before (a knowledge factor, RFC 8176
 * "kba"). The answer is stored as an argon2id hash by the core's hashing service.
 */
import { randomUUID } from 'node:crypto';
import { definePlugin, z } from '@gatehouse-auth/core';

export const METHOD_ID = '${id}';
const CREDENTIAL = 'answer';

/** Case and surrounding spaces do not count. */
const normalize = (/** @type {unknown} */ answer) => (typeof answer === 'string' ? answer.trim().toLowerCase() : '');

export default definePlugin({
  name: '${name}',
  apiVersion: '^1',
  options: z
    .strictObject({
      /** Argon2id cost of the stored answers (memory in KiB). */
      memory_cost: z.number().int().min(1024).default(19456),
      time_cost: z.number().int().min(1).default(2),
      min_length: z.number().int().min(1).default(4),
    })
    .prefault({}),
  async register(api, options) {
    const hasher = api.services.passwordHashing.withCost({
      memoryCost: options.memory_cost,
      timeCost: options.time_cost,
      parallelism: 1,
    });
    // Checked when a user has no answer, so that an unknown user takes as long as a known one.
    const dummy = await hasher.hash(randomUUID());
    api.methods.add({
      id: METHOD_ID,
      amr: ['kba'],
      verifyFields: ['answer'],
      page: {
        label: 'Secret answer',
        inputs: [{ field: 'answer', label: 'Your secret answer', autocomplete: 'off' }],
      },
      async isEnrolled(ctx) {
        return (await ctx.credentials.list(CREDENTIAL)).length > 0;
      },
      async initiate() {
        return { ok: true };
      },
      async verify(ctx) {
        const [stored] = await ctx.credentials.list(CREDENTIAL);
        const right = await hasher.verify(stored?.secret ?? dummy, normalize(ctx.fields.answer));
        if (!stored) return { ok: false, reason: 'not_enrolled' };
        return right ? { ok: true } : { ok: false, reason: 'mismatch' };
      },
      enrollment: {
        async initiate(ctx) {
          const answer = normalize(ctx.body.answer);
          if (answer.length < options.min_length) {
            return {
              ok: false,
              code: 'INVALID_FIELD',
              status: 400,
              message: \`The answer needs at least \${options.min_length} characters\`,
            };
          }
          await ctx.credentials.replaceAll(CREDENTIAL, [{ type: CREDENTIAL, secret: await hasher.hash(answer) }]);
          return { ok: true, done: true, response: { enrolled: true } };
        },
      },
    });
  },
});
`,
      'test/plugin.test.js': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  registerWithFakes,
  verifyContext,
} from '@gatehouse-auth/core/testing';
import plugin, { METHOD_ID } from '../index.js';

const cheap = { memory_cost: 1024, time_cost: 1 };

test('sets up an answer, then accepts it (any case) and refuses another', async () => {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, cheap, services);
  const method = methods[0];
  const user = fakeUser();
  const setUp = await method.enrollment.initiate(
    enrollmentContext({ services, user, method: METHOD_ID, body: { answer: 'Blue Whale' } }),
  );
  assert.equal(setUp.ok, true);
  const verify = (answer) => method.verify(verifyContext({ services, user, method: METHOD_ID, fields: { answer } }));
  assert.deepEqual(await verify(' blue whale '), { ok: true });
  assert.deepEqual(await verify('orca'), { ok: false, reason: 'mismatch' });
});

test('a user without an answer is refused, and a short answer is not set up', async () => {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, cheap, services);
  const user = fakeUser();
  const verify = await methods[0].verify(verifyContext({ services, user, method: METHOD_ID, fields: { answer: 'x' } }));
  assert.deepEqual(verify, { ok: false, reason: 'not_enrolled' });
  const short = await methods[0].enrollment.initiate(
    enrollmentContext({ services, user, method: METHOD_ID, body: { answer: 'ab' } }),
  );
  assert.equal(short.ok, false);
});
`,
    };
  },

  fds: ({ name, short }) => {
    const id = short.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
    return {
      'index.js': `// @ts-check
/**
 * FDS rule ${id}: refuses sign-ins to the apps listed in \`deny_clients\` (and sessions reaching
 * them), for instance while an app is being investigated.
 */
import { definePlugin, z } from '@gatehouse-auth/core';

export const RULE_ID = '${id}';

export default definePlugin({
  name: '${name}',
  apiVersion: '^1',
  options: z.strictObject({ deny_clients: z.array(z.string().min(1)).default([]) }).prefault({}),
  register(api, options) {
    const denied = new Set(options.deny_clients);
    api.fdsRules.add({
      id: RULE_ID,
      // Also when an existing session would sign the user in with no new proof.
      checksSessions: true,
      async evaluate(ctx) {
        return denied.has(ctx.clientId) ? { action: 'deny', reason: \`\${RULE_ID}.client_denied\` } : { action: 'allow' };
      },
    });
  },
});
`,
      'test/plugin.test.js': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeServices, fakeUser, fdsContext, registerWithFakes } from '@gatehouse-auth/core/testing';
import plugin from '../index.js';

test('denies a listed client, allows the others', async () => {
  const services = fakeServices();
  const { fdsRules } = await registerWithFakes(plugin, { deny_clients: ['suspect-app'] }, services);
  const evaluate = (clientId) =>
    fdsRules[0].evaluate(fdsContext({ services, user: fakeUser(), method: 'ANY', clientId }));
  assert.equal((await evaluate('suspect-app')).action, 'deny');
  assert.deepEqual(await evaluate('good-app'), { action: 'allow' });
});
`,
    };
  },

  channel: ({ name, short }) => ({
    'index.js': `// @ts-check
/**
 * Delivery channel "${short}": POSTs each message as JSON to \`url\` and resolves once the
 * provider answered 2xx (anything else rejects, so the core retries and records the failure).
 */
import { definePlugin, z } from '@gatehouse-auth/core';

export default definePlugin({
  name: '${name}',
  apiVersion: '^1.1',
  options: z.strictObject({
    url: z.url(),
    kinds: z
      .array(z.enum(['sms', 'email', 'voice', 'push']))
      .min(1)
      .default(['sms']),
    timeout_ms: z.number().int().positive().default(5000),
  }),
  register(api, options) {
    api.channels.add({
      id: '${short}',
      kinds: options.kinds,
      async send(message) {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(message),
          signal: AbortSignal.timeout(options.timeout_ms),
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(\`the provider answered \${response.status}\`);
      },
    });
    // For operators (GET /health/dependencies, gatehouse_dependency_up): up when the provider
    // answers HTTP at all. Sends no message.
    api.dependency('${short}', async () => {
      const response = await fetch(options.url, { method: 'HEAD', signal: AbortSignal.timeout(options.timeout_ms) });
      await response.body?.cancel();
    });
  },
});
`,
    'test/plugin.test.js': `import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/core/testing';
import plugin from '../index.js';

/** A provider on a free port that answers each request with the next status of \`statuses\`. */
async function provider(statuses) {
  const received = [];
  const server = createServer((req, res) => {
    if (req.method === 'HEAD') return void res.end(); // the dependency check
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: \`http://127.0.0.1:\${server.address().port}/send\`, received, close: () => server.close() };
}

test('POSTs the message; a provider error rejects', async () => {
  const sink = await provider([200, 503]);
  try {
    const { channels } = await registerWithFakes(plugin, { url: sink.url }, fakeServices());
    const message = { kind: 'sms', to: '+15551230000', text: 'Your code is 123456' };
    await channels[0].send(message);
    assert.deepEqual(sink.received, [message]);
    await assert.rejects(channels[0].send(message), /503/);
  } finally {
    sink.close();
  }
});

test('the dependency check: up while the provider answers, down once it is gone', async () => {
  const sink = await provider([]);
  const { dependencies } = await registerWithFakes(plugin, { url: sink.url }, fakeServices());
  const check = dependencies.get('${short}');
  await check();
  assert.deepEqual(sink.received, []);
  sink.close();
  await assert.rejects(check());
});
`,
  }),

  grant: ({ name }) => {
    const grantType = `urn:${name.replace(/^@/, '').replace(/\//g, ':')}`;
    return {
      'index.js': `// @ts-check
/**
 * Grant ${grantType}: a confidential client gets an access token for itself, limited to the
 * scopes its app lists (a starting point: replace the checks with what your grant proves).
 */
import { definePlugin, OAuthError, z } from '@gatehouse-auth/core';

export const GRANT_TYPE = '${grantType}';

export default definePlugin({
  name: '${name}',
  apiVersion: '^1',
  options: z.strictObject({}).prefault({}),
  register(api) {
    api.grants.add({
      grantType: GRANT_TYPE,
      // The only request parameters the core passes on (besides grant_type and client_id).
      parameters: ['scope'],
      async handle(ctx) {
        const { client, params, oauth } = ctx;
        if (client.isPublic) throw new OAuthError('unauthorized_client', 'public clients may not use this grant');
        const scope = oauth.resolveScope(params.scope, client.scopes, client.scopes);
        return oauth.issue({ client, subject: null, scope, grantType: GRANT_TYPE, refreshToken: false });
      },
    });
  },
});
`,
      'test/plugin.test.js': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  expectOAuthError,
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
} from '@gatehouse-auth/core/testing';
import plugin, { GRANT_TYPE } from '../index.js';

test('issues a token for the client with the scope asked; a public client is refused', async () => {
  const services = fakeServices();
  const { grants } = await registerWithFakes(plugin, {}, services);
  const oauth = fakeOAuth({ clock: services.clock });
  const client = fakeClient({ grantTypes: [GRANT_TYPE], scopes: ['reports.read', 'reports.write'] });
  const response = await grants[0].handle(grantContext({ client, oauth, params: { scope: 'reports.read' } }));
  assert.equal(response.scope, 'reports.read');
  assert.equal(typeof response.access_token, 'string');
  const publicClient = fakeClient({ authMethod: 'none', isPublic: true, grantTypes: [GRANT_TYPE] });
  await expectOAuthError(
    grants[0].handle(grantContext({ client: publicClient, oauth, params: {} })),
    'unauthorized_client',
  );
});
`,
    };
  },
};
