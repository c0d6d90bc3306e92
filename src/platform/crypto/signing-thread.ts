import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';

// What travels to the thread: the key itself only with its first request there.
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

// RS256 signatures on a thread of their own (signing-worker.mjs). An RSA-2048 signature costs a
// third of a millisecond of CPU or more, the largest single cost of a login or a refresh; on the
// event loop it would hold every other request for as long. Not on libuv's pool: password hashes
// queue there by the dozen during a login burst, and a refresh would wait behind them.
//
// The thread starts at the first signature (a process that never signs does not pay its ~11 MB)
// and again after a crash: the signatures it had in hand fail, the next ones get a new thread.
// The requests of one event-loop turn travel as one message, and so do their answers.
export class SigningThread {
  private worker: Worker | undefined;
  // Sent, awaiting their answer.
  private readonly sent = new Map<number, Call>();
  // Asked in this turn, sent at its end.
  private batch: Call[] = [];
  private nextId = 0;
  // The current thread's numbers for the keys it was sent.
  private keyIds = new WeakMap<KeyObject, number>();
  private nextKeyId = 0;
  private closed = false;

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
    const worker = this.worker;
    this.worker = undefined;
    this.fail([...this.batch, ...this.sent.values()], new Error('the signing thread is closed'));
    this.batch = [];
    this.sent.clear();
    await worker?.terminate();
  }

  private flush(): void {
    const calls = this.batch;
    this.batch = [];
    if (calls.length === 0 || this.closed) return;
    const worker = this.worker ?? this.start();
    const requests = calls.map((call): Request => {
      const id = ++this.nextId;
      this.sent.set(id, call);
      const keyId = this.keyIds.get(call.key);
      if (keyId !== undefined) return { id, keyId, data: call.data };
      const newId = ++this.nextKeyId;
      this.keyIds.set(call.key, newId);
      return { id, keyId: newId, key: call.key, data: call.data };
    });
    // A signature in hand keeps the process alive; an idle thread does not.
    worker.ref();
    worker.postMessage(requests);
  }

  private start(): Worker {
    const worker = new Worker(new URL('./signing-worker.mjs', import.meta.url));
    this.worker = worker;
    this.keyIds = new WeakMap();
    worker.on('message', (answers: Answer[]) => {
      for (const answer of answers) {
        const call = this.sent.get(answer.id);
        this.sent.delete(answer.id);
        if (answer.signature !== undefined) call?.resolve(answer.signature);
        else call?.reject(new Error(`signing failed: ${answer.error}`));
      }
      if (this.sent.size === 0) worker.unref();
    });
    const died = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const lost = [...this.sent.values()];
      this.sent.clear();
      this.fail(lost, error);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the signing thread exited (${code})`)));
    return worker;
  }

  private fail(calls: Call[], error: Error): void {
    for (const call of calls) call.reject(error);
  }
}
