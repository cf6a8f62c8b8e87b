import type { RecordStore, Services } from '@gatehouse-auth/core';

/** RFC 9126 §2.2: the URN prefix of the request_uri values this plugin issues. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** A reference past this length is no reference of ours (ours are 43 characters). */
const MAX_REFERENCE = 128;

/**
 * The pushed requests in the plugin's record store, one record a request:
 * `request:<sha256(client_id, reference)>` holding the parameters, with the request_uri's
 * lifetime as the record's TTL. The key binds the request to its client (another app's
 * client_id finds nothing), and `consume` lets exactly one /authorize take it, on every node.
 */
export class PushedRequests {
  constructor(
    private readonly records: RecordStore,
    private readonly crypto: Services['crypto'],
  ) {}

  /** Stores the parameters; the request_uri that stands for them. */
  async push(clientId: string, params: Record<string, string>, ttlSeconds: number): Promise<string> {
    const reference = this.crypto.randomToken(32);
    await this.records.put(this.keyOf(clientId, reference), { params }, { ttlSeconds });
    return `${REQUEST_URI_PREFIX}${reference}`;
  }

  /** Takes the parameters of a live request_uri of this client, once; null otherwise. */
  async take(clientId: string, requestUri: string): Promise<Record<string, string> | null> {
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return null;
    const reference = requestUri.slice(REQUEST_URI_PREFIX.length);
    if (reference.length === 0 || reference.length > MAX_REFERENCE) return null;
    const record = await this.records.consume(this.keyOf(clientId, reference));
    return (record?.data.params as Record<string, string> | undefined) ?? null;
  }

  private keyOf(clientId: string, reference: string): string {
    return `request:${this.crypto.sha256(`${clientId}\n${reference}`)}`;
  }
}
