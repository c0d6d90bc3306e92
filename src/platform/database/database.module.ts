import { Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { DatabaseNotifications } from './database-notifications.js';
import { DatabasePool } from './database-pool.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './migrate.js';
import { Outbox } from './outbox.js';
import { Transactions } from './transactions.js';

@Module({})
export class DatabaseModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(DatabaseNotifications) private readonly notifications: DatabaseNotifications) {}

  // `url` is PostgreSQL's (DATABASE_URL) or the embedded server's, decided in createApp;
  // `entities` are the features' tables.
  static forRoot(url: string, entities: DataSourceOptions['entities'], extraMigrations: readonly Function[] = []): DynamicModule {
    const notifications = new DatabaseNotifications(url);
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(url, entities, notifications.clientClass, undefined, extraMigrations),
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            await runMigrations(dataSource);
            return dataSource;
          },
        }),
      ],
      providers: [{ provide: DatabaseNotifications, useValue: notifications }, Transactions, DatabasePool, Outbox],
      exports: [DatabaseNotifications, Transactions, DatabasePool, Outbox],
    };
  }

  onApplicationBootstrap(): void {
    this.notifications.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.notifications.close();
  }
}
