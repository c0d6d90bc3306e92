import { IsBoolean, IsInt, Max, Min } from 'class-validator';

// The `supportTickets` section of the settings file, checked at boot with the service's own.
export class SupportTicketSettings {
  // Open tickets one user may hold at once.
  @IsInt()
  @Min(1)
  @Max(1000)
  maxOpenPerUser = 5;

  // Open a welcome ticket for every new user of a store.
  @IsBoolean()
  welcomeTicket = false;
}
