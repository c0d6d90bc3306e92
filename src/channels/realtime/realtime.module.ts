import { Module } from '@nestjs/common';
import { BrokerModule } from '../../delivery/broker/broker.module.js';
import { AppConfig } from '../../platform/config/app-config.js';
import { BootChecks } from '../../platform/config/boot-checks.js';
import { StoreModule } from '../../identity/store/store.module.js';
import { RealtimeAccessService } from './realtime-access.service.js';
import { RealtimeController } from './realtime.controller.js';
import { RealtimeForwarder } from './realtime-forwarder.js';
import { RealtimeChannelService } from './realtime.service.js';

const channelProvider = {
  provide: RealtimeChannelService,
  inject: [AppConfig, BootChecks],
  useFactory: (config: AppConfig, checks: BootChecks): Promise<RealtimeChannelService> => RealtimeChannelService.create(config, checks),
};

// The outbound, Pusher-compatible realtime channel: the provider client with the SPEC's limits,
// the client authorization routes, the webhook, and the forward rules. Off (routes answer 404
// RealtimeChannelDisabled) while `realtimeChannel` is not set.
@Module({
  imports: [BrokerModule, StoreModule],
  controllers: [RealtimeController],
  providers: [channelProvider, RealtimeAccessService, RealtimeForwarder],
  exports: [RealtimeChannelService],
})
export class RealtimeModule {}
