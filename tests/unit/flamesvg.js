// flamesvg.js - test_flame's check of the flame graph's script, in node:
// node flamesvg.js FILE.svg '{"zoom": NAME, "hidden": NAME, "search": RE,
// "matched": "PERCENT", "hits": N}'.  A fake DOM just big enough for the
// script, its elements parsed from the SVG's own regular layout; the
// script is run, a click on the frame "zoom" must widen it to the full
// width, fade its ancestors and hide "hidden"; Reset Zoom must undo it; a
// search for RE must highlight N frames and show "Matched: PERCENT%";
// a second click on Search must undo it.  Prints ok, or throws.
const fs = require('fs');
const src = fs.readFileSync(process.argv[2], 'utf8');
const want = JSON.parse(process.argv[3]);
function el(tag, attrs, text) {
  return { tag, attrs, textContent: text, style: {}, kids: [], ev: {},
    getAttribute(k) { return this.attrs[k]; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    getElementsByTagName(t) { return this.kids.filter(k => k.tag === t); },
    addEventListener(e, f) { this.ev[e] = f; } };
}
function attrs(s) {
  const a = {}; let m; const re = /([\w-]+)="([^"]*)"/g;
  while ((m = re.exec(s))) a[m[1]] = m[2];
  return a;
}
function unxml(s) {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
          .replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}
const byId = {}, frames = [];
let m, re = /<text id="(\w+)"([^>]*)>([^<]*)<\/text>/g;
while ((m = re.exec(src))) byId[m[1]] = el('text', attrs(m[2]), unxml(m[3]));
re = /<g class="f"><title>([^<]*)<\/title><rect([^>]*)\/><text([^>]*)>([^<]*)<\/text><\/g>/g;
while ((m = re.exec(src))) {
  const g = el('g', {}, '');
  g.kids.push(el('title', {}, unxml(m[1])), el('rect', attrs(m[2]), ''),
              el('text', attrs(m[3]), unxml(m[4])));
  frames.push(g);
}
const svg = attrs(/<svg([^>]*)>/.exec(src)[1]);
const win = { ev: {}, addEventListener(e, f) { this.ev[e] = f; } };
let answer = '';
const document = { documentElement: el('svg', svg, ''),
  getElementById: id => byId[id], querySelectorAll: () => frames };
const script = /<!\[CDATA\[([\s\S]*)\]\]>/.exec(src)[1];
new Function('document', 'window', 'prompt', 'alert', script)(document, win,
  () => answer, (s) => { throw new Error('alert: ' + s); });
win.ev.load();
function find(name) { return frames.find(g => g.kids[0].textContent.startsWith(name + ' (')); }
const W = parseFloat(svg.width), XP = 10;
function rect(g) { return g.kids[1]; }
function eq(a, b, what) { if (Math.abs(a - b) > 0.2) throw new Error(what + ': ' + a + ' != ' + b); }
// zoom on outer_a: it and its leaf span the width, its ancestors too (faded),
// outer_b hides
const a = find(want.zoom), b = find(want.hidden);
const a0 = parseFloat(rect(a).attrs.width);
a.ev.click();
eq(parseFloat(rect(a).attrs.width), W - 2 * XP, 'zoomed width');
eq(parseFloat(rect(a).attrs.x), XP, 'zoomed x');
if (b.style.display !== 'none') throw new Error(want.hidden + ' not hidden');
const root = frames[0];
if (root.style.opacity !== 0.6) throw new Error('root not faded');
if (byId.unzoom.style.opacity !== 1) throw new Error('Reset Zoom not shown');
if (!a.kids[2].textContent.startsWith(want.zoom)) throw new Error('label: ' + a.kids[2].textContent);
byId.unzoom.ev.click();
if (b.style.display !== '') throw new Error('unzoom left ' + want.hidden + ' hidden');
eq(parseFloat(rect(a).attrs.width), a0, 'unzoomed width');
// search: the matched share, nested matches counted once
answer = want.search;
byId.search.ev.click();
if (byId.matched.textContent !== 'Matched: ' + want.matched + '%')
  throw new Error('matched: ' + byId.matched.textContent);
const hit = frames.filter(g => rect(g).attrs.fill === 'rgb(230,0,230)').length;
if (hit !== want.hits) throw new Error('highlighted ' + hit);
byId.search.ev.click();
if (frames.some(g => rect(g).attrs.fill === 'rgb(230,0,230)')) throw new Error('reset search');
console.log('ok');
