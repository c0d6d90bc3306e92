import { ZxcvbnFactory, type FeedbackType } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';

export interface Strength {
  // 0 (too guessable) to 4 (very unguessable).
  score: number;
  feedback: FeedbackType;
}

// Built once per process (the dictionaries take ~150 ms to rank) on first use, not at import.
// Two limits bound the CPU a check may take on the event loop: a 72-character random password
// cost ~300 ms with the library's defaults, ~20 ms with these (l33t variants are tried with at
// most 5 substitutions; only the first 40 characters are analysed: a prefix scores no higher than the whole in practice).
let factory: ZxcvbnFactory | undefined;

function zxcvbn(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
    l33tMaxSubstitutions: 5,
    maxLength: 40,
  });
  return factory;
}

export function strength(password: string, userInputs: string[]): Strength {
  const { score, feedback } = zxcvbn().check(password, userInputs);
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
