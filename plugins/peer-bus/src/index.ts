/**
 * @gatehouse-auth/peer-bus — the news every node must hear at once (revoked tokens for
 * the token caches, client authentication blocks, reloads of the apps stored in the database;
 * decisions 29, 51, 74 and 87) carried to the other nodes: between the servers of one PostgreSQL
 * database by LISTEN/NOTIFY, and between the cluster workers of `server.workers` through their
 * primary, which its `primary` hook makes relay. It provides the `peerBus` service and runs the
 * protocol over either channel (the news, the acknowledgements `publish` waits for, the
 * heartbeats); the core requires a provider on PostgreSQL and with `server.workers` other than 1.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { relayPeerNews } from './cluster.js';
import { Peers } from './protocol.js';

export { PostgresTransport } from './postgres-transport.js';
export { Peers } from './protocol.js';
export { CLUSTER_MESSAGE, relayPeerNews } from './cluster.js';

export default definePlugin({
  name: '@gatehouse-auth/peer-bus',
  apiVersion: '^1.3',
  provides: ['peerBus'],
  // No options: it listens on the server's own database (`database.url`), which the core hands it.
  register(api) {
    api.provide('peerBus', new Peers(api.logger));
  },
  // The primary of `server.workers`: relays each worker's news to every worker.
  primary() {
    const stop = relayPeerNews();
    return { close: async () => stop() };
  },
});
