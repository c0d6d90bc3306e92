import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const port = Number(process.env.PORT ?? 4000);
const app = await NestFactory.create(AppModule);
await app.listen(port, '127.0.0.1');
console.log(`backend example on http://127.0.0.1:${port} (the service: ${process.env.SVC_BASE_URL ?? 'http://127.0.0.1:3000'})`);
