import { randomUUID } from 'node:crypto';
import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiFailures } from '../../kernel/api-result.js';
import type { Response } from 'express';
import { AppError, errorBody } from '../../kernel/errors.js';
import { Public } from '../../kernel/policy.js';
import type { ContextRequest } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { channelError } from './event-errors.js';
import type { EventClient, EventTransport } from './event-hub.js';
import { EventsService } from './events.service.js';
import { BrokerSection } from '../../delivery/broker/broker.settings.js';

// This route, as a pending second factor's message names it (`errMsg_getEventsByNameStreamRequiresEmail2FA`).
const STREAM_ROUTE = { method: 'GET', path: '/events/:name/stream' };

interface SseClient extends EventClient {
  res: Response;
  // Events written while the socket's buffer was over its mark, since it last drained.
  pending: number;
}

// SSE: GET /events/{subscriptionName}/stream?topics=a,b. A plain Express response rather than
// Nest's @Sse (an Observable): each write's backpressure is seen, so a slow reader is dropped
// after a bounded buffer, and one frame is encoded once for every stream that gets it.
// The route is public because anonymous clients may hold public topics; the credential is
// checked by the event channel, per topic, with the same rules as Socket.IO.
@ApiTags('events')
@Controller('events')
export class EventsController implements EventTransport {
  private readonly bufferLimit: number;
  private readonly heartbeatMs: number;

  constructor(
    private readonly events: EventsService,
    config: AppConfig,
  ) {
    const channel = config.section(BrokerSection).eventChannel;
    this.bufferLimit = channel.clientBufferLimit;
    this.heartbeatMs = channel.heartbeatSeconds * 1000;
  }

  @Get(':name/stream')
  @Public()
  @ApiOperation({ summary: 'Server-Sent Events stream of an event subscription: `subscribed`, then `event` messages.' })
  @ApiQuery({ name: 'topics', required: true, description: 'Comma-separated topic names of the subscription.', schema: { type: 'string' } })
  @ApiQuery({ name: 'access_token', required: false, description: 'The access token or API key, for clients that cannot send headers (EventSource); else `Authorization: Bearer`. Public topics need none.', schema: { type: 'string' } })
  @ApiQuery({ name: '_store', required: false, description: 'The store codename, for clients that cannot send headers.', schema: { type: 'string' } })
  @ApiOkResponse({
    description: 'An event stream: `event: subscribed` (allowed topics and rejected ones), then `event: event` frames and heartbeat comments; `event: error` (`{ message, errCode, detail }`, `message` the message code) before it ends.',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiFailures(401)
  async stream(@Param('name') name: string, @Req() req: ContextRequest, @Res() res: Response): Promise<void> {
    // Everything that can be refused is refused before the stream starts, as an HTTP error.
    this.events.assertOrigin(req.headers.origin);
    const subscription = this.events.subscription(name, 'sse');
    const topics = this.events.topicList(req.query.topics, 'text');
    const credentials = { headers: req.headers, query: req.query as Record<string, unknown>, codename: req.ctx.storeTargeted ? req.ctx.store!.codename : undefined, route: STREAM_ROUTE };
    const { subscriber } = await this.events.authenticate(credentials);

    const client: SseClient = {
      id: randomUUID(),
      res,
      pending: 0,
      subscription,
      transport: this,
      credentials,
      subscriber,
      topics: new Set(),
      close: (error) => {
        this.events.hub.disconnect(client);
        if (res.writableEnded) return;
        // Ended before it started (a shutdown that began meanwhile): an HTTP error, as refusals are.
        if (!res.headersSent) return void res.status(error.status).json(errorBody(error, req.ctx.requestId));
        res.end(frame('error', JSON.stringify(channelError(error))));
      },
    };
    this.events.hub.connect(client);
    const heartbeat = setInterval(() => this.write(client, ': heartbeat\n\n'), this.heartbeatMs);
    res.on('close', () => {
      clearInterval(heartbeat);
      this.events.hub.disconnect(client);
    });
    res.on('drain', () => (client.pending = 0));

    const result = await this.events.subscribe(client, topics);
    // Gone, or ended already (a shutdown that began meanwhile).
    if (res.destroyed || res.writableEnded) return;
    res.status(200);
    res.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    // CORS headers: set by the HTTP middleware, as on every route.
    res.flushHeaders();
    this.write(client, frame('subscribed', JSON.stringify(result)));
  }

  deliver(topicName: string, payload: Record<string, unknown>, clients: EventClient[]): void {
    const text = frame('event', JSON.stringify({ topic: topicName, name: topicName, data: payload }));
    for (const client of clients) this.write(client as SseClient, text);
  }

  private write(client: SseClient, text: string): void {
    const { res } = client;
    if (res.writableEnded || res.destroyed) return;
    if (client.pending >= this.bufferLimit) {
      client.close(new AppError('EventReaderTooSlow', 'you are reading events too slowly; connect again'));
      // Its unread buffer is not kept for long, whether or not it reads the `error`.
      setTimeout(() => res.destroy(), 2000).unref();
      return;
    }
    if (!res.write(text)) client.pending++;
  }
}

function frame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
