import type { KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// What travels to a thread: the key itself only with its first request there.
interface Request {
  id: number;
  keyId: number;
  key?: KeyObject;
  data: string;
}

interface Answer {
  id: number;
  signature?: string;
  error?: string;
}

interface Call {
  key: KeyObject;
  data: string;
  resolve: (signature: string) => void;
  reject: (error: Error) => void;
}

// One thread, what it was sent and not answered yet, and its numbers for the keys it was sent.
interface Thread {
  worker: Worker;
  sent: Map<number, Call>;
  keyIds: WeakMap<KeyObject, number>;
}

// RS256 signatures on threads of their own (signing-worker.mjs). An RSA-2048 signature costs a
// fifth of a millisecond of CPU or more, the largest single cost of a login or a refresh; on the
// event loop it would hold every other request for as long. Not on libuv's pool: password hashes
// queue there by the dozen during a login burst, and a refresh would wait behind them.
//
// A thread signs one request after another, so a turn's requests wait for each other on one (four
// refreshes' signatures take about 0.8 ms), and a second thread halves that where a core has room
// (`threads`, capped at the machine's cores).
//
// The first thread starts at the first signature (a process that never signs does not pay its
// ~11 MB), the next only when a signature is asked while the others have some in hand. A thread
// that crashes fails the signatures it had in hand; the next ones get a new thread. The requests
// of one event-loop turn travel as one message per thread, and so do their answers.
export class SigningThread {
  private readonly threads: (Thread | undefined)[] = [];
  private readonly maxThreads: number;
  // Asked in this turn, sent at its end.
  private batch: Call[] = [];
  private nextId = 0;
  private nextKeyId = 0;
  private closed = false;

  constructor(threads = 1) {
    this.maxThreads = Math.max(1, Math.min(threads, availableParallelism()));
  }

  // `data`'s RSASSA-PKCS1-v1_5 SHA-256 signature under `key`, base64url (a JWS's third part).
  sign(data: string, key: KeyObject): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the signing thread is closed'));
    return new Promise<string>((resolve, reject) => {
      if (this.batch.length === 0) queueMicrotask(() => this.flush());
      this.batch.push({ key, data, resolve, reject });
    });
  }

  // Signatures not answered yet fail; later calls are refused.
  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0).filter((t) => t !== undefined);
    this.fail([...this.batch, ...threads.flatMap((t) => [...t.sent.values()])], new Error('the signing thread is closed'));
    this.batch = [];
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  // Each call goes to the thread with the fewest in hand (the first on a tie); another thread
  // starts when those running have some.
  private flush(): void {
    const calls = this.batch;
    this.batch = [];
    if (calls.length === 0 || this.closed) return;
    const requests = new Map<Thread, Request[]>();
    for (const call of calls) {
      const thread = this.leastBusy();
      const id = ++this.nextId;
      thread.sent.set(id, call);
      const known = thread.keyIds.get(call.key);
      const request: Request = known !== undefined ? { id, keyId: known, data: call.data } : { id, keyId: ++this.nextKeyId, key: call.key, data: call.data };
      if (known === undefined) thread.keyIds.set(call.key, request.keyId);
      const toThread = requests.get(thread);
      if (toThread) toThread.push(request);
      else requests.set(thread, [request]);
    }
    for (const [thread, sent] of requests) {
      // A signature in hand keeps the process alive; an idle thread does not.
      thread.worker.ref();
      thread.worker.postMessage(sent);
    }
  }

  private leastBusy(): Thread {
    let best: Thread | undefined;
    for (let i = 0; i < this.maxThreads; i++) {
      // An empty slot gets a thread unless one already found has nothing in hand.
      const thread = this.threads[i] ?? (best?.sent.size === 0 ? undefined : this.start(i));
      if (thread && (!best || thread.sent.size < best.sent.size)) best = thread;
    }
    return best!;
  }

  private start(slot: number): Thread {
    const worker = new Worker(new URL('./signing-worker.mjs', import.meta.url));
    const thread: Thread = { worker, sent: new Map(), keyIds: new WeakMap() };
    this.threads[slot] = thread;
    worker.on('message', (answers: Answer[]) => {
      for (const answer of answers) {
        const call = thread.sent.get(answer.id);
        thread.sent.delete(answer.id);
        if (answer.signature !== undefined) call?.resolve(answer.signature);
        else call?.reject(new Error(`signing failed: ${answer.error}`));
      }
      if (thread.sent.size === 0) worker.unref();
    });
    const died = (error: Error) => {
      if (this.threads[slot] !== thread) return;
      this.threads[slot] = undefined;
      const lost = [...thread.sent.values()];
      thread.sent.clear();
      this.fail(lost, error);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the signing thread exited (${code})`)));
    return thread;
  }

  private fail(calls: Call[], error: Error): void {
    for (const call of calls) call.reject(error);
  }
}
