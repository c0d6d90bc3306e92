// Port: the message broker the event channel reads from and the service publishes to. Two
// adapters behind it: in-process (embedded mode) and Redis Streams (REDIS_URL). Every replica
// sees every message of the topics its own subscribers need (fan-out, not a work queue).

export interface BrokerMessage {
  topic: string;
  data: Record<string, unknown>;
  // Epoch milliseconds at publish: delivery latency is measured from here.
  publishedAt: number;
}

export type BrokerHandler = (message: BrokerMessage) => void;

export abstract class Broker {
  abstract publish(topic: string, data: Record<string, unknown>): Promise<void>;

  // Starts this replica's consumer of `topic` on its first handler; the returned function
  // removes the handler and stops the consumer with the last one. Resolves once the consumer is
  // positioned: every message published after that is delivered (nothing older is).
  abstract subscribe(topic: string, handler: BrokerHandler): Promise<() => void>;

  // Topics this replica is consuming now.
  abstract activeTopics(): string[];

  abstract close(): Promise<void>;
}

// Topic → its handlers, and the bookkeeping of "first handler starts, last one stops" that both
// adapters share.
export class TopicHandlers {
  private readonly byTopic = new Map<string, Set<BrokerHandler>>();

  // True when this is the topic's first handler.
  add(topic: string, handler: BrokerHandler): boolean {
    let set = this.byTopic.get(topic);
    const first = !set;
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(handler);
    return first;
  }

  // True when the topic has no handler left.
  remove(topic: string, handler: BrokerHandler): boolean {
    const set = this.byTopic.get(topic);
    if (!set?.delete(handler)) return false;
    if (set.size) return false;
    this.byTopic.delete(topic);
    return true;
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }

  has(topic: string): boolean {
    return this.byTopic.has(topic);
  }

  // One failing handler does not keep the message from the others.
  dispatch(message: BrokerMessage, onError: (error: unknown) => void): void {
    for (const handler of [...(this.byTopic.get(message.topic) ?? [])]) {
      try {
        handler(message);
      } catch (error) {
        onError(error);
      }
    }
  }
}
