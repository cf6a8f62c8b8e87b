import type { KeyObject, X509Certificate } from 'node:crypto';
import { KeyObject as Keys, type webcrypto } from 'node:crypto';
import type { WebApi } from '@gatehouse-auth/core';

/** The app's key resolver (`web.clientKeys`). */
type KeyResolver = NonNullable<ReturnType<WebApi['clientKeys']>>;

/** The JWS algorithms a key of the certificate's type may be registered under, to ask the app's key set with. */
function algorithmsOf(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'ec':
      return [
        { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[key.asymmetricKeyDetails?.namedCurve ?? ''] ??
          '',
      ];
    case 'rsa':
      return ['RS256', 'PS256', 'RS384', 'PS384', 'RS512', 'PS512'];
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      return [];
  }
}

const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'der' });

/**
 * RFC 8705 §2.2: whether the self-signed certificate's public key is one of the app's registered
 * keys (its `jwks` or `jwks_uri`, with or without `x5c`), asked through the core's key resolver
 * (`web.clientKeys`) for each algorithm such a key may carry.
 */
export async function registeredKey(certificate: X509Certificate, keys: KeyResolver): Promise<boolean> {
  const presented = spki(certificate.publicKey);
  const same = (candidate: unknown) => {
    try {
      return spki(Keys.from(candidate as webcrypto.CryptoKey)).equals(presented);
    } catch {
      return false;
    }
  };
  for (const alg of algorithmsOf(certificate.publicKey).filter(Boolean)) {
    try {
      if (same(await keys({ alg }, { payload: '', signature: '' }))) return true;
    } catch (err) {
      // Several keys of that type: the resolver's error yields each (jose's JWKSMultipleMatchingKeys).
      if (err && typeof err === 'object' && Symbol.asyncIterator in err) {
        for await (const candidate of err as AsyncIterable<unknown>) if (same(candidate)) return true;
      }
      // None of that type (JWKSNoMatchingKey), or a key set that cannot be fetched: not this algorithm.
    }
  }
  return false;
}
