import type { UploadedFile } from '@gatehouse-auth/plugin-api';
import type { Request, RequestHandler } from 'express';
import multer from 'multer';
import type { IncomingMessage } from 'node:http';
import { bodyLimit } from '../http/parsers.js';
import { multipartError } from '../http/multipart-errors.js';
import { verificationError } from './errors.js';
import type { VerificationService } from './service.js';

/** Multipart only for methods that take files (FACE photo), in memory with the method's limits. */
export function multipartFor(verification: VerificationService): RequestHandler {
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) return next();
    // A route of no method (the setup API's list) takes no files: said as for a method without them.
    const id = req.params.method;
    if (typeof id !== 'string')
      return next(verificationError('INVALID_FIELD', 'this call does not take multipart bodies'));
    const method = verification.method(id);
    const files = method.files ?? [];
    if (!files.length) return next(verificationError('INVALID_FIELD', `${method.id} does not take multipart bodies`));
    const upload = multer({
      storage: multer.memoryStorage(),
      // A part of a type the method does not take is refused before it is read.
      fileFilter: (_req, file, accept) => {
        const allowed = files.find((f) => f.name === file.fieldname)?.mimeTypes ?? [];
        if (allowed.includes(file.mimetype)) accept(null, true);
        else
          accept(
            verificationError('INVALID_FIELD', `${file.fieldname} must be one of ${allowed.join(', ')}`, {
              fields: [file.fieldname],
            }),
          );
      },
      limits: {
        fileSize: Math.max(...files.map((f) => f.maxBytes)),
        files: files.length,
        fields: 50,
        fieldSize: 16_384,
      },
    }).fields(files.map((f) => ({ name: f.name, maxCount: 1 })));
    // Every file at its limit plus room for the text fields: more is refused from the header.
    const most = files.reduce((sum, f) => sum + f.maxBytes, 0) + 64 * 1024;
    bodyLimit(most)(req, res, (err?: unknown) =>
      err ? next(err) : upload(req, res, (failed?: unknown) => next(failed ? multipartError(failed) : undefined)),
    );
  };
}

export function uploadedFiles(req: IncomingMessage): UploadedFile[] {
  const files = ((req as Request).files ?? {}) as Record<string, Express.Multer.File[]>;
  return Object.values(files)
    .flat()
    .map((f) => ({ fieldName: f.fieldname, mimeType: f.mimetype, size: f.size, buffer: f.buffer }));
}
