import type { Page } from 'playwright-core';

// What a screen must not do at any width: scroll sideways, put a control beyond the window's
// edge, or have one cut off by the box it sits in. The browser suites check it after each screen.
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const { document, innerWidth, getComputedStyle } = globalThis as any;
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > innerWidth) problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${innerWidth} px window`);
    for (const el of Array.from(document.querySelectorAll('button, a[href], select')) as any[]) {
      const box = el.getBoundingClientRect();
      if (!box.width || getComputedStyle(el).visibility === 'hidden' || el.closest('.sr-only') || el.classList.contains('skip')) continue;
      const name = `${el.tagName} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}"`;
      if (box.left < 0 || box.right > innerWidth) problems.push(`${name} is beyond the window (${Math.round(box.left)}–${Math.round(box.right)})`);
      if (el.tagName === 'BUTTON' && el.scrollWidth > el.clientWidth + 1) problems.push(`${name} cuts its own text`);
      for (let box2 = el.parentElement; box2; box2 = box2.parentElement) {
        if (getComputedStyle(box2).overflowX === 'visible') continue;
        const outer = box2.getBoundingClientRect();
        if (box.left < outer.left - 0.5 || box.right > outer.right + 0.5) problems.push(`${name} is cut off by ${box2.tagName}.${box2.className}`);
      }
    }
    return problems;
  });
}
