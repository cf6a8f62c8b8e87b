import type { Logger } from 'pino';
import type { AuthMethod, NewCredential } from './extensions.js';
import type { Services } from './services.js';
import type { JsonObject } from './values.js';

/**
 * Since 1.3: a command a plugin adds to the `gatehouse` binary (`GatehousePlugin.commands`),
 * run as `gatehouse <name> [positionals] [options]` and listed by `gatehouse help`. The core's
 * own commands are looked up first; a name of the core's or of another plugin's stops start-up.
 *
 * @example
 * commands: [{
 *   name: 'users purge-stale',
 *   usage: '[--days N]',
 *   description: 'delete users who never signed in within N days',
 *   options: { days: { type: 'string' } },
 *   async run(cli) {
 *     const { services } = await cli.server();
 *     ...
 *     return 0;
 *   },
 * }]
 */
export interface CliCommand {
  /**
   * One or two words of lowercase letters, digits and `-`: `backup`, or `users import` (a
   * subcommand of a core group). A one-word name may not be the first word of another command.
   */
  name: string;
  /** What `gatehouse help` shows after the name: `FILE [--skip-invalid] [--dry-run]`. */
  usage?: string;
  /** What it does, for `gatehouse help` (a line or a few; the core indents them). */
  description: string;
  /** Its options, as node:util's `parseArgs` takes them (`--config` and `--help` are the core's). */
  options?: Readonly<Record<string, CliOption>>;
  /** Its words after the name, in order; a word more is refused before `run` (exit 2). */
  positionals?: readonly CliPositional[];
  /** Does the work; resolves to the exit code (0 done, 1 failed, 2 a wrong command line). */
  run(cli: CliContext): Promise<number>;
}

export interface CliOption {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** A one-letter alias (`-n`). */
  short?: string;
}

export interface CliPositional {
  name: string;
  /**
   * Set for a required word: without it the CLI answers `gatehouse: <command> needs <needs>`,
   * exit 2, before `run` (e.g. `a FILE (JSON lines, docs/migration.md)`).
   */
  needs?: string;
}

/** What a plugin's command gets: its command line, and the server when it asks for it. */
export interface CliContext {
  /** The words after the command's name (checked against `positionals`). */
  readonly positionals: readonly string[];
  /** Its options as given (`parseArgs` values: a string, a boolean, a list, or undefined). */
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  /** The config file the command runs with (`--config`, `$GATEHOUSE_CONFIG` or the default), absolute. */
  readonly configFile: string;
  /**
   * The server the config describes, composed as `gatehouse start` composes it (plugins
   * registered, database migrated) but not listening; its log shows errors only. The first call
   * composes it, later calls get the same; the CLI closes it once `run` has finished.
   */
  server(): Promise<CliServer>;
  /** Writes to standard output as is. */
  print(text: string): void;
  /**
   * Writes rows under a header to standard output, as the CLI's own tables (`gatehouse keys
   * list`): columns padded to their widest cell, two spaces apart, no trailing spaces.
   */
  table(header: readonly string[], rows: readonly (readonly string[])[]): void;
  /** One line on standard error, `gatehouse: ` before it. */
  warn(message: string): void;
}

/** The composed server, as a plugin's command sees it. */
export interface CliServer {
  readonly services: Services;
  readonly logger: Logger;
  /** The database's URL, its password replaced by `***` (to say which database a command read). */
  readonly databaseUrl: string;
  /** A method the config loads, by id (its `enrollment.import`, say). */
  method(id: string): AuthMethod | undefined;
  /** Users written in bulk, as a migration from another system needs (decision 49). */
  readonly userImport: UserImportStore;
}

/** A user to import, checked, with the credentials its methods' `enrollment.import` made. */
export interface ImportedUser {
  username: string;
  /** Lower-cased. */
  email: string | null;
  phone: string | null;
  disabled: boolean;
  /** The address counts as proven (account verification), as if a code sent there came back. */
  emailVerified: boolean;
  phoneVerified: boolean;
  /** OIDC profile claims, as `checkProfile` answered them. */
  profile: JsonObject | null;
  credentials: readonly { method: string; credential: NewCredential }[];
}

/**
 * Writing users in bulk (`CliServer.userImport`). The core's rules hold: usernames, emails and
 * phones (`USERNAME_PATTERN`, `EMAIL_PATTERN`, `E164_PATTERN`) share one case-insensitive
 * namespace, and profile claims are OIDC's.
 */
export interface UserImportStore {
  /** Profile claims checked as the core stores them, or the first claim refused and why. */
  checkProfile(
    value: Record<string, unknown>,
  ): { ok: true; profile: JsonObject } | { ok: false; field: string; message: string };
  /** Which of these identifiers (lower-cased usernames, emails, phones) a user has already. */
  taken(identifiers: readonly string[]): Promise<Set<string>>;
  /**
   * Writes the users, their identifiers, credentials, profiles and proven addresses in one
   * transaction: all of them or none. Throws for a user the core's rules refuse, and when an
   * identifier was taken meanwhile (nothing is written then either).
   */
  write(users: readonly ImportedUser[]): Promise<void>;
}
