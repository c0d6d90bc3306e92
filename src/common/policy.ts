import { Reflector } from '@nestjs/core';

// Route policy. Every route declares one: `@Public()` now; `@Authenticated({...})` arrives with
// login. A route without a policy fails the boot (PolicyAudit), so nothing is open by accident.
export const Public = Reflector.createDecorator<true>({ transform: () => true });
