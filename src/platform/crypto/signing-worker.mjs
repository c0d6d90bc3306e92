// The signing thread's side (signing-thread.ts): RSASSA-PKCS1-v1_5 with SHA-256 over what the
// main thread sends, in the order sent. Plain JavaScript, so that the sources' tests and the
// build start the same file.
import { sign } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

// Keys by the number the main thread gave them; each is sent once. A handful at most are live
// (the current key, the one before it around a rotation), so only the last few are kept.
const KEPT_KEYS = 8;
const keys = new Map();

// One message is the requests of one turn of the main thread; one answer goes back for all.
parentPort.on('message', (requests) => {
  const answers = [];
  for (const { id, keyId, key, data } of requests) {
    if (key) {
      keys.set(keyId, key);
      if (keys.size > KEPT_KEYS) keys.delete(keys.keys().next().value);
    }
    try {
      answers.push({ id, signature: sign('sha256', Buffer.from(data), keys.get(keyId)).toString('base64url') });
    } catch (error) {
      answers.push({ id, error: String(error?.message ?? error) });
    }
  }
  parentPort.postMessage(answers);
});
