import { HttpStatus } from '@nestjs/common';
import { AppError, defineErrors, type CodesOf } from 'svc-auth/extension';

export const TICKET_PERMISSIONS = {
  read: 'tickets.read',
  close: 'tickets.close',
} as const;

export const TICKET_ERRORS = defineErrors('examples/support-tickets/tickets.catalogue.ts', {
  TicketNotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_TicketNotFound', description: 'no such ticket in this store' },
  TicketAlreadyClosed: { status: HttpStatus.CONFLICT, message: 'errMsg_TicketAlreadyClosed', description: 'closing a ticket that is closed' },
  TooManyOpenTickets: { status: HttpStatus.CONFLICT, message: 'errMsg_TooManyOpenTickets', description: 'a user already holds `supportTickets.maxOpenPerUser` open tickets' },
});

export const TICKET_AUDIT_ACTIONS = {
  'ticket.opened': 'a support ticket was opened',
  'ticket.closed': 'a support ticket was closed',
} as const;

// The codes and actions join the service's types: `new AppError('TicketNotFound')` and
// `audit.record({ action: 'ticket.opened', ... })` type-check.
declare module 'svc-auth/extension' {
  interface DeclaredErrors extends CodesOf<typeof TICKET_ERRORS> {}
  interface ExtensionAuditActions extends Record<keyof typeof TICKET_AUDIT_ACTIONS, true> {}
}

export const ticketNotFound = () => new AppError('TicketNotFound', 'no such ticket in this store');
