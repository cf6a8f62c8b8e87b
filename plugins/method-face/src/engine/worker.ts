/**
 * Worker thread entry: loads the model once, then decodes and describes the images the
 * FaceEngine sends, one at a time. An error while loading is thrown, which ends the worker (the
 * engine reports it).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { decodeImage } from './decode.js';
import { loadFaceModel } from './model.js';
import type { DescribeRequest, ImageLimits, WorkerMessage } from './types.js';

const port = parentPort;
if (!port) throw new Error('the face worker must run in a worker thread');
const limits = workerData as ImageLimits;
const model = await loadFaceModel();
const post = (message: WorkerMessage) => port.postMessage(message);

port.on('message', async ({ id, image }: DescribeRequest) => {
  try {
    const decoded = decodeImage(image, limits);
    post({ type: 'result', id, result: decoded.ok ? await model.describe(decoded.image) : decoded });
  } catch (err) {
    post({ type: 'failed', id, message: err instanceof Error ? err.message : String(err) });
  }
});
post({ type: 'ready' });
