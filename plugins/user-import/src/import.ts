import {
  E164_PATTERN as E164,
  EMAIL_PATTERN as EMAIL,
  USERNAME_PATTERN as USERNAME,
  type AuthMethod,
  type CliServer,
  type ImportedUser,
  type JsonObject,
  type UserImportStore,
} from '@gatehouse-auth/core';

/** A refused line of the file, and why. */
export interface ImportProblem {
  line: number;
  message: string;
}

export interface ImportOptions {
  /** Import the good rows and report the bad ones (default: a bad row imports nothing). */
  skipInvalid?: boolean;
  /** Check every row, write nothing. */
  dryRun?: boolean;
}

export interface ImportResult {
  /** Users written (0 when a row was bad and `skipInvalid` is off, or on a dry run). */
  imported: number;
  /** Rows that checked out. */
  valid: number;
  problems: ImportProblem[];
  /** Credentials stored (or that would be), by method id. */
  credentials: Record<string, number>;
}

export interface ImportDeps {
  /** Where the users go (`CliServer.userImport`): the core's tables, in one transaction. */
  users: UserImportStore;
  /** The loaded methods, by id (each row's `credentials.<ID>` goes to that method's `enrollment.import`). */
  method: (id: string) => AuthMethod | undefined;
  logger: CliServer['logger'];
}

/** A checked row: the user to write, and the line it came from. */
interface Row extends ImportedUser {
  line: number;
  credentials: ImportedUser['credentials'][number][];
}

const FIELDS = new Set([
  'username',
  'email',
  'phone',
  'email_verified',
  'phone_verified',
  'disabled',
  'profile',
  'credentials',
]);

class RowError extends Error {}

/**
 * `gatehouse users import`: users from a JSON-lines file (docs/migration.md), with their
 * credentials as each method's `enrollment.import` makes them. Every row is checked first
 * (fields, duplicates in the file and in the database, the methods' verdicts), then the users
 * are written in one transaction: all of them or, on any failure, none.
 */
export async function importUsers(text: string, deps: ImportDeps, options: ImportOptions = {}): Promise<ImportResult> {
  const problems: ImportProblem[] = [];
  const rows: Row[] = [];
  // Lower-cased identifier -> the line that has it: one namespace, as UserService.create keeps.
  const seen = new Map<string, number>();
  // A byte order mark some editors write is no part of the first row; \r\n endings are trimmed below.
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const source = lines[i]!.trim();
    if (source === '') continue;
    try {
      const row = await checkRow(source, i + 1, deps);
      for (const value of identifiers(row)) {
        const first = seen.get(value);
        if (first !== undefined) throw new RowError(`"${value}" is already used on line ${first}`);
      }
      for (const value of identifiers(row)) seen.set(value, row.line);
      rows.push(row);
    } catch (err) {
      if (!(err instanceof RowError)) throw err;
      problems.push({ line: i + 1, message: err.message });
    }
  }
  // Already taken in the database: those rows are bad too.
  const taken = await deps.users.taken([...seen.keys()]);
  const good = rows.filter((row) => {
    const clash = identifiers(row).find((value) => taken.has(value));
    if (clash) problems.push({ line: row.line, message: `"${clash}" is already taken by a user in the database` });
    return !clash;
  });
  problems.sort((a, b) => a.line - b.line);
  const credentials: Record<string, number> = {};
  for (const row of good) for (const c of row.credentials) credentials[c.method] = (credentials[c.method] ?? 0) + 1;
  const result = { imported: 0, valid: good.length, problems, credentials };
  if (options.dryRun || good.length === 0 || (problems.length > 0 && !options.skipInvalid)) return result;
  // One transaction: a user made meanwhile that took an identifier rolls all of them back.
  await deps.users.write(good);
  return { ...result, imported: good.length };
}

/** The row's identifiers, lower-cased, each once (a username may be the user's own email). */
function identifiers(row: Row): string[] {
  const values = [row.username, row.email, row.phone].filter((v): v is string => v !== null);
  return [...new Set(values.map((v) => v.toLowerCase()))];
}

async function checkRow(source: string, line: number, deps: ImportDeps): Promise<Row> {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (err) {
    // Not V8's message: it quotes the line, which may hold a hash or a seed.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new RowError(`not valid JSON${at === undefined ? '' : ` (at character ${Number(at) + 1})`}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RowError('not a JSON object');
  const input = value as Record<string, unknown>;
  const unknown = Object.keys(input).filter((key) => !FIELDS.has(key));
  if (unknown.length) throw new RowError(`unknown field ${unknown.map((k) => `"${k}"`).join(', ')}`);
  const username = typeof input.username === 'string' ? input.username.trim() : '';
  if (!USERNAME.test(username)) throw new RowError('username must be 1-255 letters, digits or ._@+-');
  const email = optionalString(input, 'email')?.toLowerCase() ?? null;
  if (email !== null && !EMAIL.test(email)) throw new RowError('email must be an email address');
  const phone = optionalString(input, 'phone');
  if (phone !== null && !E164.test(phone)) throw new RowError('phone must be an E.164 number such as +15551234567');
  const emailVerified = flag(input, 'email_verified');
  const phoneVerified = flag(input, 'phone_verified');
  if (emailVerified && !email) throw new RowError('email_verified without an email');
  if (phoneVerified && !phone) throw new RowError('phone_verified without a phone');
  let profile: JsonObject | null = null;
  if (input.profile !== undefined && input.profile !== null) {
    if (typeof input.profile !== 'object' || Array.isArray(input.profile))
      throw new RowError('profile must be an object');
    const parsed = deps.users.checkProfile(input.profile as Record<string, unknown>);
    if (!parsed.ok) throw new RowError(`profile.${parsed.field} ${parsed.message}`);
    profile = parsed.profile;
  }
  const row: Row = {
    line,
    username,
    email,
    phone,
    emailVerified,
    phoneVerified,
    disabled: flag(input, 'disabled'),
    profile,
    credentials: [],
  };
  const given = input.credentials ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new RowError('credentials must be an object of method id -> credential');
  }
  for (const [methodId, credential] of Object.entries(given)) {
    const method = deps.method(methodId);
    if (!method) throw new RowError(`credentials.${methodId}: no method ${methodId} is loaded by this config`);
    const hook = method.enrollment?.import;
    if (!hook) throw new RowError(`credentials.${methodId}: the method ${methodId} cannot import credentials`);
    const outcome = await hook.call(method.enrollment, credential, {
      user: { username, email, phone },
      logger: deps.logger,
    });
    if (!outcome.ok) throw new RowError(`credentials.${methodId}: ${outcome.message}`);
    for (const c of outcome.credentials) row.credentials.push({ method: methodId, credential: c });
  }
  return row;
}

function optionalString(input: Record<string, unknown>, field: string): string | null {
  const value = input[field];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new RowError(`${field} must be a string`);
  return value.trim();
}

function flag(input: Record<string, unknown>, field: string): boolean {
  const value = input[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new RowError(`${field} must be true or false`);
  return value;
}
