import type { DataObjectAccessSetting, EventSubscriptionSetting } from './data-objects.settings.js';
import type { TemplateSetting } from './templates.settings.js';

// A group of permissions an extension declares: they join the PBAC catalogue beside the
// service's own and the deployment's `permissionGroups` (grantable, listed, checked at boot).
export interface PermissionGroup {
  groupName: string;
  permissions: readonly string[];
}

// What the loaded extensions add to the catalogues the features keep. The root builds it from
// the extensions' definitions (src/extension.ts) before the modules start; each feature that
// keeps a catalogue reads its part: access control the permissions, the event channel the data
// objects and subscriptions, notifications the templates. Empty without extensions.
export class ExtensionCatalogue {
  constructor(
    readonly permissionGroups: readonly PermissionGroup[] = [],
    readonly dataObjects: readonly DataObjectAccessSetting[] = [],
    readonly eventSubscriptions: readonly EventSubscriptionSetting[] = [],
    readonly templates: readonly TemplateSetting[] = [],
    // The audit actions extensions declared (beside AUDIT_ACTIONS).
    readonly auditActions: readonly string[] = [],
  ) {}
}
