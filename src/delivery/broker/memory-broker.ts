import { randomUUID } from 'node:crypto';
import { Broker, TopicHandlers, type BrokerHandler, type BrokerMessage, type ConsumerHandler } from './broker.js';

interface Group {
  members: ConsumerHandler[];
  // Round robin over the members.
  next: number;
}

// One process, no infrastructure: messages go straight to this process's handlers, after the
// publisher's call returns (as they would through a real broker). A consumer group hands each
// message to one of its members in turn.
export class MemoryBroker extends Broker {
  private readonly handlers = new TopicHandlers();
  // Topic → group name → members.
  private readonly groups = new Map<string, Map<string, Group>>();
  private readonly inFlight = new Map<ConsumerHandler, Set<Promise<void>>>();

  constructor(private readonly onError: (error: unknown) => void = () => undefined) {
    super();
  }

  async publish(topic: string, data: Record<string, unknown>, id?: string): Promise<void> {
    const groups = this.groups.get(topic);
    if (!this.handlers.has(topic) && !groups) return;
    const message = { topic, data, publishedAt: Date.now(), id: id ?? randomUUID() };
    queueMicrotask(() => {
      this.handlers.dispatch(message, this.onError);
      for (const group of groups?.values() ?? []) this.hand(group, message);
    });
  }

  async subscribe(topic: string, handler: BrokerHandler): Promise<() => void> {
    this.handlers.add(topic, handler);
    return () => void this.handlers.remove(topic, handler);
  }

  async consume(topic: string, groupName: string, handler: ConsumerHandler): Promise<() => Promise<void>> {
    let groups = this.groups.get(topic);
    if (!groups) this.groups.set(topic, (groups = new Map()));
    let group = groups.get(groupName);
    if (!group) groups.set(groupName, (group = { members: [], next: 0 }));
    // The same function twice is two members.
    const member: ConsumerHandler = (m) => handler(m);
    group.members.push(member);
    this.inFlight.set(member, new Set());
    return async () => {
      const i = group.members.indexOf(member);
      if (i < 0) return;
      group.members.splice(i, 1);
      if (!group.members.length) groups.delete(groupName);
      if (!groups.size) this.groups.delete(topic);
      await Promise.all(this.inFlight.get(member) ?? []);
      this.inFlight.delete(member);
    };
  }

  activeTopics(): string[] {
    return this.handlers.topics();
  }

  async close(): Promise<void> {
    await Promise.all([...this.inFlight.values()].flatMap((set) => [...set]));
  }

  private hand(group: Group, message: BrokerMessage): void {
    if (!group.members.length) return;
    const member = group.members[group.next++ % group.members.length];
    const running = (async () => {
      try {
        await member(message);
      } catch (error) {
        this.onError(error);
      }
    })();
    const set = this.inFlight.get(member);
    set?.add(running);
    void running.finally(() => set?.delete(running));
  }
}
