import { Injectable } from '@nestjs/common';

// What the MFA routes need of passkeys, bound by the passkey feature where it exists (it is
// built beside this one; the module graph decides which of the two imports the other). The
// defaults stand for a deployment without passkeys.

// How many passkeys a user has (GET /auth-api/mfa).
export abstract class PasskeyCount {
  abstract count(storeId: string, userId: string): Promise<number>;
}

// Removes a user's passkeys (an administrator's reset of its factors).
export abstract class PasskeyReset {
  abstract removeAll(storeId: string, userId: string): Promise<void>;
}

@Injectable()
export class NoPasskeyCount extends PasskeyCount {
  count(): Promise<number> {
    return Promise.resolve(0);
  }
}

@Injectable()
export class NoPasskeyReset extends PasskeyReset {
  removeAll(): Promise<void> {
    return Promise.resolve();
  }
}
