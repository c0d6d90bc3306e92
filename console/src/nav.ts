import type { FunctionComponent } from 'preact';
import type { Session } from './api/session';
import Access from './screens/Access';
import ApiKeys from './screens/ApiKeys';
import Applications from './screens/Applications';
import AuditLog from './screens/AuditLog';
import LiveEvents from './screens/LiveEvents';
import OverviewScreen from './screens/Overview';
import Security from './screens/Security';
import Sessions from './screens/Sessions';
import StoreScreen from './screens/Store';
import Users from './screens/Users';
import Webhooks from './screens/Webhooks';

export interface ScreenProps {
  session: Session;
}

// The console's screens, in the navigation's order: one entry per screen file
// (console/src/screens/), so a screen is added with one line here.
export interface NavEntry {
  path: string;
  label: string;
  screen: FunctionComponent<ScreenProps>;
}

export const NAV: NavEntry[] = [
  { path: 'overview', label: 'Overview', screen: OverviewScreen },
  { path: 'users', label: 'Users', screen: Users },
  { path: 'sessions', label: 'Sessions', screen: Sessions },
  { path: 'apikeys', label: 'API keys', screen: ApiKeys },
  { path: 'webhooks', label: 'Webhooks', screen: Webhooks },
  { path: 'applications', label: 'Applications', screen: Applications },
  { path: 'access', label: 'Access', screen: Access },
  { path: 'audit', label: 'Audit log', screen: AuditLog },
  { path: 'events', label: 'Live events', screen: LiveEvents },
  { path: 'store', label: 'Store', screen: StoreScreen },
  { path: 'security', label: 'My security', screen: Security },
];

export const HOME = 'users';
