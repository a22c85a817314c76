import { z } from 'zod';
import type { ZodOpenApiOperationObject } from 'zod-openapi';

import { NOTIFY_ERRORS, notificationResult } from '../notify/answers.ts';
import { notificationRequest, notifyHeaders } from '../notify/read-request.ts';
import { errorResponses } from './responses.ts';

/** POST /api/notify (SPEC "Send a notification"), from the schemas its steps validate with and answer. */
export const notifyOperation: ZodOpenApiOperationObject = {
  operationId: 'notify',
  summary: 'Write to a person who signed in to this site',
  description: 'Stores the message in the person\'s inbox on the service and, where their settings say so, queues a letter, '
    + 'unless the person muted the site or turned the category off. Only a person who signed in to this site and did not '
    + 'block it or lose access to it can be written to. Rate limited per site and per (site, person).',
  security: [{ clientSecretBasic: [] }],
  requestParams: { header: notifyHeaders },
  requestBody: { required: true, content: { 'application/json': { schema: notificationRequest } } },
  responses: {
    202: {
      description: 'Accepted: the inbox entry is stored and, when `email` is true, the letter durably queued. A skipped result is no error.',
      content: { 'application/json': { schema: notificationResult } },
    },
    ...errorResponses(NOTIFY_ERRORS, {
      invalid_client: {
        'WWW-Authenticate': z.string().regex(/^Basic /).meta({ description: 'The scheme to authenticate with: HTTP Basic (RFC 7617).', example: 'Basic realm="notify", charset="UTF-8"' }),
      },
    }),
  },
};
