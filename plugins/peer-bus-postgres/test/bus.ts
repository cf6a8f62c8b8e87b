import type { createLogger } from '@gatehouse-auth/core';
import { PostgresTransport } from '@gatehouse-auth/peer-bus-postgres';
import { openPeerBus, Peers, type PeerBus } from '../../../core/src/peer-bus.js';

/** The core's peer bus over this plugin's transport, as a server on PostgreSQL opens it. */
export async function postgresPeerBus(url: string, logger: ReturnType<typeof createLogger>): Promise<PeerBus> {
  const bus = new Peers(logger);
  await openPeerBus(bus, { dialect: 'postgres', url, transport: new PostgresTransport(logger) });
  return bus;
}
