/**
 * The `gatehouse-authenticator` command against the demo server, as the README's PUSH demo
 * runs it: bind from the link, list the request, approve it with the number the page shows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import {
  atSecondStage,
  bindingFor,
  call,
  initiate,
  startDemoServer,
  type DemoServer,
} from '../../../test/devices/support.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/gatehouse-authenticator.js');
const run = promisify(execFile);

describe('gatehouse-authenticator (the simulator CLI)', function () {
  let server: DemoServer;
  let dir: string;
  let state: string;
  const cli = (...args: string[]) => run(process.execPath, [BIN, ...args, '--state', state]);

  before(async function () {
    server = await startDemoServer();
    dir = mkdtempSync(path.join(tmpdir(), 'gh-authenticator-'));
    state = path.join(dir, 'phone.json');
  });
  after(async function () {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds from the link, lists the request and approves it with the number; the state file is private', async function () {
    const { binding_url } = await bindingFor(server, 'PUSH');
    const bound = await cli('bind', binding_url, '--name', 'CLI phone');
    expect(bound.stdout).to.include(`to user ${server.alice.id}`);
    expect(statSync(state).mode & 0o077).to.equal(0);

    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const listed = await cli('pushes');
    const line = listed.stdout.trim().split('\n')[0]!;
    expect(line).to.include('PUSH').and.include('INITIATED').and.include('Gatehouse demo app');
    // When it was asked for, relative and absolute (the server's time), and how long it still lasts.
    expect(line).to.match(
      / {2}requested (now|\d+ seconds? ago) \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\), expires in (9|10) minutes$/,
    );
    const pushId = line.split(/\s+/)[0]!;

    const approved = await cli('approve', pushId, '--number', String(started.push_selected_number));
    expect(approved.stdout).to.include(`signed in: ${server.alice.id}`);
    const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('AUTHENTICATED');
    expect((await cli('pushes')).stdout.trim()).to.equal('no pending requests');
  });

  it('approve after ack goes on from there (it used to fail with 409 PUSH_STATE)', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const pushId = (await cli('pushes')).stdout.trim().split(/\s+/)[0]!;
    expect((await cli('ack', pushId)).stdout).to.include('Gatehouse demo app');
    expect((await cli('pushes')).stdout).to.include('PUSH_ACKNOWLEDGED');
    const approved = await cli('approve', pushId, '--number', String(started.push_selected_number));
    expect(approved.stdout).to.include(`signed in: ${server.alice.id}`);
  });

  it("a wrong number fails with the server's code and a non-zero exit", async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const pushId = (await cli('pushes')).stdout.trim().split(/\s+/)[0]!;
    const wrong = started.push_selected_number === 10 ? '11' : '10';
    const failed = await cli('approve', pushId, '--number', wrong).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).to.equal(1);
    expect(failed?.stderr).to.include('VERIFICATION_FAILED');
  });
});
