import { expect } from 'chai';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { SoftAuthenticator, type SoftAlg } from '../support/soft-authenticator.js';

const rpID = 'localhost';
const origin = 'http://localhost:3000';
const userID = new TextEncoder().encode('user-0001');
const COSE: Record<SoftAlg, number> = { ES256: -7, EdDSA: -8, RS256: -257 };

type RegOpts = Partial<Parameters<typeof generateRegistrationOptions>[0]>;

/** Registers through the library's options and verification, as the server would. */
async function enroll(
  auth: SoftAuthenticator,
  opts: RegOpts = {},
  over: Parameters<SoftAuthenticator['register']>[1] = {},
) {
  const options = await generateRegistrationOptions({ rpName: 'Gatehouse', rpID, userName: 'alice', userID, ...opts });
  const response = await auth.register(options, over);
  const verification = await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
    ...(opts.supportedAlgorithmIDs ? { supportedAlgorithmIDs: opts.supportedAlgorithmIDs } : {}),
  });
  if (!verification.verified) throw new Error('registration not verified');
  return { options, response, info: verification.registrationInfo };
}

/** Signs in through the library, checking against the stored credential. */
async function signIn(
  auth: SoftAuthenticator,
  credential: WebAuthnCredential,
  over: Parameters<SoftAuthenticator['authenticate']>[1] = {},
  requireUserVerification = true,
) {
  const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
  const response = await auth.authenticate(options, over);
  return verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
    credential,
    requireUserVerification,
  });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('SoftAuthenticator against @simplewebauthn/server', () => {
  for (const alg of ['ES256', 'EdDSA', 'RS256'] as const) {
    it(`registers and authenticates with ${alg}, the counter going up`, async () => {
      const auth = new SoftAuthenticator({ origin });
      const { response, info } = await enroll(auth, { supportedAlgorithmIDs: [COSE[alg]] });
      expect(auth.credentials[0]?.alg).to.equal(alg);
      expect(response.response.publicKeyAlgorithm).to.equal(COSE[alg]);
      expect(info.fmt).to.equal('none');
      expect(info.credential.id).to.equal(response.id);
      expect(info.credential.counter).to.equal(0);
      expect(info.userVerified).to.equal(true);
      expect(info.credentialDeviceType).to.equal('singleDevice');

      const first = await signIn(auth, info.credential);
      expect(first.verified).to.equal(true);
      expect(first.authenticationInfo.newCounter).to.equal(1);
      const second = await signIn(auth, { ...info.credential, counter: 1 });
      expect(second.verified).to.equal(true);
      expect(second.authenticationInfo.newCounter).to.equal(2);
    });
  }

  it('picks the first requested algorithm it supports, unless one is forced', async () => {
    const auth = new SoftAuthenticator({ origin });
    await enroll(auth, { supportedAlgorithmIDs: [-48, -257, -7] }); // ML-DSA-44 is skipped
    expect(auth.credentials[0]?.alg).to.equal('RS256');
    await enroll(auth); // library default: EdDSA, ES256, RS256
    expect(auth.credentials[1]?.alg).to.equal('EdDSA');

    const forced = new SoftAuthenticator({ origin, alg: 'ES256' });
    const err = await rejection(enroll(forced, { supportedAlgorithmIDs: [-8] }));
    expect(err.message).to.include('Unexpected public key alg "-7"');
  });

  it('builds clientDataJSON and authenticatorData as the spec lays them out', async () => {
    const auth = new SoftAuthenticator({ origin, alg: 'ES256' });
    const { options, response } = await enroll(auth);
    const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString());
    expect(clientData).to.deep.equal({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    const authData = Buffer.from(response.response.authenticatorData ?? '', 'base64url');
    expect(authData[32]).to.equal(0x45); // UP | UV | AT
    expect(authData.readUInt32BE(33)).to.equal(0);
    expect(authData.subarray(37, 53)).to.deep.equal(Buffer.alloc(16)); // zero AAGUID
    expect(authData.readUInt16BE(53)).to.equal(Buffer.from(response.id, 'base64url').length);

    // ES256 assertion signatures are ASN.1 DER (a SEQUENCE), not raw r ‖ s.
    const assertion = await auth.authenticate(await generateAuthenticationOptions({ rpID }), { counter: 0 });
    expect(Buffer.from(assertion.response.signature, 'base64url')[0]).to.equal(0x30);
  });

  it('returns the user handle for a discoverable credential when allowCredentials is empty', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { options: reg, info } = await enroll(auth, { authenticatorSelection: { residentKey: 'required' } });
    const options = await generateAuthenticationOptions({ rpID });
    const response = await auth.authenticate(options);
    expect(response.id).to.equal(info.credential.id);
    expect(response.response.userHandle).to.equal(reg.user.id);
    expect(Buffer.from(response.response.userHandle ?? '', 'base64url')).to.deep.equal(Buffer.from(userID));
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: options.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: info.credential,
    });
    expect(result.verified).to.equal(true);
  });

  it('keeps no user handle for a residentKey "discouraged" credential', async () => {
    const auth = new SoftAuthenticator({ origin });
    await enroll(auth, { authenticatorSelection: { residentKey: 'discouraged' } });
    const err = await rejection(auth.authenticate(await generateAuthenticationOptions({ rpID })));
    expect(err.name).to.equal('NotAllowedError');
  });

  it('refuses to register over an excluded credential', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { response } = await enroll(auth);
    const err = await rejection(enroll(auth, { excludeCredentials: [{ id: response.id }] }));
    expect(err.name).to.equal('InvalidStateError');
  });

  it('userVerified: false fails when user verification is required', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { info } = await enroll(auth);
    const err = await rejection(signIn(auth, info.credential, { userVerified: false }));
    expect(err.message).to.include('User verification required');
    const lax = await signIn(auth, info.credential, { userVerified: false }, false);
    expect(lax.verified).to.equal(true);
    expect(lax.authenticationInfo.userVerified).to.equal(false);

    const absent = await rejection(signIn(auth, info.credential, { userPresent: false }, false));
    expect(absent.message).to.include('User not present');

    const unverified = new SoftAuthenticator({ origin, userVerified: false });
    expect((await rejection(enroll(unverified))).message).to.include('User verification was required');
  });

  it('a wrong origin or RP ID fails', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { info } = await enroll(auth);
    const badOrigin = await rejection(signIn(auth, info.credential, { origin: 'http://evil.example' }));
    expect(badOrigin.message).to.include('Unexpected authentication response origin');
    const badRpId = await rejection(signIn(auth, info.credential, { rpId: 'evil.example' }));
    expect(badRpId.message).to.include('Unexpected RP ID hash');
    expect((await rejection(enroll(auth, {}, { rpId: 'evil.example' }))).message).to.include('Unexpected RP ID hash');
    expect((await rejection(enroll(auth, {}, { origin: 'http://evil.example' }))).message).to.include(
      'Unexpected registration response origin',
    );
    // Like a browser, it will not use an RP ID that does not belong to its origin.
    const err = await rejection(
      auth.register(await generateRegistrationOptions({ rpName: 'x', rpID: 'evil.example', userName: 'a' })),
    );
    expect(err.name).to.equal('SecurityError');
  });

  it('a wrong challenge or clientData type fails', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { info } = await enroll(auth);
    const challenge = Buffer.from('not the one').toString('base64url');
    expect((await rejection(signIn(auth, info.credential, { challenge }))).message).to.include('challenge');
    expect((await rejection(signIn(auth, info.credential, { type: 'webauthn.create' }))).message).to.include(
      'Unexpected authentication response type',
    );
  });

  it('a counter override not above the stored counter is rejected', async () => {
    const auth = new SoftAuthenticator({ origin });
    const { info } = await enroll(auth);
    const first = await signIn(auth, info.credential);
    const stored = { ...info.credential, counter: first.authenticationInfo.newCounter };
    const lower = await rejection(signIn(auth, stored, { counter: 0 }));
    expect(lower.message).to.include('Response counter value 0 was lower than expected 1');
    // An equal counter is rejected too, with the same "lower than" message.
    const equal = await rejection(signIn(auth, stored, { counter: 1 }));
    expect(equal.message).to.include('Response counter value 1 was lower than expected 1');
    // The override did not touch the stored counter: the next real response is 2.
    expect((await signIn(auth, stored)).authenticationInfo.newCounter).to.equal(2);
  });

  it('surfaces the BE/BS flags as a backed-up multi-device credential', async () => {
    const auth = new SoftAuthenticator({ origin, backupEligible: true, backedUp: true });
    const { info } = await enroll(auth);
    expect(info.credentialDeviceType).to.equal('multiDevice');
    expect(info.credentialBackedUp).to.equal(true);
    const result = await signIn(auth, info.credential, { backedUp: false });
    expect(result.authenticationInfo.credentialDeviceType).to.equal('multiDevice');
    expect(result.authenticationInfo.credentialBackedUp).to.equal(false);
    // BS without BE is impossible, and the library says so.
    const err = await rejection(signIn(auth, info.credential, { backupEligible: false }));
    expect(err.name).to.equal('InvalidBackupFlags');
  });
});
