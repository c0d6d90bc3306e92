import { JobQueue } from '../queue/job-queue.js';

// The notifications' queue of notification ids (a JobQueue of its own, beside others').
export abstract class NotificationQueue extends JobQueue {}

// Its name on Redis (BullMQ), under the deployment's prefix.
export const NOTIFICATION_QUEUE = 'notifications';
