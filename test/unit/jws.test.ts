/** JWTs signed by node:crypto, inline and on signing threads, checked with jose (an independent verifier). */
import { expect } from 'chai';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { signJwt, signJwtOffThread, type JwtSigner } from '../../core/dist/oauth/jws.js';
import { SigningThreads } from '../../core/dist/oauth/signing-threads.js';

const signers: JwtSigner[] = [
  { alg: 'ES256', kid: 'ec-1', key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
  { alg: 'RS256', kid: 'rsa-1', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'PS256', kid: 'rsa-2', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'EdDSA', kid: 'ed-1', key: generateKeyPairSync('ed25519').privateKey },
];

describe('JWS signing (node:crypto, verified with jose)', () => {
  for (const signer of signers) {
    it(`${signer.alg}: inline and off-thread signatures verify, with typ, alg and kid in the header`, async () => {
      const publicKey = createPublicKey(signer.key);
      for (const sign of [signJwt, signJwtOffThread]) {
        for (const typ of ['at+jwt', 'JWT']) {
          const token = await sign(signer, { typ }, { sub: 'u1', n: typ });
          const { payload, protectedHeader } = await jwtVerify(token, publicKey, { algorithms: [signer.alg] });
          expect(protectedHeader).to.deep.equal({ typ, alg: signer.alg, kid: signer.kid });
          expect(payload).to.deep.equal({ sub: 'u1', n: typ });
        }
      }
    });
  }

  it('a header may add fields but never change alg or kid', async () => {
    const [signer] = signers as [JwtSigner];
    const token = signJwt(signer, { typ: 'logout+jwt', alg: 'none', kid: 'forged', cty: 'x' }, { sub: 'u' });
    expect(decodeProtectedHeader(token)).to.deep.equal({ typ: 'logout+jwt', cty: 'x', alg: 'ES256', kid: 'ec-1' });
    // A plain header afterwards is not the extended one of before.
    expect(decodeProtectedHeader(signJwt(signer, { typ: 'logout+jwt' }, {}))).to.deep.equal({
      typ: 'logout+jwt',
      alg: 'ES256',
      kid: 'ec-1',
    });
  });
});

describe('signing threads', () => {
  const [es256, rs256] = signers as [JwtSigner, JwtSigner];

  it('signs a burst in batches across threads, each token verifying under its own key', async () => {
    const threads = new SigningThreads(2);
    try {
      const burst = Array.from({ length: 200 }, (_, i) => {
        const signer = i % 5 === 0 ? rs256 : es256;
        return signJwtOffThread(signer, { typ: 'at+jwt' }, { n: i }, threads).then((token) => ({ token, signer }));
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
        signJwtOffThread(wrong, {}, { sub: 'x' }, threads),
        signJwtOffThread(es256, {}, { sub: 'y' }, threads),
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
      await signJwtOffThread(es256, {}, { sub: 'warm' }, threads);
      // One batch of 50 RSA signatures (tens of ms on the thread): it cannot finish before the end.
      const inFlight = Promise.all(
        Array.from({ length: 50 }, () => signJwtOffThread(rs256, {}, { sub: 'lost' }, threads)),
      );
      await new Promise((resolve) => setImmediate(resolve)); // the batch is posted
      await Promise.all(
        (threads as unknown as { threads: { worker: Worker }[] }).threads.map((t) => t.worker.terminate()),
      );
      const lost = await inFlight.then(
        () => null,
        (err: Error) => err.message,
      );
      expect(lost).to.match(/signing thread exited/);
      const token = await signJwtOffThread(es256, {}, { sub: 'again' }, threads);
      expect((await jwtVerify(token, createPublicKey(es256.key))).payload.sub).to.equal('again');
    } finally {
      await threads.close();
    }
  });

  it('while every thread is busy, the signatures of later turns wait and go as one batch (issue 30)', async () => {
    const threads = new SigningThreads(1);
    try {
      await signJwtOffThread(es256, {}, { sub: 'warm' }, threads);
      const [thread] = (threads as unknown as { threads: { worker: Worker }[] }).threads;
      const batches: number[] = [];
      const post = thread!.worker.postMessage.bind(thread!.worker);
      thread!.worker.postMessage = (message: { type: string; items?: unknown[] }) => {
        if (message.type === 'sign') batches.push(message.items!.length);
        post(message);
      };
      // A batch of RSA signatures keeps the thread busy for tens of ms…
      const slow = Array.from({ length: 20 }, (_, i) => signJwtOffThread(rs256, {}, { n: i }, threads));
      await new Promise((resolve) => setImmediate(resolve));
      // …while ten more turns each ask for three signatures.
      const later: Promise<string>[] = [];
      for (let turn = 0; turn < 10; turn++) {
        for (let i = 0; i < 3; i++) later.push(signJwtOffThread(es256, {}, { turn, i }, threads));
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
