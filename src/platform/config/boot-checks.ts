import { ConfigError } from './env.js';

// Every settings problem of every module, reported together: modules report (or `collect` a
// check that throws ConfigError) while the app initializes, and the root module asserts once
// after every module's init, so an operator sees all mistakes in one failed boot.
export class BootChecks {
  private readonly problems = new Set<string>();
  private readonly deferred: (() => readonly string[])[] = [];
  private asserted = false;

  report(problems: readonly string[]): void {
    // A module reporting after the assertion still stops the boot rather than being lost.
    if (this.asserted && problems.length) throw new ConfigError([...problems]);
    for (const p of problems) this.problems.add(p);
  }

  // Runs a check that throws ConfigError; its problems are kept and the result is undefined.
  collect<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.report(error.problems);
      return undefined;
    }
  }

  // A check that must see what every module's init added (the providers extensions register
  // then): run by `assert`, before its verdict.
  defer(check: () => readonly string[]): void {
    if (this.asserted) throw new Error('a boot check deferred after the boot checks ended');
    this.deferred.push(check);
  }

  assert(): void {
    for (const check of this.deferred) this.report(check());
    this.asserted = true;
    if (this.problems.size) throw new ConfigError([...this.problems]);
  }
}
