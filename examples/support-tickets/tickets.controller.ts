import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { IsString, IsUUID, Length } from 'class-validator';
import { ADMIN_ROLES, Authenticated, auditContext, Ctx, Envelope, PageQuery, paging, USER_ONLY, USER_OR_API_KEY, type ContextRequest, type Enveloped, type RequestContext } from 'svc-auth/extension';
import type { TicketEntity } from './ticket.entity.js';
import { TICKET_PERMISSIONS } from './tickets.catalogue.js';
import { TicketsService } from './tickets.service.js';

class OpenTicketInput {
  @IsString()
  @Length(1, 200)
  subject: string;
}

class TicketIdParam {
  @IsUUID()
  id: string;
}

const answer = (t: TicketEntity) => ({ id: t.id, ownerId: t.ownerId, subject: t.subject, status: t.status, createdAt: t.createdAt, closedAt: t.closedAt });

// The same guard as the service's routes: the targeted store, the caller's login or key, the
// second-factor gate, roles and permissions. Every route declares its policy.
@ApiTags('support tickets')
@Controller('tickets-api/v1')
export class TicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Post('tickets')
  @Authenticated({ principals: USER_ONLY, permission: null })
  @HttpCode(HttpStatus.CREATED)
  @Envelope({ dataName: 'ticket', action: 'create' })
  @ApiOperation({ summary: 'Open a support ticket of your own in your store.' })
  async open(@Req() req: ContextRequest, @Body() input: OpenTicketInput): Promise<Enveloped<unknown>> {
    const session = req.ctx.session!;
    const ticket = await this.tickets.open(req.ctx.store!.id, session.userId, input.subject, session, auditContext(req));
    return { data: answer(ticket) };
  }

  @Get('tickets')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @Envelope({ dataName: 'tickets', action: 'list' })
  @ApiOperation({ summary: 'Your tickets, newest first, paged.' })
  async mine(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const page = this.tickets.page(query);
    const [rows, total] = await this.tickets.list(ctx.store!.id, ctx.session!.userId, page);
    return { data: rows.map(answer), paging: paging(page, total) };
  }

  @Get('store-tickets')
  @Authenticated({ principals: USER_OR_API_KEY, roles: ADMIN_ROLES, permission: TICKET_PERMISSIONS.read })
  @Envelope({ dataName: 'tickets', action: 'list' })
  @ApiOperation({ summary: "Every ticket of the store (administrators, or the `tickets.read` permission), newest first, paged." })
  async all(@Ctx() ctx: RequestContext, @Query() query: PageQuery): Promise<Enveloped<unknown[]>> {
    const page = this.tickets.page(query);
    const [rows, total] = await this.tickets.list(ctx.store!.id, null, page);
    return { data: rows.map(answer), paging: paging(page, total) };
  }

  @Post('tickets/:id/close')
  @Authenticated({ principals: USER_ONLY, roles: ADMIN_ROLES, permission: TICKET_PERMISSIONS.close })
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'ticket', action: 'update' })
  @ApiOperation({ summary: 'Close a ticket of the store (administrators, or the `tickets.close` permission); its owner gets an in-app notification.' })
  async close(@Req() req: ContextRequest, @Param() params: TicketIdParam): Promise<Enveloped<unknown>> {
    const ticket = await this.tickets.close(req.ctx.store!.id, params.id, req.ctx.session!, auditContext(req));
    return { data: answer(ticket) };
  }
}
