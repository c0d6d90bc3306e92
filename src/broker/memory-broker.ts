import { Broker, TopicHandlers, type BrokerHandler } from './broker.js';

// One process, no infrastructure: messages go straight to this process's handlers, after the
// publisher's call returns (as they would through a real broker).
export class MemoryBroker extends Broker {
  private readonly handlers = new TopicHandlers();

  constructor(private readonly onError: (error: unknown) => void = () => undefined) {
    super();
  }

  async publish(topic: string, data: Record<string, unknown>): Promise<void> {
    if (!this.handlers.has(topic)) return;
    const message = { topic, data, publishedAt: Date.now() };
    queueMicrotask(() => this.handlers.dispatch(message, this.onError));
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => void> {
    this.handlers.add(topic, handler);
    return () => void this.handlers.remove(topic, handler);
  }

  activeTopics(): string[] {
    return this.handlers.topics();
  }

  async close(): Promise<void> {}
}
