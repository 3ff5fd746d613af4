// Screenshots of a workflow's nodes in the Argo UI, for hack/ui-pictures.sh:
//   CHROMIUM=/usr/bin/chromium node shoot.js BASE_URL NAMESPACE WORKFLOW OUT_DIR FILE=NODE_ID[:PANEL]...
// Each FILE is the workflow's graph with node NODE_ID selected and the
// node panel's tab PANEL (summary, containers, inputs-outputs; default
// summary) open, 1400 px wide; inputs-outputs is taller (1200 px) so that
// the whole tab, outputs included, shows without scrolling.
const puppeteer = require('puppeteer-core');
const path = require('path');

const [base, ns, wf, out, ...shots] = process.argv.slice(2);
if (!out || shots.length === 0) {
  console.error('usage: node shoot.js BASE_URL NAMESPACE WORKFLOW OUT_DIR FILE=NODE_ID[:PANEL]...');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--hide-scrollbars'],
    defaultViewport: {width: 1400, height: 900},
  });
  try {
    const page = await browser.newPage();
    for (const s of shots) {
      const [, file, node, panel] = s.match(/^([^=]+)=([^:]+)(?::(.+))?$/) || [];
      if (!node) throw new Error('bad shot ' + s + ': want FILE=NODE_ID[:PANEL]');
      const q = new URLSearchParams({tab: 'workflow', nodeId: node});
      if (panel) q.set('nodePanelView', panel);
      await page.setViewport({width: 1400, height: panel === 'inputs-outputs' ? 1200 : 900});
      await page.goto(`${base}/workflows/${ns}/${wf}?${q}`, {waitUntil: 'domcontentloaded'});
      // The UI streams over server-sent events: "network idle" never comes.
      // Wait for the node panel, then for the graph to settle.
      await page.waitForSelector('.workflow-details__step-info', {timeout: 30000});
      await sleep(4000);
      await page.evaluate(() => {
        // Argo's "Get help" button floats over the node panel.
        for (const a of document.querySelectorAll('a.argo-button--special')) {
          if (/get help/i.test(a.textContent)) a.parentElement.style.display = 'none';
        }
      });
      await sleep(500);
      const to = path.join(out, file);
      await page.screenshot({path: to});
      console.error('wrote ' + to);
    }
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
