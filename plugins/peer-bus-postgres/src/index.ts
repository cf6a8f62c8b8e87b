/**
 * @gatehouse-auth/peer-bus-postgres — the news every node must hear at once (revoked tokens for
 * the token caches, client authentication blocks, reloads of the apps stored in the database;
 * decisions 29, 51 and 74) carried between the nodes of one PostgreSQL database by LISTEN/NOTIFY.
 * It provides the `peerTransport` service; the core keeps the protocol over it (the news, the
 * acknowledgements `publish` waits for, the heartbeats) and requires a transport on PostgreSQL.
 * On SQLite it is unused: the cluster workers of one file talk through their primary.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { PostgresTransport } from './postgres-transport.js';

export { PostgresTransport } from './postgres-transport.js';

export default definePlugin({
  name: '@gatehouse-auth/peer-bus-postgres',
  apiVersion: '^1.3',
  provides: ['peerTransport'],
  // No options: it listens on the server's own database (`database.url`), which the core hands it.
  register(api) {
    api.provide('peerTransport', new PostgresTransport(api.logger));
  },
});
