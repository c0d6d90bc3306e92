// Port: the message broker the event channel reads from and the service publishes to. Two
// adapters behind it: in-process (embedded mode) and Redis Streams (REDIS_URL). Two ways to read:
//   subscribe  fan-out: every replica sees every message of the topics its own subscribers need;
//   consume    work queue: each message goes to one consumer of a named group, whatever the
//              number of replicas (notification event rules act once per event).

export interface BrokerMessage {
  topic: string;
  data: Record<string, unknown>;
  // Epoch milliseconds at publish: delivery latency is measured from here.
  publishedAt: number;
  // The message's id, beside its data: a domain event's own (the same on each delivery of the
  // event, for a consumer to tell a repeat), otherwise one of its own.
  id?: string;
}

export type BrokerHandler = (message: BrokerMessage) => void;

// A group member's handler: the message counts as handled when it settles. A rejection is
// reported and the message is not offered again (retrying is the job of what the handler starts).
export type ConsumerHandler = (message: BrokerMessage) => Promise<void> | void;

export abstract class Broker {
  // `id`: the message's (BrokerMessage.id); one is made when none is given.
  abstract publish(topic: string, data: Record<string, unknown>, id?: string): Promise<void>;

  // Starts this replica's consumer of `topic` on its first handler; the returned function
  // removes the handler and stops the consumer with the last one. Resolves once the consumer is
  // positioned: every message published after that is delivered (nothing older is).
  abstract subscribe(topic: string, handler: BrokerHandler): Promise<() => void>;

  // Joins `group` on `topic`: each message published once the returned promise resolves goes to
  // one handler of the group, across every broker on the bus. A message a member took and never
  // finished (its process died) goes to another member after a while. The returned function
  // leaves the group once the message in hand is handled.
  abstract consume(topic: string, group: string, handler: ConsumerHandler): Promise<() => Promise<void>>;

  // Topics this replica's fan-out subscribers are consuming now.
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
