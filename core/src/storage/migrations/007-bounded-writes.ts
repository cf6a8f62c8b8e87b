import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Unauthenticated requests must not write rows without bound:
 * - `events.count`: repeats of one event (an unknown client id from one address, a wrong proof
 *   for an unknown user) within a minute share a row and count up;
 * - `login_flows.initiations`: initiations a flow has had, capped by a conditional update.
 */
export const m007BoundedWrites: Migration = {
  name: '007-bounded-writes',
  async up({ context: qi }) {
    await qi.addColumn('events', 'count', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 });
    await qi.addColumn('login_flows', 'initiations', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  },
  async down({ context: qi }) {
    await qi.removeColumn('events', 'count');
    await qi.removeColumn('login_flows', 'initiations');
  },
};
