import { Injectable } from '@nestjs/common';

// Time as the service sees it: tokens, keys and sessions read it here, so tests can move it.
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

// A clock that tests move by hand.
export class ManualClock extends Clock {
  constructor(private current = new Date()) {
    super();
  }

  override now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export const DAY_MS = 86_400_000;
