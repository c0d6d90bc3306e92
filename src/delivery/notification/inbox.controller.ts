import { Controller, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { ApiResult } from '../../kernel/api-result.js';
import { Envelope, type Enveloped } from '../../kernel/envelope.js';
import { pageRequest, paging, PageQuery } from '../../kernel/paging.js';
import { Authenticated, USER_OR_API_KEY } from '../../kernel/policy.js';
import { Ctx, type RequestContext } from '../../kernel/request-context.js';
import { AppConfig } from '../../platform/config/app-config.js';
import type { NotificationEntity } from './notification.entity.js';
import { NotificationService } from './notification.service.js';
import { PagingSection } from '../../kernel/paging.settings.js';

class NotificationIdParam {
  @IsUUID()
  id: string;
}

export class InboxItemResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() template: string;
  @ApiProperty({ type: 'string', nullable: true }) subject: string | null;
  @ApiProperty() body: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) readAt: string | null;
  @ApiProperty() isRead: boolean;
}

function toInboxItem(n: NotificationEntity) {
  return {
    id: n.id,
    template: n.template,
    subject: n.content?.subject ?? null,
    body: n.content?.body ?? '',
    createdAt: n.createdAt,
    readAt: n.readAt,
    isRead: n.readAt !== null,
  };
}

// The in-app inbox: the caller's own notifications in the targeted store.
@ApiTags('notifications')
@Controller('notifications')
export class InboxController {
  constructor(
    private readonly notifications: NotificationService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @Envelope({ dataName: 'notifications', action: 'list' })
  @ApiOperation({ summary: 'Your in-app notifications, newest first.' })
  @ApiResult([InboxItemResponse])
  list(@Ctx() ctx: RequestContext, @Query() query: PageQuery) {
    return this.page(ctx, query, false);
  }

  @Get('unread')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @Envelope({ dataName: 'notifications', action: 'list' })
  @ApiOperation({ summary: 'Your unread in-app notifications, newest first.' })
  @ApiResult([InboxItemResponse])
  unread(@Ctx() ctx: RequestContext, @Query() query: PageQuery) {
    return this.page(ctx, query, true);
  }

  @Post(':id/read')
  @Authenticated({ principals: USER_OR_API_KEY, permission: null })
  @HttpCode(HttpStatus.OK)
  @Envelope({ dataName: 'notification', action: 'update' })
  @ApiOperation({ summary: 'Mark one of your notifications read (again is fine).' })
  @ApiResult(InboxItemResponse)
  async read(@Ctx() ctx: RequestContext, @Param() params: NotificationIdParam): Promise<Enveloped<unknown>> {
    const { storeId, userId } = ctx.session!;
    return { data: toInboxItem(await this.notifications.markRead(storeId, userId, params.id)) };
  }

  private async page(ctx: RequestContext, query: PageQuery, unreadOnly: boolean): Promise<Enveloped<unknown[]>> {
    const { storeId, userId } = ctx.session!;
    const page = pageRequest(query, this.config.section(PagingSection).paging);
    const [rows, total] = await this.notifications.inbox(storeId, userId, page, unreadOnly);
    return { data: rows.map(toInboxItem), paging: paging(page, total) };
  }
}
