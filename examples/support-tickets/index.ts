import { defineExtension } from 'svc-auth/extension';
import { SupportTicketSettings } from './settings.js';
import { TicketEntity } from './ticket.entity.js';
import { TICKET_AUDIT_ACTIONS, TICKET_ERRORS, TICKET_PERMISSIONS } from './tickets.catalogue.js';
import { SupportTickets1766100000000 } from './tickets.migration.js';
import { TicketsModule } from './tickets.module.js';

// Support tickets: a store's users open tickets, its administrators read and close them. One
// complete extension of the service (docs/extending.md walks through it): its own table with
// `storeId`, routes behind a permission, a listener on `user.created`, audit actions, a topic on
// the event channel, a settings section, error codes, a migration and a notification template.
export default defineExtension({
  name: 'support-tickets',
  modules: [TicketsModule],
  entities: [TicketEntity],
  migrations: [SupportTickets1766100000000],
  settings: { key: 'supportTickets', schema: SupportTicketSettings },
  errors: TICKET_ERRORS,
  permissions: [{ groupName: 'supportTickets', permissions: Object.values(TICKET_PERMISSIONS) }],
  auditActions: TICKET_AUDIT_ACTIONS,
  // `<svc>-ticket-opened` / `-closed`: heard by the ticket's owner and the store's administrators.
  dataObjects: [{ name: 'ticket', accessLevel: 'accessProtected', hasOwnerField: true }],
  eventSubscriptions: [
    {
      name: 'tickets',
      description: 'Support tickets opened and closed in your store.',
      transport: 'websocket',
      topics: [
        { name: 'ticketOpened', dataObjectName: 'ticket', topic: 'ticket.opened', description: 'A ticket was opened.' },
        { name: 'ticketClosed', dataObjectName: 'ticket', topic: 'ticket.closed', description: 'A ticket was closed.' },
      ],
      auth: { absoluteRoles: [] },
    },
  ],
  templates: [{ templateName: 'ticketClosed', channel: 'inApp', language: 'en', subject: 'Ticket closed', body: 'Your ticket "{{subject}}" was closed.' }],
});
