import { Global, Injectable, Module } from '@nestjs/common';
import { Recipients, type RecipientStore, type RecipientUser } from '../../kernel/recipients.js';
import { StoreModule } from '../store/store.module.js';
import { StoreService } from '../store/store.service.js';
import { UserModule } from '../user/user.module.js';
import { UserService } from '../user/user.service.js';

// Identity's answer to delivery's question (kernel/recipients.ts): the store and user a
// notification names, as templates and addresses need them.
@Injectable()
class IdentityRecipients extends Recipients {
  constructor(
    private readonly stores: StoreService,
    private readonly users: UserService,
  ) {
    super();
  }

  async store(storeId: string): Promise<RecipientStore | null> {
    const store = await this.stores.findById(storeId);
    return store && { name: store.name, fullname: store.fullname, codename: store.codename, language: store.language };
  }

  async user(storeId: string, userId: string): Promise<RecipientUser | null> {
    const user = await this.users.findById(storeId, userId);
    return user && { id: user.id, fullname: user.fullname, name: user.name, surname: user.surname, email: user.email, mobile: user.mobile, language: user.language };
  }
}

@Global()
@Module({
  imports: [StoreModule, UserModule],
  providers: [{ provide: Recipients, useClass: IdentityRecipients }],
  exports: [Recipients],
})
export class RecipientsModule {}
