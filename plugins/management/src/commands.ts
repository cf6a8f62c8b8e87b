import { ApiError, type ClientAdmin, type CliCommand, type CliContext, type UserAccounts } from '@gatehouse-auth/core';

/**
 * `gatehouse users create|list|profile` and `gatehouse apps list|create|update|rotate-secret|delete`
 * (decision 68): the operator's commands on the services this plugin provides, with the words,
 * options, output, exit codes and messages they had as the core's. The server is composed (not
 * served) for each, so apps are checked with the plugins' keys and running nodes hear of a change.
 */

/** Who the events of these commands name. */
const CLI_ACTOR = { via: 'cli', userId: 'cli', ip: null };

/** The users page of the list (the core's search answers at most 1000). */
const USERS_LISTED = 1000;

const accounts = async (cli: CliContext) => (await cli.server()).services.resolve<UserAccounts>('userAccounts');
const apps = async (cli: CliContext) => (await cli.server()).services.resolve<ClientAdmin>('clientAdmin');
const text = (cli: CliContext, option: string) => cli.values[option] as string | undefined;
const json = (cli: CliContext, answer: unknown) => cli.print(`${JSON.stringify(answer)}\n`);

const usersCreate: CliCommand = {
  name: 'users create',
  usage: '--username NAME [--email EMAIL] [--phone +E164]',
  description: 'a new active user, printed as JSON (event cli.user_created)',
  options: { username: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' } },
  async run(cli) {
    const username = text(cli, 'username');
    if (!username) {
      cli.warn('users create needs --username NAME (and optionally --email, --phone)');
      return 2;
    }
    const input = { username, email: text(cli, 'email'), phone: text(cli, 'phone') };
    json(cli, await (await accounts(cli)).createUser(CLI_ACTOR, input));
    return 0;
  },
};

const usersList: CliCommand = {
  name: 'users list',
  usage: '[--json]',
  description: 'the users (the first 1000), and the database and config they came from',
  options: { json: { type: 'boolean' } },
  async run(cli) {
    const list = await (await accounts(cli)).search('', USERS_LISTED);
    if (cli.values.json) {
      json(cli, list);
      return 0;
    }
    cli.table(
      ['id', 'username', 'email', 'phone', 'status'],
      list.map((u) => [u.id, u.username, u.email ?? '', u.phone ?? '', u.status]),
    );
    // The demo keeps a database of its own: say which one this was.
    const count = `${list.length} user${list.length === 1 ? '' : 's'}`;
    cli.print(`(${count} in ${(await cli.server()).databaseUrl}, config ${cli.configFile})\n`);
    return 0;
  },
};

const usersProfile: CliCommand = {
  name: 'users profile',
  usage: '--username NAME [--set CLAIM=VALUE ...] [--unset CLAIM ...]',
  description: "show or change a user's OIDC profile claims (name, given_name, locale, ...)",
  options: {
    username: { type: 'string' },
    set: { type: 'string', multiple: true },
    unset: { type: 'string', multiple: true },
  },
  async run(cli) {
    const username = text(cli, 'username');
    const server = await cli.server();
    const user = username ? await server.services.users.findByIdentifier(username) : null;
    if (!user) {
      cli.warn(`no user ${JSON.stringify(username ?? '')} (give --username)`);
      return 1;
    }
    const account = await accounts(cli);
    const patch = profilePatch((cli.values.set as string[]) ?? [], (cli.values.unset as string[]) ?? []);
    json(cli, Object.keys(patch).length ? await account.updateProfile(user, patch) : await account.profile(user.id));
    return 0;
  },
};

/** `--set name=Alice --set address={"country":"DE"} --unset nickname`: a JSON merge patch. */
function profilePatch(set: string[], unset: string[]): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const pair of set) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new ApiError(400, 'INVALID_FIELD', `--set ${pair}: expected CLAIM=VALUE`, { field: pair });
    const value = pair.slice(eq + 1);
    // An object (address) is given as JSON; everything else is a plain string.
    const name = pair.slice(0, eq);
    try {
      patch[name] = value.startsWith('{') ? JSON.parse(value) : value;
    } catch {
      throw new ApiError(400, 'INVALID_FIELD', `--set ${name}: not valid JSON`, { field: name });
    }
  }
  for (const name of unset) patch[name] = null;
  return patch;
}

/**
 * An `apps` command: its required options are checked before the server is composed (exit 2),
 * and what `act` answers is printed as JSON.
 */
function appsCommand(
  sub: string,
  spec: Pick<CliCommand, 'usage' | 'description' | 'options'> & { needs?: string[] },
  act: (apps: ClientAdmin, cli: CliContext) => Promise<unknown>,
): CliCommand {
  return {
    name: `apps ${sub}`,
    ...spec,
    async run(cli) {
      const missing = spec.needs?.find((option) => cli.values[option] === undefined);
      if (missing) {
        cli.warn(`apps ${sub} needs --${missing}`);
        return 2;
      }
      const answer = await act(await apps(cli), cli);
      if (answer !== undefined) json(cli, answer);
      return 0;
    },
  };
}

const clientId = { 'client-id': { type: 'string' } } as const;
const app = { app: { type: 'string' } } as const;

const appsCommands: CliCommand[] = [
  appsCommand(
    'list',
    {
      usage: '[--json]',
      description: "the apps: the config's (read-only) and those in the database",
      options: { json: { type: 'boolean' } },
    },
    async (admin, cli) => {
      const list = await admin.list();
      if (cli.values.json) return list;
      cli.table(
        ['client_id', 'source', 'auth', 'name'],
        list.map((a) => [a.client_id, a.source, a.token_endpoint_auth_method, a.name]),
      );
      return undefined;
    },
  ),
  appsCommand(
    'create',
    {
      usage: '--app JSON',
      description: 'store an app (a config-style apps[] entry); prints it with its secret, shown once',
      options: app,
      needs: ['app'],
    },
    (admin, cli) => admin.create(CLI_ACTOR, jsonObject(text(cli, 'app')!)),
  ),
  appsCommand(
    'update',
    {
      usage: '--client-id ID --app JSON',
      description: 'change a database app (a JSON merge patch: null removes a key); tokens stay',
      options: { ...clientId, ...app },
      needs: ['client-id', 'app'],
    },
    (admin, cli) => admin.patch(CLI_ACTOR, text(cli, 'client-id')!, jsonObject(text(cli, 'app')!)),
  ),
  appsCommand(
    'rotate-secret',
    {
      usage: '--client-id ID [--overlap SECONDS]',
      description: 'a new secret; the previous one works for SECONDS more (default 86400)',
      options: { ...clientId, overlap: { type: 'string' } },
      needs: ['client-id'],
    },
    (admin, cli) => {
      const overlap = text(cli, 'overlap');
      // A value that is no number is the service's to refuse (INVALID_FIELD), as the admin API's.
      const opts = overlap === undefined ? {} : { overlapSeconds: Number(overlap) };
      return admin.rotateSecret(CLI_ACTOR, text(cli, 'client-id')!, opts);
    },
  ),
  appsCommand(
    'delete',
    {
      usage: '--client-id ID',
      description: 'delete a database app and revoke its grants and tokens',
      options: clientId,
      needs: ['client-id'],
    },
    (admin, cli) => admin.delete(CLI_ACTOR, text(cli, 'client-id')!),
  ),
];

/** `--app '{"client_id": ...}'`: a JSON object, or one line saying it is not. */
function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ApiError(400, 'INVALID_APP', '--app: not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ApiError(400, 'INVALID_APP', '--app: must be a JSON object (an apps[] entry)');
  return parsed as Record<string, unknown>;
}

/** The commands, in the order `gatehouse help` lists them. */
export const managementCommands: readonly CliCommand[] = [usersCreate, usersList, usersProfile, ...appsCommands];
