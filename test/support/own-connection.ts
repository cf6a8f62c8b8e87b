/**
 * Requests on a connection of their own (`agent: false`): in a cluster the primary hands each new
 * connection to the next worker, so consecutive requests visit every worker.
 */
import http from 'node:http';

/** POSTs a form on a new connection; resolves with the status and the body's text. */
export function postOnOwnConnection(
  port: number,
  urlPath: string,
  form: Record<string, string>,
  authorization: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'POST',
        agent: false,
        headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end(new URLSearchParams(form).toString());
  });
}

/**
 * Waits until a server started by the CLI answers `/health/ready` on every worker: twice as many
 * fresh connections in a row as it has workers get 200. Throws with `stderr()` after 30 s.
 */
export async function everyWorkerReady(port: number, workers: number, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (let ok = 0; ok < 2 * workers;) {
    if (Date.now() > deadline) throw new Error(`the server did not start: ${stderr()}`);
    const status = await new Promise<number>((resolve) =>
      http
        .get({ host: '127.0.0.1', port, path: '/health/ready', agent: false }, (r) => resolve(r.resume().statusCode!))
        .on('error', () => resolve(0)),
    );
    ok = status === 200 ? ok + 1 : 0;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
