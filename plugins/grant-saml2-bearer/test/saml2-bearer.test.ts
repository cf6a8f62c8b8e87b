import { expect } from 'chai';
import { type GrantHandler, type OAuthClient } from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  type FakeClock,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';
import {
  ENVELOPED,
  EXC_C14N,
  RSA_SHA1,
  SHA1,
  assertionXml,
  encode,
  makeKeyPairs,
  naiveVerify,
  sign,
  signatureOf,
  type AssertionFields,
  type KeyPair,
} from './idp.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:saml2-bearer';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const IDP = 'https://idp.example.test/saml';
const ISSUER = 'https://issuer.example.test';
const TOKEN_ENDPOINT = `${ISSUER}/oauth/token`;
const NOW = new Date('2026-01-01T12:00:00Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

let trusted: KeyPair;
let attacker: KeyPair;
let rollover: KeyPair;

interface Setup {
  oauth: FakeOAuth;
  clock: FakeClock;
  handler: GrantHandler;
  client: OAuthClient;
  /** Every useAssertionId call, in order. */
  replayCalls: { namespace: string; id: string; expiresAt: Date }[];
}

async function setup(options: unknown = {}): Promise<Setup> {
  const services = fakeServices();
  services.clock.set(NOW);
  const { grants } = await registerWithFakes(plugin, options, services);
  const oauth = fakeOAuth({
    clock: services.clock,
    issuer: ISSUER,
    users: [
      { identifier: 'alice@example.test', userId: 'user-alice', password: 'unused' },
      { identifier: 'admin@example.test', userId: 'user-admin', password: 'unused' },
      { identifier: 'locked@example.test', userId: 'user-locked', password: 'unused', status: 'locked' },
    ],
  });
  const replayCalls: Setup['replayCalls'] = [];
  const useAssertionId = oauth.useAssertionId.bind(oauth);
  oauth.useAssertionId = async (namespace, id, expiresAt) => {
    replayCalls.push({ namespace, id, expiresAt });
    return useAssertionId(namespace, id, expiresAt);
  };
  const client = fakeClient({
    clientId: 'partner',
    grantTypes: [GRANT, 'refresh_token'],
    scopes: ['openid', 'profile', 'offline_access', 'reports.read'],
    settings: { saml_issuers: [{ issuer: IDP, certificate: trusted.certificate }] },
  });
  return { oauth, clock: services.clock, handler: grants[0]!, client, replayCalls };
}

function fields(overrides: Partial<AssertionFields> = {}): AssertionFields {
  return {
    id: '_a1b2c3',
    issuer: IDP,
    nameId: 'alice@example.test',
    audience: TOKEN_ENDPOINT,
    recipient: TOKEN_ENDPOINT,
    method: BEARER,
    notBefore: at(-30),
    notOnOrAfter: at(300),
    confirmationNotOnOrAfter: at(300),
    extra: '',
    ...overrides,
  };
}

/** A valid signed assertion with these changes, as XML. */
const signedXml = (overrides: Partial<AssertionFields> = {}, keys: KeyPair = trusted) =>
  sign(assertionXml(fields(overrides)), keys);

function request(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = s.client) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

const present = (s: Setup, xml: string, scope?: string) => request(s, { assertion: encode(xml), scope });

/** SAML failures are all 400 invalid_grant-style errors; the third argument is the description. */
const expectSamlError = (promise: Promise<unknown>, code: string, description?: string) =>
  expectOAuthError(promise, code, 400, description);

const BAD_SIGNATURE = 'assertion is not signed by a trusted issuer';

describe('@gatehouse-auth/grant-saml2-bearer', function () {
  this.timeout(30_000);

  before(() => {
    [trusted, attacker, rollover] = makeKeyPairs(['test-idp', 'evil-idp', 'test-idp-next']) as [
      KeyPair,
      KeyPair,
      KeyPair,
    ];
  });

  it('registers one handler for the RFC 7522 grant type with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal(GRANT);
    expect(handler.parameters).to.deep.equal(['assertion', 'scope']);
  });

  describe('a valid assertion', () => {
    it('gets an access token for the NameID user, every client scope but offline_access, no refresh token', async () => {
      const s = await setup();
      const response = await present(s, signedXml());
      expect(s.oauth.issued).to.deep.equal([
        {
          client: s.client,
          subject: 'user-alice',
          scope: ['openid', 'profile', 'reports.read'],
          grantType: GRANT,
          refreshToken: false,
        },
      ]);
      expect(response.scope).to.equal('openid profile reports.read');
      expect(response).to.not.have.property('refresh_token');
      expect(s.oauth.tokenRow(response.access_token)!.subject).to.equal('user-alice');
    });

    it('records the ID for replay under saml2:<issuer> until the earliest NotOnOrAfter plus skew', async () => {
      const s = await setup();
      await present(s, signedXml({ notOnOrAfter: at(600), confirmationNotOnOrAfter: at(120) }));
      expect(s.replayCalls).to.deep.equal([{ namespace: `saml2:${IDP}`, id: '_a1b2c3', expiresAt: at(180) }]);
    });

    it('accepts a NameID that is a user id, and a requested scope subset', async () => {
      const s = await setup();
      const response = await present(s, signedXml({ nameId: 'user-admin' }), 'reports.read');
      expect(s.oauth.issued[0]!.subject).to.equal('user-admin');
      expect(response.scope).to.equal('reports.read');
    });

    it('accepts standard (padded) base64 as well as base64url', async () => {
      const s = await setup();
      const xml = signedXml();
      const b64 = Buffer.from(xml).toString('base64');
      expect(b64).to.match(/[+/=]/);
      await request(s, { assertion: b64 });
      expect(s.oauth.issued).to.have.length(1);
    });

    it('accepts CRLF line ends in the assertion', async () => {
      const s = await setup();
      const xml = signedXml({ extra: '<saml:Advice>\n</saml:Advice>' }).replace(/\n/g, '\r\n');
      expect(xml).to.contain('\r\n');
      await present(s, xml);
      expect(s.oauth.issued).to.have.length(1);
    });

    it('accepts the other assertion audiences (issuer URL) as Audience and Recipient', async () => {
      const s = await setup();
      await present(s, signedXml({ audience: ISSUER, recipient: ISSUER }));
      expect(s.oauth.issued).to.have.length(1);
    });

    it('tries every certificate configured for the issuer (rollover)', async () => {
      const s = await setup();
      const client = {
        ...s.client,
        settings: {
          saml_issuers: [
            { issuer: IDP, certificate: trusted.certificate },
            { issuer: IDP, certificate: rollover.certificate },
          ],
        },
      };
      await request(s, { assertion: encode(signedXml({}, rollover)) }, client);
      expect(s.oauth.issued[0]!.subject).to.equal('user-alice');
    });

    it('accepts times within the skew and honours clock_skew_seconds', async () => {
      const s = await setup();
      s.clock.set(at(300 + 59));
      await present(s, signedXml());
      expect(s.oauth.issued).to.have.length(1);

      const strict = await setup({ clock_skew_seconds: 0 });
      strict.clock.set(at(300));
      await expectSamlError(present(strict, signedXml()), 'invalid_grant');
    });
  });

  describe('malformed requests', () => {
    it('no assertion → invalid_request', async () => {
      const s = await setup();
      await expectSamlError(request(s, {}), 'invalid_request', 'assertion is required');
    });

    it('not base64 → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(request(s, { assertion: 'not base64!' }), 'invalid_grant');
      await expectSamlError(request(s, { assertion: 'abcde' }), 'invalid_grant');
    });

    it('base64 of something that is not XML → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(present(s, 'hello world'), 'invalid_grant');
      await expectSamlError(present(s, '<saml:Assertion xmlns:saml="x"><unclosed>'), 'invalid_grant');
    });

    it('a root that is not saml:Assertion (e.g. a samlp:Response) → invalid_grant', async () => {
      const s = await setup();
      const response =
        '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r1">' +
        assertionXml(fields()) +
        '</samlp:Response>';
      await expectSamlError(present(s, response), 'invalid_grant', BAD_SIGNATURE);
      // A validly signed root named Assertion but outside the SAML namespace (its children are SAML).
      const wrongNs = sign(
        assertionXml(fields())
          .replace('<saml:Assertion ', '<other:Assertion xmlns:other="urn:example:other" ')
          .replace('</saml:Assertion>', '</other:Assertion>'),
        trusted,
      );
      expect(naiveVerify(wrongNs, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, wrongNs), 'invalid_grant', BAD_SIGNATURE);
    });
  });

  describe('signature', () => {
    it('unsigned assertion → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(present(s, assertionXml(fields())), 'invalid_grant', BAD_SIGNATURE);
      expect(s.oauth.issued).to.have.length(0);
    });

    it('tampered NameID after signing → invalid_grant', async () => {
      const s = await setup();
      const tampered = signedXml().replace('alice@example.test', 'admin@example.test');
      expect(naiveVerify(tampered, trusted.certificate)).to.equal(null);
      await expectSamlError(present(s, tampered), 'invalid_grant', BAD_SIGNATURE);
    });

    it('signed by an untrusted key with its own certificate in KeyInfo → invalid_grant', async () => {
      const s = await setup();
      const forged = sign(assertionXml(fields({ nameId: 'admin@example.test' })), attacker, { keyInfo: true });
      expect(forged).to.contain('<ds:X509Certificate>');
      // A verifier that trusts KeyInfo would log the attacker in as admin.
      expect(naiveVerify(forged, trusted.certificate, true)).to.equal('admin@example.test');
      await expectSamlError(present(s, forged), 'invalid_grant', BAD_SIGNATURE);
    });

    it('an issuer this client does not trust (even with a valid signature) → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ issuer: 'https://other-idp.example.test' })),
        'invalid_grant',
        'assertion issuer is not trusted by this client',
      );
      const noIssuers = { ...s.client, settings: { saml_issuers: [] } };
      await expectSamlError(request(s, { assertion: encode(signedXml()) }, noIssuers), 'invalid_grant');
    });

    it('a certificate of another issuer does not verify this issuer → invalid_grant', async () => {
      const s = await setup();
      const client = {
        ...s.client,
        settings: {
          saml_issuers: [
            { issuer: IDP, certificate: trusted.certificate },
            { issuer: 'https://evil.example.test', certificate: attacker.certificate },
          ],
        },
      };
      // Signed by the attacker's (trusted, but for another issuer) key, claiming to be IDP.
      const forged = sign(assertionXml(fields()), attacker);
      await expectSamlError(request(s, { assertion: encode(forged) }, client), 'invalid_grant', BAD_SIGNATURE);
    });

    it('SHA-1 signature or digest → invalid_grant', async () => {
      const s = await setup();
      const sha1Sig = sign(assertionXml(fields()), trusted, { signatureAlgorithm: RSA_SHA1 });
      expect(naiveVerify(sha1Sig, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, sha1Sig), 'invalid_grant', BAD_SIGNATURE);
      const sha1Digest = sign(assertionXml(fields()), trusted, { digestAlgorithm: SHA1 });
      expect(naiveVerify(sha1Digest, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, sha1Digest), 'invalid_grant', BAD_SIGNATURE);
    });

    it('a reference other than #<root ID> (URI="") → invalid_grant', async () => {
      const s = await setup();
      const wholeDoc = sign(assertionXml(fields()), trusted, { emptyUri: true });
      expect(wholeDoc).to.contain('URI=""');
      expect(naiveVerify(wholeDoc, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, wholeDoc), 'invalid_grant', BAD_SIGNATURE);
    });

    it('more than two transforms → invalid_grant', async () => {
      const s = await setup();
      const three = sign(assertionXml(fields()), trusted, { transforms: [ENVELOPED, EXC_C14N, EXC_C14N] });
      expect(naiveVerify(three, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, three), 'invalid_grant', BAD_SIGNATURE);
    });

    it('a valid signature that is not a direct child of the root → invalid_grant', async () => {
      const s = await setup();
      const nested = sign(assertionXml(fields()), trusted, {
        location: { reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Subject']", action: 'append' },
      });
      expect(naiveVerify(nested, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, nested), 'invalid_grant', BAD_SIGNATURE);
    });

    it('a second signature (hidden inside the first, outside every digest) → invalid_grant', async () => {
      const s = await setup();
      const once = signedXml();
      const signature = signatureOf(once);
      const other = signatureOf(signedXml({ id: '_other' }));
      // The enveloped transform drops the outer Signature with all it contains, so the digest and
      // the SignatureValue still verify: only the signature count stops this document.
      const twice = once.replace(
        signature,
        signature.replace(/<\/ds:Signature>$/, `<ds:Object>${other}</ds:Object></ds:Signature>`),
      );
      expect(twice.match(/<ds:Signature /g)).to.have.length(2);
      expect(naiveVerify(twice, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, twice), 'invalid_grant', BAD_SIGNATURE);
    });
  });

  describe('XML attacks', () => {
    /** The signed assertion without its XML declaration, to be embedded. */
    const embeddable = (xml: string) => xml.replace(/^<\?xml[^>]*>/, '');

    it('XSW1: an evil root wrapping the signed assertion in Advice → invalid_grant', async () => {
      const s = await setup();
      const genuine = embeddable(signedXml());
      const evil = assertionXml(
        fields({ id: '_evil', nameId: 'admin@example.test', extra: `<saml:Advice>${genuine}</saml:Advice>` }),
      );
      // The pitfall: checkSignature passes and the naive reader logs in as admin.
      expect(naiveVerify(evil, trusted.certificate)).to.equal('admin@example.test');
      await expectSamlError(present(s, evil), 'invalid_grant', BAD_SIGNATURE);
      expect(s.oauth.issued).to.have.length(0);
    });

    it('XSW2: the signature moved to an evil root, still referencing the wrapped assertion → invalid_grant', async () => {
      const s = await setup();
      const genuine = embeddable(signedXml());
      const signature = signatureOf(genuine);
      const evil = assertionXml(
        fields({
          id: '_evil',
          nameId: 'admin@example.test',
          extra: `<saml:Advice>${genuine.replace(signature, '')}</saml:Advice>`,
        }),
      ).replace(`<saml:Issuer>${IDP}</saml:Issuer>`, `<saml:Issuer>${IDP}</saml:Issuer>${signature}`);
      expect(naiveVerify(evil, trusted.certificate)).to.equal('admin@example.test');
      await expectSamlError(present(s, evil), 'invalid_grant', BAD_SIGNATURE);
    });

    it('duplicate ID: an evil root with the signed ID wrapping the signed assertion → invalid_grant', async () => {
      const s = await setup();
      const genuine = embeddable(signedXml());
      const evil = assertionXml(
        fields({ nameId: 'admin@example.test', extra: `<saml:Advice>${genuine}</saml:Advice>` }),
      );
      expect(evil.match(/ID="_a1b2c3"/g)).to.have.length(2);
      await expectSamlError(present(s, evil), 'invalid_grant', BAD_SIGNATURE);
    });

    it('comment injection in NameID: the full signed text is the subject, not the part before the comment', async () => {
      const s = await setup();
      const injected = signedXml({ nameId: 'admin@example.test.evil.com' }).replace(
        'admin@example.test.evil.com',
        'admin@example.test<!---->.evil.com',
      );
      // The signature still verifies (c14n drops comments); firstChild.data stops at the comment.
      expect(naiveVerify(injected, trusted.certificate)).to.equal('admin@example.test');
      await expectSamlError(present(s, injected), 'invalid_grant', 'assertion subject is not an active user');
      expect(s.oauth.issued).to.have.length(0);
    });

    it('comment injection: a user who really is admin@example.test.evil.com gets their own token', async () => {
      const s = await setup();
      s.oauth.users.findByIdentifier = async (identifier) =>
        identifier === 'admin@example.test.evil.com'
          ? { id: 'user-evil', username: identifier, email: null, phone: null, status: 'active' }
          : null;
      const injected = signedXml({ nameId: 'admin@example.test.evil.com' }).replace(
        'admin@example.test.evil.com',
        'admin@example.test<!---->.evil.com',
      );
      await present(s, injected);
      expect(s.oauth.issued[0]!.subject).to.equal('user-evil');
    });

    it('DOCTYPE → invalid_grant, even in front of a validly signed assertion', async () => {
      const s = await setup();
      const genuine = embeddable(signedXml());
      const withDoctype = `<!DOCTYPE saml:Assertion [<!ENTITY who "admin@example.test">]>${genuine}`;
      expect(naiveVerify(withDoctype, trusted.certificate)).to.equal('alice@example.test');
      await expectSamlError(present(s, withDoctype), 'invalid_grant', BAD_SIGNATURE);
    });
  });

  describe('conditions', () => {
    it('wrong Audience → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ audience: 'https://other-as.example.test/token' })),
        'invalid_grant',
        'assertion audience is not this token endpoint',
      );
    });

    it('Conditions NotOnOrAfter passed (beyond the 60 s skew) → invalid_grant', async () => {
      const s = await setup();
      s.clock.set(at(200 + 60));
      await expectSamlError(
        present(s, signedXml({ notOnOrAfter: at(200), confirmationNotOnOrAfter: at(900) })),
        'invalid_grant',
        'assertion is expired or not yet valid',
      );
    });

    it('Conditions NotBefore more than 60 s ahead → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ notBefore: at(61) })),
        'invalid_grant',
        'assertion is expired or not yet valid',
      );
      await present(s, signedXml({ id: '_other', notBefore: at(60) }));
      expect(s.oauth.issued).to.have.length(1);
    });

    it('SubjectConfirmationData NotOnOrAfter passed → invalid_grant', async () => {
      const s = await setup();
      s.clock.set(at(100 + 60));
      await expectSamlError(
        present(s, signedXml({ notOnOrAfter: at(900), confirmationNotOnOrAfter: at(100) })),
        'invalid_grant',
        'assertion has no valid bearer SubjectConfirmation for this token endpoint',
      );
    });

    it('wrong Recipient → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ recipient: 'https://sp.example.test/acs' })),
        'invalid_grant',
        'assertion has no valid bearer SubjectConfirmation for this token endpoint',
      );
    });

    it('a confirmation method other than bearer → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ method: 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key' })),
        'invalid_grant',
        'assertion has no valid bearer SubjectConfirmation for this token endpoint',
      );
    });

    it('replay: the same assertion twice → invalid_grant the second time', async () => {
      const s = await setup();
      const xml = signedXml();
      await present(s, xml);
      await expectSamlError(present(s, xml), 'invalid_grant', 'assertion was already used');
      expect(s.oauth.issued).to.have.length(1);
    });
  });

  describe('subject and scope', () => {
    it('unknown NameID → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ nameId: 'nobody@example.test' })),
        'invalid_grant',
        'assertion subject is not an active user',
      );
    });

    it('a user who is not active → invalid_grant', async () => {
      const s = await setup();
      await expectSamlError(
        present(s, signedXml({ nameId: 'locked@example.test' })),
        'invalid_grant',
        'assertion subject is not an active user',
      );
    });

    it('excess scope, and offline_access → invalid_scope, and the assertion is not spent', async () => {
      const s = await setup();
      const xml = signedXml();
      await expectSamlError(present(s, xml, 'reports.read admin'), 'invalid_scope');
      await expectSamlError(present(s, xml, 'openid offline_access'), 'invalid_scope');
      expect(s.replayCalls).to.have.length(0);
      await present(s, xml, 'openid');
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['openid']);
    });
  });
});
