// Strategies published without type declarations: each exports a passport-oauth2 subclass.
declare module 'passport-apple';
declare module 'passport-gitlab2';
declare module 'passport-linkedin-oauth2';
declare module 'passport-microsoft';
