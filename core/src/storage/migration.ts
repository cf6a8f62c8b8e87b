import type { QueryInterface } from 'sequelize';
import type { MigrationParams } from 'umzug';

/** One schema change, up and down. */
export interface Migration {
  name: string;
  up(params: MigrationParams<QueryInterface>): Promise<void>;
  down(params: MigrationParams<QueryInterface>): Promise<void>;
}
