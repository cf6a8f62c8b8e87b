/**
 * `@gatehouse-auth/worker-threads` (decision 77): the hashing threads (decision 57) and the
 * signing threads (decision 31), moved from the core, and the plugin on a server: it provides
 * `passwordHashing` and `jwtSigning`; a token signed on its threads verifies with the server's
 * JWKS; a password hashed on its threads verifies with the core's in-process hashing and the
 * other way round; its options' rules.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { constants, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import supertest from 'supertest';
import {
  argon2Hashing,
  buildApp,
  createLogger,
  parseConfig,
  type Gatehouse,
  type SigningArgs,
} from '@gatehouse-auth/core';
import { HashingThreads, SigningThreads, workerThreadsOptions } from '@gatehouse-auth/worker-threads';
import type * as WorkerThreads from '@gatehouse-auth/worker-threads';

// Small costs: these tests are about the threads, not about argon2's cost.
const COST = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

interface JwtSigner {
  alg: string;
  kid: string;
  key: KeyObject;
}

const signers: JwtSigner[] = [
  { alg: 'ES256', kid: 'ec-1', key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
  { alg: 'RS256', kid: 'rsa-1', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'PS256', kid: 'rsa-2', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'EdDSA', kid: 'ed-1', key: generateKeyPairSync('ed25519').privateKey },
];

/** What the core hands `jwtSigning` for each algorithm (core/src/oauth/jws.ts). */
function argsOf({ alg, key }: JwtSigner): SigningArgs {
  if (alg === 'PS256') return ['sha256', { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }];
  if (alg === 'ES256') return ['sha256', { key, dsaEncoding: 'ieee-p1363' }];
  return [alg === 'EdDSA' ? null : 'sha256', key];
}

/** A compact JWS signed on `threads`, as the core's signJwtWith makes it. */
async function signOn(
  threads: SigningThreads,
  signer: JwtSigner,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): Promise<string> {
  const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');
  const input = `${b64({ ...header, alg: signer.alg, kid: signer.kid })}.${b64(payload)}`;
  return `${input}.${await threads.sign(signer.key, argsOf(signer), input)}`;
}

describe('hashing threads (decision 57)', () => {
  let threads: HashingThreads;
  beforeEach(() => (threads = new HashingThreads(2)));
  afterEach(() => threads.close());

  it('hash in-process-compatible argon2id strings, and answer false for a string that is not one', async () => {
    const hasher = argon2Hashing(undefined, (job) => threads.run(job)).withCost(COST);
    const made = await hasher.hash('correct horse');
    expect(made).to.match(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    expect(await hasher.verify(made, 'correct horse')).to.equal(true);
    expect(await hasher.verify(made, 'correct horsf')).to.equal(false);
    expect(await hasher.verify('$2b$10$abcdefghijklmnopqrstuu', 'x')).to.equal(false);
    expect(await hasher.verify('', 'x')).to.equal(false);
  });

  it('runs at most as many jobs as it has threads; the rest wait in order and all complete', async () => {
    const hasher = argon2Hashing(undefined, (job) => threads.run(job)).withCost(COST);
    const done = Promise.all(Array.from({ length: 7 }, (_, i) => hasher.hash(`secret ${i}`)));
    expect(threads.load).to.deep.equal({ running: 2, waiting: 5 });
    const hashes = await done;
    expect(new Set(hashes).size).to.equal(7);
    expect(threads.load).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('fails the job of a thread that dies and starts a new thread for the next one', async () => {
    const one = new HashingThreads(1);
    try {
      const hasher = argon2Hashing(undefined, (job) => one.run(job)).withCost(COST);
      const running = hasher.hash('first');
      // The thread is the pool's only one: ending it mid-job is what a crash looks like from outside.
      const [thread] = (one as unknown as { threads: { worker: { terminate(): Promise<number> } }[] }).threads;
      await thread!.worker.terminate();
      const error = await running.then(
        () => null,
        (err: Error) => err,
      );
      expect(error?.message).to.match(/hashing thread exited/);
      expect(await hasher.verify(await hasher.hash('second'), 'second')).to.equal(true);
    } finally {
      await one.close();
    }
  });
});

describe('signing threads (decision 31)', () => {
  const [es256, rs256] = signers as [JwtSigner, JwtSigner];

  it('signs a burst in batches across threads, each token verifying under its own key', async () => {
    const threads = new SigningThreads(2);
    try {
      const burst = Array.from({ length: 200 }, (_, i) => {
        const signer = i % 5 === 0 ? rs256 : es256;
        return signOn(threads, signer, { typ: 'at+jwt' }, { n: i }).then((token) => ({ token, signer }));
      });
      for (const [i, { token, signer }] of (await Promise.all(burst)).entries()) {
        const { payload } = await jwtVerify(token, createPublicKey(signer.key), { algorithms: [signer.alg] });
        expect(payload.n).to.equal(i);
      }
    } finally {
      await threads.close();
    }
  });

  it('a key that cannot sign for its alg fails its own signature only', async () => {
    const threads = new SigningThreads(1);
    try {
      const wrong: JwtSigner = { alg: 'ES256', kid: 'wrong', key: (signers[3] as JwtSigner).key }; // an Ed25519 key
      const [bad, good] = await Promise.allSettled([
        signOn(threads, wrong, {}, { sub: 'x' }),
        signOn(threads, es256, {}, { sub: 'y' }),
      ]);
      expect(bad.status).to.equal('rejected');
      expect(good.status).to.equal('fulfilled');
    } finally {
      await threads.close();
    }
  });

  it('a thread that ends fails its signatures in flight, and the next signature gets a new thread', async () => {
    const threads = new SigningThreads(1);
    try {
      await signOn(threads, es256, {}, { sub: 'warm' });
      // One batch of 50 RSA signatures (tens of ms on the thread): it cannot finish before the end.
      const inFlight = Promise.all(Array.from({ length: 50 }, () => signOn(threads, rs256, {}, { sub: 'lost' })));
      await new Promise((resolve) => setImmediate(resolve)); // the batch is posted
      await Promise.all(
        (threads as unknown as { threads: { worker: Worker }[] }).threads.map((t) => t.worker.terminate()),
      );
      const lost = await inFlight.then(
        () => null,
        (err: Error) => err.message,
      );
      expect(lost).to.match(/signing thread exited/);
      const token = await signOn(threads, es256, {}, { sub: 'again' });
      expect((await jwtVerify(token, createPublicKey(es256.key))).payload.sub).to.equal('again');
    } finally {
      await threads.close();
    }
  });

  it('while every thread is busy, the signatures of later turns wait and go as one batch (issue 30)', async () => {
    const threads = new SigningThreads(1);
    try {
      await signOn(threads, es256, {}, { sub: 'warm' });
      const [thread] = (threads as unknown as { threads: { worker: Worker }[] }).threads;
      const batches: number[] = [];
      const post = thread!.worker.postMessage.bind(thread!.worker);
      thread!.worker.postMessage = (message: { type: string; items?: unknown[] }) => {
        if (message.type === 'sign') batches.push(message.items!.length);
        post(message);
      };
      // A batch of RSA signatures keeps the thread busy for tens of ms…
      const slow = Array.from({ length: 20 }, (_, i) => signOn(threads, rs256, {}, { n: i }));
      await new Promise((resolve) => setImmediate(resolve));
      // …while ten more turns each ask for three signatures.
      const later: Promise<string>[] = [];
      for (let turn = 0; turn < 10; turn++) {
        for (let i = 0; i < 3; i++) later.push(signOn(threads, es256, {}, { turn, i }));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const tokens = await Promise.all([...slow, ...later]);
      expect(batches).to.deep.equal([20, 30]);
      for (const token of tokens.slice(20)) await jwtVerify(token, createPublicKey(es256.key));
    } finally {
      await threads.close();
    }
  });
});

describe('the worker threads run under node --input-type=module (their sources are CommonJS)', () => {
  it('hashes on a hashing thread and signs on a signing thread in a process started with that flag', () => {
    const dist = new URL('../dist/', import.meta.url).href;
    const script = `
      import { generateKeyPairSync } from 'node:crypto';
      import { HashingThreads } from '${dist}hashing-threads.js';
      import { SigningThreads } from '${dist}signing-threads.js';
      const hashing = new HashingThreads(1);
      const hash = await hashing.run({ op: 'hash', secret: 'x', cost: { memoryCost: 1024, timeCost: 1, parallelism: 1 } });
      hashing.close();
      const signing = new SigningThreads(1);
      const { privateKey } = generateKeyPairSync('ed25519');
      const sig = await signing.sign(privateKey, [null, privateKey], 'input');
      await signing.close();
      console.log(hash.slice(0, 9), sig.length);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stderr).to.equal('');
    expect(run.stdout.trim()).to.equal('$argon2id 86');
  });
});

describe('@gatehouse-auth/worker-threads on a server (decision 77)', function () {
  this.timeout(30_000);
  const APP = { client_id: 'machine', client_secret: 'machine-secret-0123456789abcdef0123456789ab' };
  let gatehouse: Gatehouse;
  /** The plugin module the server loaded (its pools are that module's), by the path the loader imported. */
  let loaded: typeof WorkerThreads;

  // Pool sizes no other test uses: the process's pools of those sizes are this server's.
  before(async () => {
    const config = parseConfig(
      {
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 7).toString('base64') },
        plugins: [
          { name: '@gatehouse-auth/grant-client-credentials' },
          { name: '@gatehouse-auth/worker-threads', options: { hashing_threads: 3, signing_threads: 3 } },
        ],
        apps: [{ ...APP, grant_types: ['client_credentials'], scopes: ['read'] }],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    const { source } = gatehouse.plugins.find((p) => p.name === '@gatehouse-auth/worker-threads')!;
    loaded = (await import(pathToFileURL(source).href)) as typeof loaded;
  });
  after(() => gatehouse?.close());

  const started = (pool: unknown) => (pool as { threads: unknown[] }).threads.length;

  it('provides passwordHashing and jwtSigning', () => {
    const plugin = gatehouse.plugins.find((p) => p.name === '@gatehouse-auth/worker-threads');
    expect(plugin?.contributes).to.deep.equal({ services: ['passwordHashing', 'jwtSigning'] });
  });

  it("signs the token endpoint's JWT on a signing thread; it verifies with the JWKS", async () => {
    const res = await supertest(gatehouse.app)
      .post('/oauth/token')
      .auth(APP.client_id, APP.client_secret)
      .type('form')
      .send({ grant_type: 'client_credentials', scope: 'read' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(started(loaded.signingThreads(3))).to.equal(1);
    const jwks = (await supertest(gatehouse.app).get('/.well-known/jwks.json')).body as JSONWebKeySet;
    const { payload } = await jwtVerify(res.body.access_token as string, createLocalJWKSet(jwks), {
      issuer: gatehouse.config.issuer,
    });
    expect(payload).to.include({ client_id: APP.client_id, scope: 'read' });
  });

  it('hashes on a hashing thread: its hashes verify in-process, and in-process hashes verify on it', async () => {
    const threaded = gatehouse.container.cradle.passwordHashing.withCost(COST);
    const inProcess = argon2Hashing().withCost(COST);
    const onThread = await threaded.hash('a long passphrase');
    expect(started(loaded.hashingThreads(3))).to.be.greaterThan(0);
    expect(await inProcess.verify(onThread, 'a long passphrase')).to.equal(true);
    expect(await inProcess.verify(onThread, 'a long passphrasf')).to.equal(false);
    const madeHere = await inProcess.hash('another passphrase');
    expect(await threaded.verify(madeHere, 'another passphrase')).to.equal(true);
    expect(await threaded.verify(madeHere, 'another passphrasf')).to.equal(false);
    expect(threaded.needsRehash?.(madeHere)).to.equal(false);
  });

  it('takes pool sizes from 1 to 64, each optional', () => {
    expect(workerThreadsOptions.parse({})).to.deep.equal({});
    expect(workerThreadsOptions.parse({ hashing_threads: 1, signing_threads: 64 })).to.deep.equal({
      hashing_threads: 1,
      signing_threads: 64,
    });
    for (const bad of [{ hashing_threads: 0 }, { signing_threads: 65 }, { signing_threads: 1.5 }, { pool: 2 }])
      expect(workerThreadsOptions.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
  });
});

describe('the jwtSigning service (decision 77)', function () {
  this.timeout(30_000);
  const fixture = fileURLToPath(new URL('./fixtures/counting-signing.js', import.meta.url));
  const APP = { client_id: 'machine', client_secret: 'machine-secret-0123456789abcdef0123456789ab' };
  const config = () =>
    parseConfig(
      {
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 8).toString('base64') },
        plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }, { path: fixture }],
        apps: [{ ...APP, grant_types: ['client_credentials'], scopes: ['read'] }],
      },
      {},
    );

  it("a provider listed after the grant signs the token endpoint's JWTs", async () => {
    const { calls } = (await import(pathToFileURL(fixture).href)) as { calls: { sign: number } };
    const gatehouse = await buildApp(config(), { logger: createLogger('silent') });
    try {
      const before = calls.sign;
      const res = await supertest(gatehouse.app)
        .post('/oauth/token')
        .auth(APP.client_id, APP.client_secret)
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'read' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(calls.sign).to.equal(before + 1);
      const jwks = (await supertest(gatehouse.app).get('/.well-known/jwks.json')).body as JSONWebKeySet;
      await jwtVerify(res.body.access_token as string, createLocalJWKSet(jwks), { issuer: gatehouse.config.issuer });
    } finally {
      await gatehouse.close();
    }
  });

  it('a provider without a sign function stops start-up', async () => {
    process.env.BAD_SIGNING = '1';
    try {
      const error = await buildApp(config(), { logger: createLogger('silent') }).then(
        async (app) => (await app.close(), null),
        (err: Error) => err,
      );
      expect(error?.message).to.equal('plugin @fixture/counting-signing: service "jwtSigning" has no sign function');
    } finally {
      delete process.env.BAD_SIGNING;
    }
  });
});
