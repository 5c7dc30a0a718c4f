// chart.js: the reach chart of an alert, drawn as SVG with createElementNS: x = seconds since
// publish, y = % of the target total; committed, sent (and opened) as polylines; horizontal
// marks at 50/90/99 % with the times each stage reached them.

import { formatSeconds, formatNumber } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 760;
const HEIGHT = 300;
const MARGIN = { left: 52, right: 236, top: 14, bottom: 46 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
export const MARKS = [50, 90, 99];
const STAGES = [
  { key: 'committed', label: 'committed' },
  { key: 'sent', label: 'sent' },
  { key: 'opened', label: 'opened' },
];
const percentFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Valid [ms, count] points of a stage, ascending. */
export function points(reach, key) {
  const list = reach && Array.isArray(reach[key]) ? reach[key] : [];
  return list
    .filter((point) => Array.isArray(point) && Number.isFinite(point[0]) && Number.isFinite(point[1]))
    .map(([ms, count]) => [Math.max(0, ms), Math.max(0, count)])
    .sort((a, b) => a[0] - b[0]);
}

/** The ms at which a stage first reached `percent` % of targets, or null. */
export function reachedAt(series, targets, percent) {
  if (!(targets > 0)) return null;
  const needed = Math.ceil((targets * percent) / 100);
  const hit = series.find(([, count]) => count >= needed);
  return hit ? hit[0] : null;
}

/** The share (0-100) a stage has reached so far. */
export function shareNow(series, targets) {
  if (!(targets > 0) || series.length === 0) return 0;
  return Math.min(100, (series[series.length - 1][1] / targets) * 100);
}

function niceStepSeconds(maxSeconds) {
  const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
  return steps.find((step) => maxSeconds / step <= 8) || 7200;
}

/** "90 % committed in 2.3 s, 90 % sent in 5.3 s. Now: 100 % committed, 98 % sent, 3 % opened." */
export function reachSummary(reach) {
  const targets = reach && Number.isFinite(reach.targets) ? reach.targets : 0;
  if (!(targets > 0)) return 'No devices were targeted: there is no reach to show.';
  const parts = [];
  const now = [];
  for (const stage of STAGES) {
    const series = points(reach, stage.key);
    if (stage.key === 'opened' && series.length === 0) continue;
    const at90 = reachedAt(series, targets, 90);
    if (stage.key !== 'opened') {
      parts.push(at90 === null ? `90 % not yet ${stage.label}` : `90 % ${stage.label} in ${formatSeconds(at90)}`);
    }
    now.push(`${percentFormat.format(shareNow(series, targets))} % ${stage.label}`);
  }
  return `${parts.join(', ')}. Now: ${now.join(', ')} of ${formatNumber(targets)} targets.`;
}

/** Draws the chart into the <svg> element (its children are replaced). */
export function drawReachChart(element, reach) {
  while (element.firstChild) element.removeChild(element.firstChild);
  element.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  element.setAttribute('role', 'img');
  element.setAttribute('aria-labelledby', 'reach-chart-title');
  const targets = reach && Number.isFinite(reach.targets) ? reach.targets : 0;
  const series = Object.fromEntries(STAGES.map((stage) => [stage.key, points(reach, stage.key)]));
  element.append(svg('title', { id: 'reach-chart-title' }, `Reach over time: ${reachSummary(reach)}`));

  const lastMs = Math.max(1000, ...STAGES.map((stage) => {
    const list = series[stage.key];
    return list.length ? list[list.length - 1][0] : 0;
  }));
  const step = niceStepSeconds(lastMs / 1000);
  const maxSeconds = Math.ceil(lastMs / 1000 / step) * step;
  const x = (ms) => MARGIN.left + (ms / 1000 / maxSeconds) * PLOT_W;
  const y = (percent) => MARGIN.top + PLOT_H - (Math.min(100, percent) / 100) * PLOT_H;

  // Grid and axes.
  const grid = svg('g', { class: 'reach-grid' });
  for (const percent of [0, 25, 75, 100]) {
    grid.append(svg('line', { x1: MARGIN.left, x2: MARGIN.left + PLOT_W, y1: y(percent), y2: y(percent) }));
    grid.append(svg('text', { x: MARGIN.left - 6, y: y(percent) + 4, 'text-anchor': 'end', class: 'axis-label' }, `${percent} %`));
  }
  const ticks = Math.round(maxSeconds / step);
  for (let i = 0; i <= ticks; i += 1) {
    const seconds = i * step;
    const at = x(seconds * 1000);
    grid.append(svg('line', { x1: at, x2: at, y1: MARGIN.top + PLOT_H, y2: MARGIN.top + PLOT_H + 5 }));
    const label = step < 1 ? seconds.toFixed(1) : String(Math.round(seconds));
    grid.append(svg('text', { x: at, y: MARGIN.top + PLOT_H + 18, 'text-anchor': 'middle', class: 'axis-label' }, label));
  }
  grid.append(svg('text', {
    x: MARGIN.left + PLOT_W / 2, y: HEIGHT - 6, 'text-anchor': 'middle', class: 'axis-title',
  }, 'seconds since publish'));
  grid.append(svg('rect', { x: MARGIN.left, y: MARGIN.top, width: PLOT_W, height: PLOT_H, class: 'plot-frame' }));
  element.append(grid);

  // The 50/90/99 % marks with the times each stage reached them.
  const marks = svg('g', { class: 'reach-marks' });
  for (const percent of MARKS) {
    const times = ['committed', 'sent'].map((key) => {
      const at = reachedAt(series[key], targets, percent);
      return `${key} ${at === null ? '—' : formatSeconds(at)}`;
    });
    marks.append(svg('line', {
      x1: MARGIN.left, x2: MARGIN.left + PLOT_W, y1: y(percent), y2: y(percent),
      class: 'reach-mark', 'data-percent': percent,
    }));
    marks.append(svg('text', {
      x: MARGIN.left + PLOT_W + 8, y: y(percent) + (percent === 99 ? -3 : 4), class: 'reach-mark-label', 'data-percent': percent,
    }, `${percent} %: ${times.join(', ')}`));
  }
  element.append(marks);

  // The curves, from the origin.
  for (const stage of STAGES) {
    const list = series[stage.key];
    if (stage.key === 'opened' && list.length === 0) continue;
    const coordinates = [[0, 0], ...list.map(([ms, count]) => [ms, targets > 0 ? (count / targets) * 100 : 0])];
    const text = coordinates.map(([ms, percent]) => `${x(ms).toFixed(1)},${y(percent).toFixed(1)}`).join(' ');
    element.append(svg('polyline', { points: text, class: `curve curve-${stage.key}`, fill: 'none' }));
  }

  // Legend, under the marks in the right margin.
  const legend = svg('g', { class: 'reach-legend' });
  STAGES.filter((stage) => stage.key !== 'opened' || series.opened.length > 0).forEach((stage, index) => {
    const top = MARGIN.top + PLOT_H - 50 + index * 18;
    legend.append(svg('line', { x1: MARGIN.left + PLOT_W + 8, x2: MARGIN.left + PLOT_W + 30, y1: top, y2: top, class: `legend-swatch legend-${stage.key}` }));
    legend.append(svg('text', { x: MARGIN.left + PLOT_W + 36, y: top + 4, class: 'legend-label' }, stage.label));
  });
  element.append(legend);
}
