// After a run, one line per suite or describe block whose tests were skipped, with the reason its
// title gives as "(skipped: <reason>)" (see describeIf and itIf in test/helpers.ts). The default
// reporter counts skipped tests but names none of them. Plain JS: Jest loads reporters untransformed.
import { relative } from 'node:path';

const REASON = /\(skipped: ([^)]*)\)/;

// The skipped tests of one file, grouped by where their reason is given: the describe block whose
// title carries it (or the test's own title), else the block that holds them, without a reason.
export function skippedGroups(file, assertionResults) {
  const groups = new Map();
  for (const result of assertionResults) {
    if (result.status !== 'pending' && result.status !== 'skipped') continue;
    const titles = [...result.ancestorTitles, result.title];
    const at = titles.findIndex((title) => REASON.test(title));
    const reason = at < 0 ? undefined : REASON.exec(titles[at])[1];
    // a reason in a test's title: the group is the block around it
    const path = (at < 0 || at === titles.length - 1 ? result.ancestorTitles : titles.slice(0, at + 1)).map((t) => t.replace(REASON, '').trim());
    const key = JSON.stringify([path, reason]);
    const group = groups.get(key) ?? { file, path, reason, count: 0 };
    group.count++;
    groups.set(key, group);
  }
  return [...groups.values()];
}

export function skippedLine({ file, path, reason, count }) {
  const where = [file, ...path].join(' › ');
  return `  ${where}: ${count} skipped, ${reason ?? 'no reason in its title'}`;
}

export default class SkippedReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
    this.groups = [];
  }

  onTestResult(_test, testResult) {
    this.groups.push(...skippedGroups(relative(this.globalConfig.rootDir, testResult.testFilePath), testResult.testResults));
  }

  onRunComplete() {
    // Tests left out by -t are the caller's choice, not skips worth explaining.
    if (!this.groups.length || this.globalConfig.testNamePattern) return;
    const total = this.groups.reduce((n, g) => n + g.count, 0);
    const lines = this.groups.sort((a, b) => skippedLine(a).localeCompare(skippedLine(b))).map(skippedLine);
    process.stderr.write(`\nSkipped tests (${total}), and why:\n${lines.join('\n')}\n`);
  }
}
