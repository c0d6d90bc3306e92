import type { TemplateSetting } from '../../delivery/notification/notification.settings.js';

// Shipped English messages of passwordless sign-in. A template of the same name, channel and
// language in settings.notifications.templates replaces one; other languages are added there.
// Variables: `code` and/or `link` (settings passwordlessLogin.verificationType), `expireMinutes`,
// and the worker's `user` (absent for an address that is signing up) and `store`.

export const PASSWORDLESS_TEMPLATES_BY_CHANNEL = { email: 'passwordlessLoginByEmail', sms: 'passwordlessLoginByMobile' } as const;

const IGNORE = 'If you did not ask for this, you can ignore this message.';

export const PASSWORDLESS_TEMPLATES: TemplateSetting[] = [
  {
    templateName: PASSWORDLESS_TEMPLATES_BY_CHANNEL.email,
    channel: 'email',
    language: 'en',
    subject: 'Sign in to {{store.fullname}}',
    body:
      '<p>Hello{{#if user.fullname}} {{user.fullname}}{{/if}},</p>' +
      '{{#if code}}<p>To sign in, enter this code: <b>{{code}}</b></p>{{/if}}' +
      '{{#if link}}<p>{{#if code}}Or open{{else}}To sign in, open{{/if}} this link: <a href="{{link}}">{{link}}</a></p>{{/if}}' +
      `<p>It expires in {{expireMinutes}} minutes and works once. ${IGNORE}</p>`,
  },
  {
    templateName: PASSWORDLESS_TEMPLATES_BY_CHANNEL.sms,
    channel: 'sms',
    language: 'en',
    body: '{{#if code}}{{code}} is your code to sign in to {{store.fullname}}.{{#if link}} Or open {{link}}{{/if}}{{else}}To sign in to {{store.fullname}}, open {{link}}{{/if}} It expires in {{expireMinutes}} minutes.',
  },
];
