import { describe, expect, it } from '@jest/globals';
import { IsInt, IsString, MinLength, validate } from 'class-validator';
import { rememberValidationRules } from './validation.js';

describe('rememberValidationRules', () => {
  it('keeps each class\'s rules, and still sees rules added later (a class loaded after, or on a class already validated)', async () => {
    rememberValidationRules();
    class Named {
      @IsString()
      name!: string;
    }
    expect(await validate(Object.assign(new Named(), { name: 1 }))).toHaveLength(1);
    expect(await validate(Object.assign(new Named(), { name: 'x' }))).toHaveLength(0);

    class Counted extends Named {
      @IsInt()
      count!: number;
    }
    const errors = await validate(Object.assign(new Counted(), { name: 2, count: 'y' }));
    expect(errors.map((e) => e.property).sort()).toEqual(['count', 'name']);

    MinLength(3)(Named.prototype, 'name');
    expect(await validate(Object.assign(new Named(), { name: 'x' }))).toHaveLength(1);
    expect(await validate(Object.assign(new Counted(), { name: 'x', count: 1 }))).toHaveLength(1);
  });
});
