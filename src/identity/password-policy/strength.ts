import type { FeedbackType, ZxcvbnFactory } from '@zxcvbn-ts/core';

export interface Strength {
  // 0 (too guessable) to 4 (very unguessable).
  score: number;
  feedback: FeedbackType;
}

// Built once per process on first use, not at import: the library and its dictionaries (7 MB of
// modules, ~150 ms to rank) are loaded then, so a service that never checks a password neither
// loads them at boot nor holds them. Two limits bound the CPU a check may take on the event loop: a 72-character random password
// cost ~300 ms with the library's defaults, ~20 ms with these (l33t variants are tried with at
// most 5 substitutions; only the first 40 characters are analysed: a prefix scores no higher than the whole in practice).
let factory: Promise<ZxcvbnFactory> | undefined;

function zxcvbn(): Promise<ZxcvbnFactory> {
  factory ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common'), import('@zxcvbn-ts/language-en')]).then(
    ([{ ZxcvbnFactory }, common, english]) =>
      new ZxcvbnFactory({
        dictionary: { ...common.dictionary, ...english.dictionary },
        graphs: common.adjacencyGraphs,
        translations: english.translations,
        l33tMaxSubstitutions: 5,
        maxLength: 40,
      }),
  );
  return factory;
}

export async function strength(password: string, userInputs: string[]): Promise<Strength> {
  const { score, feedback } = (await zxcvbn()).check(password, userInputs);
  return { score, feedback: { warning: feedback.warning ?? null, suggestions: [...feedback.suggestions] } };
}

// The guessable words of a user: each value whole, and its words of 3 characters or more
// (an email's local part and domain labels, the parts of a name).
export function guessableWords(values: ReadonlyArray<string | null | undefined>): string[] {
  const words = new Set<string>();
  for (const value of values) {
    if (!value) continue;
    const lower = value.trim().toLowerCase();
    if (lower) words.add(lower);
    for (const part of lower.split(/[^\p{L}\p{N}]+/u)) if ([...part].length >= 3) words.add(part);
  }
  return [...words];
}
