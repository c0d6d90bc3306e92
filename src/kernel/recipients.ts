// The notification worker's question to identity: where a message goes and in whose words.
// Delivery sits below identity, so it asks through this port; identity answers it
// (src/identity/recipients/).

export interface RecipientUser {
  id: string;
  fullname: string | null;
  name: string | null;
  surname: string | null;
  email: string | null;
  mobile: string | null;
  language: string | null;
}

export interface RecipientStore {
  name: string;
  fullname: string;
  codename: string;
  language: string | null;
}

export abstract class Recipients {
  abstract store(storeId: string): Promise<RecipientStore | null>;
  // A user of that store only.
  abstract user(storeId: string, userId: string): Promise<RecipientUser | null>;
}
