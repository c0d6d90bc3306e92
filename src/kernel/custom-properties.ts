import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsNumber, IsOptional, IsString, MaxLength } from 'class-validator';
import { ConfigError } from '../platform/config/env.js';
import type { CustomPropertySetting } from './custom-properties.settings.js';

// Custom user and store properties come from settings, so their validation is declared on the
// input class at boot. A name that collides with a system field stops the boot.
export function declareCustomProperties(
  target: abstract new (...args: never[]) => object,
  props: CustomPropertySetting[],
  systemFields: ReadonlySet<string>,
  what: string,
): void {
  const collisions = props.filter((p) => systemFields.has(p.name)).map((p) => p.name);
  if (collisions.length) {
    throw new ConfigError(collisions.map((n) => `settings.${what}: "${n}" collides with a system field`));
  }
  for (const p of props) {
    const decorators: PropertyDecorator[] = [
      p.required ? IsDefined() : IsOptional(),
      ApiPropertyOptional({ type: p.type, description: 'custom property (settings)' }),
    ];
    if (p.type === 'string') decorators.push(IsString(), MaxLength(p.maxLength));
    if (p.type === 'number') decorators.push(IsNumber({ allowNaN: false, allowInfinity: false }));
    if (p.type === 'boolean') decorators.push(IsBoolean());
    for (const decorate of decorators) decorate(target.prototype, p.name);
  }
}

export function pickCustomData(input: object, props: CustomPropertySetting[]): Record<string, unknown> {
  const values = input as Record<string, unknown>;
  return Object.fromEntries(props.filter((p) => values[p.name] !== undefined).map((p) => [p.name, values[p.name]]));
}
