import type { TemplateSetting } from '../../delivery/notification/notification.settings.js';

// Shipped English messages of the flows. A template of the same name, channel and language in
// settings.notifications.templates replaces one; other languages are added there too.
// Variables: `code` (byCode) or `link` (byLink), `expireMinutes`, and the worker's `user`, `store`.

const EXPIRY = 'It expires in {{expireMinutes}} minutes.';
const IGNORE = 'If you did not ask for this, you can ignore this message.';

function email(templateName: string, subject: string, action: string): TemplateSetting {
  return {
    templateName,
    channel: 'email',
    language: 'en',
    subject,
    body:
      `<p>Hello {{user.fullname}},</p>` +
      `{{#if link}}<p>To ${action}, open this link: <a href="{{link}}">{{link}}</a></p>` +
      `{{else}}<p>To ${action}, enter this code: <b>{{code}}</b></p>{{/if}}` +
      `<p>${EXPIRY} ${IGNORE}</p>`,
  };
}

function sms(templateName: string, action: string): TemplateSetting {
  return {
    templateName,
    channel: 'sms',
    language: 'en',
    body: `{{#if link}}To ${action}, open {{link}}{{else}}{{code}} is your code to ${action}{{/if}} ({{store.fullname}}). ${EXPIRY}`,
  };
}

export const PASSWORD_CHANGED_TEMPLATE = 'passwordChanged';

export const VERIFICATION_TEMPLATES: TemplateSetting[] = [
  email('emailVerification', 'Verify your email address', 'verify your email address'),
  sms('mobileVerification', 'verify your mobile number'),
  email('passwordResetByEmail', 'Reset your password', 'reset your password'),
  sms('passwordResetByMobile', 'reset your password'),
  email('email2Factor', 'Your sign-in code', 'finish signing in'),
  sms('mobile2Factor', 'finish signing in'),
  {
    templateName: PASSWORD_CHANGED_TEMPLATE,
    channel: 'email',
    language: 'en',
    subject: 'Your password was changed',
    body: '<p>Hello {{user.fullname}},</p><p>The password of your account in {{store.fullname}} was just changed, and every session was signed out. If this was not you, reset your password now and contact us.</p>',
  },
  {
    templateName: PASSWORD_CHANGED_TEMPLATE,
    channel: 'sms',
    language: 'en',
    body: 'The password of your {{store.fullname}} account was just changed. If this was not you, reset it now.',
  },
];
