import { expect } from 'chai';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { DeliveryChannel } from '@gatehouse-auth/core';
import { registerWithFakes } from '@gatehouse-auth/testing';
import plugin, { DEFAULT_SUBJECT } from '../src/index.js';

interface Received {
  from: string | null;
  to: string[];
  secure: boolean;
  user: string | null;
  raw: string;
}

interface TestServer {
  port: number;
  received: Received[];
  connections: number;
  close(): Promise<void>;
}

const USER = 'mailer';
const PASS = 'correct horse battery staple';

/** A real SMTP server on 127.0.0.1 that keeps every message it accepted. */
async function startSmtpServer(extra: Partial<SMTPServerOptions> = {}): Promise<TestServer> {
  const received: Received[] = [];
  const state = { connections: 0 };
  const server = new SMTPServer({
    logger: false,
    closeTimeout: 50,
    // Plain connections by default; tests that want STARTTLS drop this.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    onConnect(_session, callback) {
      state.connections += 1;
      callback();
    },
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASS) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom;
        received.push({
          from: mailFrom ? mailFrom.address : null,
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : null,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
    ...extra,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    get connections() {
      return state.connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function channelFor(options: Record<string, unknown>): Promise<DeliveryChannel> {
  const registered = await registerWithFakes(plugin, options);
  expect(registered.channels).to.have.length(1);
  return registered.channels[0]!;
}

/** The header value of `name` in a raw message (first occurrence). */
function header(raw: string, name: string): string | undefined {
  const match = new RegExp(`^${name}: (.*)$`, 'mi').exec(raw);
  return match?.[1]?.trim();
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(Error);
    return err as Error;
  }
  expect.fail('expected the promise to reject');
}

describe('@gatehouse-auth/channel-smtp', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  describe('options', () => {
    it('applies the defaults', async () => {
      expect(plugin.options!.parse({ host: 'mail.example.com', from: 'no-reply@example.com' })).to.deep.equal({
        id: 'smtp',
        host: 'mail.example.com',
        port: 587,
        secure: false,
        require_tls: false,
        from: 'no-reply@example.com',
        tls_reject_unauthorized: true,
        timeout_ms: 10000,
      });
      const channel = await channelFor({ host: 'mail.example.com', from: 'Example <no-reply@example.com>' });
      expect(channel.id).to.equal('smtp');
      expect(channel.kinds).to.deep.equal(['email']);
    });

    it('refuses missing or invalid options', () => {
      const ok = { host: 'mail.example.com', from: 'no-reply@example.com' };
      const schema = plugin.options!;
      expect(schema.safeParse(ok).success).to.equal(true);
      expect(schema.safeParse({ from: ok.from }).success).to.equal(false);
      expect(schema.safeParse({ host: ok.host }).success).to.equal(false);
      expect(schema.safeParse({ ...ok, from: 'not an address' }).success).to.equal(false);
      expect(schema.safeParse({ ...ok, from: 'a@example.com, b@example.com' }).success).to.equal(false);
      expect(schema.safeParse({ ...ok, port: 70000 }).success).to.equal(false);
      expect(schema.safeParse({ ...ok, auth: { user: 'u' } }).success).to.equal(false);
      expect(schema.safeParse({ ...ok, tlsRejectUnauthorized: false }).success).to.equal(false);
    });
  });

  describe('send', () => {
    it('delivers an authenticated message with the recipient, subject and code', async () => {
      server = await startSmtpServer({ authOptional: false });
      const channel = await channelFor({
        host: '127.0.0.1',
        port: server.port,
        auth: { user: USER, pass: PASS },
        from: 'Gatehouse <no-reply@gatehouse.test>',
        timeout_ms: 2000,
      });
      await channel.send({
        kind: 'email',
        to: 'alice@example.test',
        subject: 'Sign-in code',
        text: 'Your code is 493817',
      });

      expect(server.received).to.have.length(1);
      const mail = server.received[0]!;
      expect(mail.user).to.equal(USER);
      expect(mail.from).to.equal('no-reply@gatehouse.test');
      expect(mail.to).to.deep.equal(['alice@example.test']);
      expect(header(mail.raw, 'Subject')).to.equal('Sign-in code');
      expect(header(mail.raw, 'To')).to.equal('alice@example.test');
      expect(header(mail.raw, 'From')).to.equal('Gatehouse <no-reply@gatehouse.test>');
      expect(mail.raw).to.contain('Your code is 493817');
    });

    it('uses the default subject and reuses one pooled connection', async () => {
      server = await startSmtpServer();
      const channel = await channelFor({ host: '127.0.0.1', port: server.port, from: 'no-reply@gatehouse.test' });
      await channel.send({ kind: 'email', to: 'bob@example.test', text: 'Code: 111111' });
      await channel.send({ kind: 'email', to: 'carol@example.test', text: 'Code: 222222' });

      expect(server.received.map((m) => m.to)).to.deep.equal([['bob@example.test'], ['carol@example.test']]);
      expect(server.received.map((m) => header(m.raw, 'Subject'))).to.deep.equal([DEFAULT_SUBJECT, DEFAULT_SUBJECT]);
      expect(server.received[1]!.raw).to.contain('Code: 222222');
      expect(server.connections).to.equal(1);
    });

    it('rejects on an authentication failure without leaking the password', async () => {
      server = await startSmtpServer({ authOptional: false });
      const wrong = 'not-the-password-9f2c';
      const channel = await channelFor({
        host: '127.0.0.1',
        port: server.port,
        auth: { user: USER, pass: wrong },
        from: 'no-reply@gatehouse.test',
      });
      const err = await rejection(channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 123456' }));
      expect(err.message).to.equal(
        'smtp channel "smtp" could not send: EAUTH Invalid login: 535 Invalid username or password',
      );
      expect(err.message).not.to.contain(wrong);
      expect(err.message).not.to.contain(Buffer.from(`\0${USER}\0${wrong}`).toString('base64'));
      expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.to.contain(wrong);
      expect(server.received).to.deep.equal([]);
    });

    it('masks the password when the server echoes it back', async () => {
      server = await startSmtpServer({
        authOptional: false,
        onAuth(auth, _session, callback) {
          callback(new Error(`Rejected ${auth.username}/${auth.password}`));
        },
      });
      const channel = await channelFor({
        host: '127.0.0.1',
        port: server.port,
        auth: { user: USER, pass: PASS },
        from: 'no-reply@gatehouse.test',
      });
      const err = await rejection(channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 123456' }));
      expect(err.message).to.equal(`smtp channel "smtp" could not send: EAUTH Invalid login: 535 Rejected ${USER}/***`);
    });

    it('rejects when the server refuses the recipient', async () => {
      server = await startSmtpServer({
        onRcptTo(address, _session, callback) {
          if (address.address === 'gone@example.test') {
            callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
          } else callback();
        },
      });
      const channel = await channelFor({ host: '127.0.0.1', port: server.port, from: 'no-reply@gatehouse.test' });
      const err = await rejection(channel.send({ kind: 'email', to: 'gone@example.test', text: 'Code: 123456' }));
      expect(err.message).to.equal(
        'smtp channel "smtp" could not send: EENVELOPE Can\'t send mail - all recipients were rejected: 550 Mailbox unavailable',
      );
      expect(server.received).to.deep.equal([]);

      // The same transport still works for an accepted recipient.
      await channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 654321' });
      expect(server.received.map((m) => m.to)).to.deep.equal([['alice@example.test']]);
    });

    it('rejects when the server refuses the message data', async () => {
      server = await startSmtpServer({
        onData(stream, _session, callback) {
          stream.resume();
          stream.on('end', () => callback(Object.assign(new Error('Message rejected as spam'), { responseCode: 554 })));
        },
      });
      const channel = await channelFor({ host: '127.0.0.1', port: server.port, from: 'no-reply@gatehouse.test' });
      const err = await rejection(channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 123456' }));
      expect(err.message).to.equal(
        'smtp channel "smtp" could not send: EMESSAGE Message failed: 554 Message rejected as spam',
      );
    });

    it('upgrades with STARTTLS, and checks the certificate unless told not to', async () => {
      server = await startSmtpServer({ disabledCommands: [] });
      const base = { host: '127.0.0.1', port: server.port, from: 'no-reply@gatehouse.test', timeout_ms: 2000 };

      // smtp-server's built-in certificate is self-signed, so verification must fail.
      const strict = await channelFor(base);
      const err = await rejection(strict.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 1' }));
      expect(err.message).to.match(/^smtp channel "smtp" could not send: ESOCKET /);
      expect(server.received).to.deep.equal([]);

      const lax = await channelFor({ ...base, tls_reject_unauthorized: false });
      await lax.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 777777' });
      expect(server.received).to.have.length(1);
      expect(server.received[0]!.secure).to.equal(true);
    });

    it('refuses to send in clear text when require_tls is set', async () => {
      server = await startSmtpServer();
      const channel = await channelFor({
        host: '127.0.0.1',
        port: server.port,
        from: 'no-reply@gatehouse.test',
        require_tls: true,
      });
      const err = await rejection(channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 123456' }));
      expect(err.message).to.match(
        /^smtp channel "smtp" could not send: ETLS Error upgrading connection with STARTTLS/,
      );
      expect(server.received).to.deep.equal([]);
    });

    it('rejects after timeout_ms when the server never greets', async () => {
      const sockets: Socket[] = [];
      const silent: TcpServer = createTcpServer((socket) => void sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const port = (silent.address() as AddressInfo).port;
        const channel = await channelFor({ host: '127.0.0.1', port, from: 'no-reply@gatehouse.test', timeout_ms: 200 });
        const started = Date.now();
        const err = await rejection(channel.send({ kind: 'email', to: 'alice@example.test', text: 'Code: 123456' }));
        expect(err.message).to.equal('smtp channel "smtp" could not send: ETIMEDOUT Timeout');
        expect(Date.now() - started).to.be.lessThan(2000);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('rejects other kinds and anything but one bare recipient, without connecting', async () => {
      server = await startSmtpServer();
      const channel = await channelFor({ host: '127.0.0.1', port: server.port, from: 'no-reply@gatehouse.test' });
      const sms = await rejection(channel.send({ kind: 'sms', to: '+15551230000', text: 'Code: 1' }));
      expect(sms.message).to.equal('smtp channel "smtp" sends email only, not sms');
      for (const to of [
        'a@example.test, b@example.test',
        'Eve <eve@example.test>',
        'a@example.test\r\nBcc: x@y.z',
        '',
      ]) {
        const err = await rejection(channel.send({ kind: 'email', to, text: 'Code: 1' }));
        expect(err.message, to).to.equal('smtp channel "smtp": the recipient is not one email address');
      }
      expect(server.connections).to.equal(0);
    });
  });

  describe('dependency check (/health/dependencies)', () => {
    const checkFor = async (options: Record<string, unknown>) => {
      const registered = await registerWithFakes(plugin, { id: 'mail', from: 'no-reply@gatehouse.test', ...options });
      return registered.dependencies.get('smtp:mail')!;
    };

    it('passes when the server greets and accepts the login, and sends nothing', async () => {
      const server = await startSmtpServer({ authOptional: false });
      try {
        const check = await checkFor({ host: '127.0.0.1', port: server.port, auth: { user: USER, pass: PASS } });
        await check();
        expect(server.connections).to.equal(1);
        expect(server.received).to.have.length(0);
      } finally {
        await server.close();
      }
    });

    it('fails, saying why, for a wrong password and for a server that is not there', async () => {
      const server = await startSmtpServer({ authOptional: false });
      const port = server.port;
      try {
        const wrong = await checkFor({ host: '127.0.0.1', port, auth: { user: USER, pass: 'wrong' } });
        const err = await wrong().then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message).to.match(/Invalid username or password/);
      } finally {
        await server.close();
      }
      const gone = await checkFor({ host: '127.0.0.1', port, timeout_ms: 2000 });
      const err = await gone().then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/ECONNREFUSED/);
    });
  });
});
