// Charts drawn without Plotly (ui/workarounds/chart.py; served from static/ and loaded once a
// page by load_plotly.js, not sent with every chart). A figure made only of heatmaps on
// integer cells (one over another too, a square cell drawn square, with lines, rectangles
// and text on the data: the vision figures), of bars (a trace of bars an axis), or of text
// placed over path shapes (the token chips) is drawn here as one SVG, a heatmap's cells as
// an image of one pixel a cell. Plotly took
// about 45 ms of the browser's time a chart, drawn one after another; this takes a few.
// Only what the app's figure builders (viz/) use is read: any other trace type or setting
// leaves the figure to Plotly (gridFigure). The DOM keeps Plotly's class names (main-svg,
// gtitle, xtick, ytick, g-xtitle, g-ytitle, modebar-btn) and the figure on the element
// (gd.layout, gd.data, gd._fullLayout.width, height, _size), so what reads a Plotly chart
// reads this one too.

(() => {
const SVG_NS = "http://www.w3.org/2000/svg";
// What each kind of trace may set: a heatmap; bars (a trace an axis); text placed at points
// (the token chips: text over path shapes).
const TRACE_KEYS = {
  heatmap: new Set([
    "type", "z", "x", "y", "customdata", "hovertemplate", "hoverongaps", "text",
    "texttemplate", "textfont", "colorscale", "zmin", "zmax", "zmid", "colorbar",
    "coloraxis", "showscale", "xaxis", "yaxis", "xgap", "ygap", "name",
  ]),
  bar: new Set([
    "type", "x", "y", "orientation", "marker", "text", "textposition", "cliponaxis",
    "customdata", "hovertemplate", "name", "xaxis", "yaxis",
  ]),
  scatter: new Set(["type", "x", "y", "mode", "text", "textfont", "customdata",
                    "hovertemplate", "name"]),
};
const LAYOUT_KEYS = new Set([
  "title", "font", "height", "margin", "template", "hoverlabel", "coloraxis",
  "plot_bgcolor", "paper_bgcolor", "annotations", "bargap", "shapes", "showlegend",
]);
const AXIS_KEYS = new Set([
  "tickmode", "tickvals", "ticktext", "tickfont", "showgrid", "zeroline", "autorange",
  "tickangle", "title", "range", "domain", "anchor", "matches", "showticklabels",
  "automargin", "gridcolor", "zerolinecolor", "linecolor", "ticks", "zerolinewidth",
  "ticklabeloverflow", "visible", "fixedrange", "tickformat", "dtick", "scaleanchor",
  "constrain",
]);
// Shapes: a path (the token chips' boxes), or a line or rectangle (the vision figures' patch
// grid), in data coordinates.
const SHAPE_KEYS = {
  path: new Set(["type", "path", "fillcolor", "line", "layer"]),
  line: new Set(["type", "x0", "x1", "y0", "y1", "line", "layer"]),
  rect: new Set(["type", "x0", "x1", "y0", "y1", "fillcolor", "line", "layer"]),
};
// Annotations: in paper coordinates (the panels' titles), or text at a point of the data
// without an arrow (the patches' "row,column").
const NOTE_KEYS = new Set(["x", "y", "text", "showarrow", "xanchor", "yanchor", "font", "xref",
                           "yref"]);
const PATH_OK = /^[MLQCZ\d\s.,eE+-]*$/;  // absolute moves, lines and curves only
const PLOTLY_MARGIN = { l: 80, r: 80, t: 100, b: 80 };
const TICK_PAD = 6;  // px between the plot and its tick labels
const STANDOFF = 15;  // px between the tick labels and the axis title (viz.margins)

const isAxisKey = (key) => /^[xy]axis\d*$/.test(key);
const axisName = (ref) => ref[0] + "axis" + ref.slice(1);  // "x2" -> "xaxis2"
const steps = (values) => values.every((v, i) => v === values[0] + i);

// Plotly's typed arrays (plotly.py writes a numpy array as {dtype, bdata, shape}), read
// back as plain arrays: a 2-D one as rows, NaN as null (an empty cell).
const TYPED = {
  f8: Float64Array, f4: Float32Array, i1: Int8Array, u1: Uint8Array, i2: Int16Array,
  u2: Uint16Array, i4: Int32Array, u4: Uint32Array,
};
function plainArray(value) {
  if (!value || Array.isArray(value) || !value.bdata || !TYPED[value.dtype]) return value;
  const bytes = Uint8Array.from(atob(value.bdata), (c) => c.charCodeAt(0));
  const flat = Array.from(new TYPED[value.dtype](bytes.buffer), (v) => (Number.isNaN(v) ? null : v));
  const shape = String(value.shape ?? flat.length).split(",").map(Number);
  const rows = (values, n, size) => Array.from({ length: n }, (_, r) =>
    values.slice(r * size, (r + 1) * size));
  if (shape.length === 1) return flat;
  if (shape.length === 2) return rows(flat, shape[0], shape[1]);
  if (shape.length !== 3) return null;  // [R, C, K]: each cell's K values (customdata)
  return rows(rows(flat, shape[0] * shape[1], shape[2]), shape[0], shape[1]);
}

// `figure` with its heatmaps' arrays read back, when this file can draw it as Plotly would;
// else null (Plotly draws it).
function gridFigure(figure) {
  const { data, layout } = figure;
  if (!data.length) return null;
  // Bars of different traces on one axis would be grouped side by side (Plotly's barmode):
  // drawn here only when each trace of bars has its own axis (a panel each).
  const barAxes = data.filter((t) => t.type === "bar")
    .map((t) => (t.orientation === "h" ? t.yaxis || "y" : t.xaxis || "x"));
  const barsApart = new Set(barAxes).size === barAxes.length;
  const traces = [];
  for (const given of data) {
    const keys = TRACE_KEYS[given.type];
    if (!keys || Object.keys(given).some((k) => !keys.has(k))) return null;
    const trace = { ...given, z: plainArray(given.z), x: plainArray(given.x),
                    y: plainArray(given.y), customdata: plainArray(given.customdata),
                    kind: given.type };
    if (given.type === "heatmap" && !heatmapFits(trace)) return null;
    if (given.type === "bar" && !(barsApart && barFits(trace))) return null;
    if (given.type === "scatter" && !textFits(trace)) return null;
    traces.push(trace);
  }
  for (const [key, value] of Object.entries(layout)) {
    if (isAxisKey(key)) {
      if (Object.keys(value).some((k) => !AXIS_KEYS.has(k))) return null;
    } else if (!LAYOUT_KEYS.has(key)) return null;
  }
  if (layout.showlegend !== undefined && layout.showlegend !== false) return null;
  const shapesFit = (layout.shapes || []).every((shape) => {
    const keys = SHAPE_KEYS[shape.type];
    if (!keys || Object.keys(shape).some((k) => !keys.has(k))) return false;
    if (shape.type === "path") return PATH_OK.test(shape.path);
    return ["x0", "x1", "y0", "y1"].every((k) => typeof shape[k] === "number");
  });
  const notesFit = (layout.annotations || []).every((a) =>
    Object.keys(a).every((k) => NOTE_KEYS.has(k))
    && ((a.xref === "paper" && a.yref === "paper")
        || (a.xref === undefined && a.yref === undefined && a.showarrow === false)));
  const anchors = Object.entries(layout).filter(([k, v]) => isAxisKey(k) && v.scaleanchor);
  const anchored = anchors.every(([k, v]) => k === "yaxis" && v.scaleanchor === "x");
  return notesFit && shapesFit && anchored ? { data: traces, layout } : null;
}

function heatmapFits(trace) {
  if (!Array.isArray(trace.z) || !Array.isArray(trace.z[0])) return false;
  for (const [axis, n] of [["x", trace.z[0].length], ["y", trace.z.length]]) {
    const v = trace[axis];
    if (v && !(v.length === n && v.every(Number.isInteger) && steps(v))) return false;
  }
  if (trace.texttemplate && trace.texttemplate !== "%{text}") return false;
  return typeof (trace.colorscale || "") !== "string" || Boolean(trace.coloraxis);
}

// A trace of bars on integer positions, its text (if any) outside the bars.
function barFits(trace) {
  const along = trace.orientation === "h" ? trace.y : trace.x;
  const value = trace.orientation === "h" ? trace.x : trace.y;
  const colour = (trace.marker || {}).color;
  return Array.isArray(along) && along.every(Number.isInteger)
    && Array.isArray(value) && value.length === along.length
    && (!trace.text || trace.textposition === "outside")
    && Object.keys(trace.marker || {}).every((k) => k === "color")
    && (typeof colour === "string" || (Array.isArray(colour) && colour.length === along.length)
        || colour === undefined);
}

function textFits(trace) {
  return trace.mode === "text" && Array.isArray(trace.x) && Array.isArray(trace.y)
    && Array.isArray(trace.text) && trace.x.length === trace.y.length;
}

// ---- text: the builders escape user text (viz._common.escape); a tag is theirs.
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };
function plainLines(html) {
  return String(html ?? "").split(/<br\s*\/?>/i).map((line) => line
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (all, name) => {
      if (name[0] === "#") {
        const code = name[1] === "x" || name[1] === "X"
          ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return String.fromCodePoint(code);
      }
      return ENTITIES[name] ?? all;
    }));
}

// d3-format's few formats the hover templates use: .3f, .0%, .3g, .2e.
function formatNumber(value, spec) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  if (typeof value !== "number") return String(value);
  const m = /^\.(\d+)([fgep%])$/.exec(spec || "");
  let text;
  if (!m) text = String(Math.round(value * 1e9) / 1e9);
  else {
    const n = Number(m[1]);
    if (m[2] === "f") text = value.toFixed(n);
    else if (m[2] === "%") text = (value * 100).toFixed(n) + "%";
    else if (m[2] === "e") text = value.toExponential(n);
    else text = String(Number(value.toPrecision(Math.max(n, 1))));
  }
  return text.replace(/^-/, "\u2212");  // d3's minus sign
}

// A hover template filled for one cell: %{x}, %{z:.3f}, %{customdata[1]}, %{text}.
function fillTemplate(template, cell) {
  const extra = /<extra>([\s\S]*?)<\/extra>/.exec(template);
  let text = template.replace(/<extra>[\s\S]*?<\/extra>/, "");
  text = text.replace(/%\{(\w+)((?:\[\d+\])*)(?::([^}]*))?\}/g, (all, name, index, spec) => {
    let value = cell[name];
    for (const i of index.match(/\d+/g) || []) value = value == null ? value : value[i];
    return formatNumber(value, spec);
  });
  const lines = plainLines(text);
  if (extra && extra[1]) lines.push(...plainLines(extra[1]));
  return lines.join("\n");
}

// ---- colours
function parseColour(text) {
  const s = String(text).trim();
  if (s[0] === "#") {
    const h = s.length === 4 ? s.slice(1).split("").map((c) => c + c).join("") : s.slice(1);
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)).concat(255);
  }
  const parts = s.slice(s.indexOf("(") + 1, s.indexOf(")")).split(",").map(Number);
  return [parts[0], parts[1], parts[2], parts.length > 3 ? Math.round(parts[3] * 255) : 255];
}

function colourScale(scale) {
  const stops = scale.map(([t, c]) => [Number(t), parseColour(c)]);
  return (t) => {
    if (!(t > 0)) return stops[0][1];
    if (t >= 1) return stops[stops.length - 1][1];
    let i = 1;
    while (stops[i][0] < t) i += 1;
    const [t0, c0] = stops[i - 1], [t1, c1] = stops[i];
    const f = t1 > t0 ? (t - t0) / (t1 - t0) : 0;
    return c0.map((v, k) => Math.round(v + (v === c1[k] ? 0 : (c1[k] - v) * f)));
  };
}

// The colour settings of a trace: its own, or its colour axis's.
function colouring(trace, layout) {
  const axis = trace.coloraxis ? layout[trace.coloraxis] || {} : null;
  const src = axis || trace;
  const lo = axis ? "cmin" : "zmin", hi = axis ? "cmax" : "zmax", mid = axis ? "cmid" : "zmid";
  let min = src[lo], max = src[hi];
  if (min === undefined || max === undefined) {
    const finite = trace.z.flat().filter((v) => typeof v === "number");
    if (min === undefined) min = finite.length ? Math.min(...finite) : 0;
    if (max === undefined) max = finite.length ? Math.max(...finite) : 1;
    if (src[mid] !== undefined && src[lo] === undefined && src[hi] === undefined) {
      const half = Math.max(Math.abs(min - src[mid]), Math.abs(max - src[mid]));
      [min, max] = [src[mid] - half, src[mid] + half];
    }
  }
  return {
    key: trace.coloraxis || trace, min, max, scale: src.colorscale,
    colour: colourScale(src.colorscale),
    bar: src.showscale === false ? null : src.colorbar || {},
  };
}

// ---- numbers for automatic ticks
function niceStep(span, count, least) {
  const raw = Math.max(span / Math.max(count, 1), least || 0);
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((k) => k * power).find((s) => s >= raw) || raw;
}
function autoTicks(lo, hi, px, spacing, least, format) {
  const step = niceStep(hi - lo, Math.max(2, Math.floor(px / spacing)), least);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const vals = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-9; k++) {
    vals.push(Number((k * step).toFixed(decimals)));
  }
  // As Plotly writes them: no trailing zeros ("1", "0.8"), d3's minus sign.
  return { vals, text: vals.map((v) => formatNumber(v, format)) };
}

// The data range of a trace on its x or y axis, and whether that axis counts cells.
function extent(trace, letter) {
  if (trace.kind === "heatmap") {
    const n = letter === "x" ? trace.z[0].length : trace.z.length;
    const first = (trace[letter] || [0])[0];
    return [first - 0.5, first + n - 0.5, true];
  }
  const values = trace[letter].filter((v) => typeof v === "number");
  const lo = Math.min(...values), hi = Math.max(...values);
  if (trace.kind === "bar") {
    const along = (trace.orientation === "h" ? "y" : "x") === letter;
    if (along) return [lo - 0.5, hi + 0.5, true];
    return [Math.min(0, lo), Math.max(0, hi) * 1.05, false];  // Plotly's padding, about
  }
  const pad = (hi - lo || 1) * 0.05;
  return [lo - pad, hi + pad, false];
}

// ---- SVG
function el(parent, name, attrs, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

let measurer = null;
function textWidth(text, size, family) {
  measurer = measurer || document.createElement("canvas").getContext("2d");
  measurer.font = `${size}px ${family}`;
  return measurer.measureText(text).width;
}

// The axes of the figure: their pixels, their range and their ticks.
function buildAxes(figure, width, margin, family) {
  const { data, layout } = figure;
  const axes = {};
  const pw = width - margin.l - margin.r, ph = layout.height - margin.t - margin.b;
  for (const trace of data) {
    for (const letter of ["x", "y"]) {
      const name = axisName(trace[letter + "axis"] || letter);
      const given = layout[name] || {};
      const axis = axes[name] || { name, letter, given, lo: Infinity, hi: -Infinity,
                                   cells: false };
      const [lo, hi, cells] = extent(trace, letter);
      axis.lo = Math.min(axis.lo, lo);
      axis.hi = Math.max(axis.hi, hi);
      axis.cells = axis.cells || cells;
      axes[name] = axis;
    }
  }
  for (const axis of Object.values(axes)) {
    const given = axis.given;
    const linked = given.matches ? axes[axisName(given.matches)] : null;
    if (linked) [axis.lo, axis.hi] = [linked.lo, linked.hi];
    let range = given.range ? [...given.range] : [axis.lo, axis.hi];
    if (!given.range && given.autorange === "reversed") range = [range[1], range[0]];
    if (linked && linked.given.range) range = [...linked.given.range];
    else if (linked && linked.given.autorange === "reversed") range = [range[1], range[0]];
    const [d0, d1] = given.domain || [0, 1];
    const px = axis.letter === "x"
      ? [margin.l + d0 * pw, margin.l + d1 * pw]
      : [margin.t + (1 - d0) * ph, margin.t + (1 - d1) * ph];  // y grows upwards
    axis.range = range;
    axis.px = px;
    axis.toPx = (v) => axis.px[0]
      + ((v - axis.range[0]) / (axis.range[1] - axis.range[0])) * (axis.px[1] - axis.px[0]);
    axis.fromPx = (p) => axis.range[0]
      + ((p - axis.px[0]) / (axis.px[1] - axis.px[0])) * (axis.range[1] - axis.range[0]);
    const size = (given.tickfont || {}).size || (layout.font || {}).size || 12;
    axis.font = size;
    let ticks;
    if (given.showticklabels === false || given.visible === false) ticks = { vals: [], text: [] };
    else if (Array.isArray(given.tickvals)) {
      const lo = Math.min(...range), hi = Math.max(...range);
      const keep = given.tickvals.map((v, i) => [v, (given.ticktext || [])[i] ?? String(v)])
        .filter(([v]) => v >= lo && v <= hi);
      ticks = { vals: keep.map(([v]) => v), text: keep.map(([, t]) => plainLines(t).join(" ")) };
    } else if (given.tickmode === "linear" && given.dtick > 0) {
      const lo = Math.min(...range), hi = Math.max(...range), vals = [];
      for (let v = Math.ceil(lo / given.dtick) * given.dtick; v <= hi + 1e-9; v += given.dtick) {
        vals.push(Number(v.toFixed(9)));
      }
      ticks = { vals, text: vals.map((v) => formatNumber(v, given.tickformat)) };
    } else {
      ticks = autoTicks(Math.min(...range), Math.max(...range), Math.abs(px[1] - px[0]),
                        axis.letter === "x" ? 60 : 35, axis.cells ? 1 : 0, given.tickformat);
    }
    axis.ticks = ticks;
    axis.angle = Number(given.tickangle) || 0;
    const widest = Math.max(0, ...ticks.text.map((t) => textWidth(t, size, family)));
    const rad = (Math.abs(axis.angle) * Math.PI) / 180;
    // How far the tick labels reach from the plot (x: down; y: left).
    axis.reach = ticks.text.length === 0 ? 0 : axis.letter === "x"
      ? TICK_PAD + widest * Math.sin(rad) + size * Math.cos(rad)
      : TICK_PAD + widest;
  }
  return axes;
}

// y's scale tied to x's (scaleanchor: a square cell is drawn square): the axis with more
// pixels a unit gets as many as the other, by a shorter span of the plot centred in its
// place (constrain "domain") or by a longer range (Plotly's default, "range").
function constrainScale(axes) {
  const x = axes.xaxis, y = axes.yaxis;
  if (!x || !y || y.given.scaleanchor !== "x") return;
  const unit = (a) => Math.abs(a.px[1] - a.px[0]) / Math.abs(a.range[1] - a.range[0]);
  const [wide, narrow] = unit(x) > unit(y) ? [x, y] : [y, x];
  const scale = unit(wide) / unit(narrow);
  if (scale <= 1) return;
  if (wide.given.constrain === "domain") {
    const mid = (wide.px[0] + wide.px[1]) / 2, half = (wide.px[1] - wide.px[0]) / 2 / scale;
    wide.px = [mid - half, mid + half];
  } else {
    const mid = (wide.range[0] + wide.range[1]) / 2;
    const half = ((wide.range[1] - wide.range[0]) / 2) * scale;
    wide.range = [mid - half, mid + half];
  }
  const lo = Math.min(...wide.range), hi = Math.max(...wide.range);  // its ticks still inside
  const keep = wide.ticks.vals.map((v, i) => [v, wide.ticks.text[i]])
    .filter(([v]) => v >= lo && v <= hi);
  wide.ticks = { vals: keep.map(([v]) => v), text: keep.map(([, t]) => t) };
}

function colourBarRoom(bar, info, family, font) {
  if (!bar) return 0;
  const size = (bar.tickfont || {}).size || font;
  const ticks = autoTicks(info.min, info.max, 200, 50);
  const labels = Math.max(0, ...ticks.text.map((t) => textWidth(t, size, family)));
  const title = ((bar.title || {}).text || "");
  const titleWidth = title ? textWidth(plainLines(title).join(" "), font, family) : 0;
  return 0.02 + 10 + Math.max((bar.thickness || 30) + 3 + labels, titleWidth) + 2;
}

function pngName(config) {
  return ((config.toImageButtonOptions || {}).filename || "chart") + ".png";
}

// ---- drawing
function drawGrid(gd, figure, config) {
  const { data, layout } = figure;
  const family = (layout.font || {}).family || "sans-serif";
  const font = (layout.font || {}).size || 12;
  const full = document.fullscreenElement === gd;
  const width = full ? window.innerWidth : Math.max(gd.clientWidth, 100);
  const height = full ? window.innerHeight : layout.height || 450;
  const paper = layout.paper_bgcolor || "white";
  const plotBg = layout.plot_bgcolor || "white";
  const given = { ...PLOTLY_MARGIN, ...(layout.margin || {}) };
  const margin = { ...given };
  const sized = { ...figure, layout: { ...layout, height } };

  // The colour bars (one per trace, or one per colour axis), on the right.
  const colourings = data.map((t) => (t.kind === "heatmap" ? colouring(t, layout) : null));
  const bars = [...new Map(colourings.filter((c) => c && c.bar).map((c) => [c.key, c]))
    .values()];

  // As Plotly's automargin: room for the tick labels, titles and colour bar.
  let axes = buildAxes(sized, width, margin, family);
  for (const axis of Object.values(axes)) {
    const title = (axis.given.title || {}).text;
    const need = Math.ceil(axis.reach + (title ? STANDOFF + font * 1.2 : 0) + 2);
    const other = axes[axisName(axis.given.anchor || (axis.letter === "x" ? "y" : "x"))];
    if (!other) continue;
    if (axis.letter === "x" && Math.max(...other.px) >= height - margin.b - 1) {
      margin.b = Math.max(margin.b, need);  // labels below the bottom edge
    } else if (axis.letter === "y" && Math.min(...other.px) <= margin.l + 1) {
      margin.l = Math.max(margin.l, need);  // labels left of the left edge
    }
  }
  const barRoom = Math.max(0, ...bars.map((b) => colourBarRoom(b.bar, b, family, font)));
  margin.r = Math.max(margin.r, Math.ceil(barRoom));
  axes = buildAxes(sized, width, margin, family);
  constrainScale(axes);
  const pw = width - margin.l - margin.r, ph = height - margin.t - margin.b;

  const svg = el(null, "svg", {
    class: "main-svg", xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`,
    "font-family": family, style: `background:${paper}; display:block`,
  });
  el(svg, "rect", { width, height, fill: paper });
  const cartesian = el(svg, "g", { class: "cartesianlayer" });
  drawGridLines(cartesian, axes, layout);
  const shapes = layout.shapes || [];
  drawShapes(cartesian, axes, shapes.filter((shape) => shape.layer === "below"));

  // The cells: an image of one pixel a cell (nothing where a cell is empty), drawn over
  // the plot's background, as Plotly draws a heatmap.
  const panels = [];
  const backed = new Set();
  data.forEach((trace, i) => {
    const x = axes[axisName(trace.xaxis || "x")], y = axes[axisName(trace.yaxis || "y")];
    if (trace.kind === "bar") {
      drawBars(cartesian, trace, x, y, layout, font);
      panels.push({ trace, x, y });
      return;
    }
    if (trace.kind === "scatter") {
      drawTexts(cartesian, trace, x, y, font);
      panels.push({ trace, x, y });
      return;
    }
    const rows = trace.z.length, cols = trace.z[0].length;
    const x0 = (trace.x || [0])[0], y0 = (trace.y || [0])[0];
    const left = x.toPx(x0 - 0.5), right = x.toPx(x0 + cols - 0.5);
    const top = y.toPx(y0 - 0.5), bottom = y.toPx(y0 + rows - 0.5);
    const { colour, min, max } = colourings[i];
    const canvas = document.createElement("canvas");
    canvas.width = cols;
    canvas.height = rows;
    const ctx = canvas.getContext("2d");
    const image = ctx.createImageData(cols, rows);
    for (let r = 0; r < rows; r++) {
      const out = (top <= bottom ? r : rows - 1 - r) * cols;
      for (let c = 0; c < cols; c++) {
        const v = trace.z[r][c];
        if (typeof v !== "number") continue;
        const rgba = colour(max > min ? (v - min) / (max - min) : 0.5);
        image.data.set(rgba, ((out + (left <= right ? c : cols - 1 - c)) * 4));
      }
    }
    ctx.putImageData(image, 0, 0);
    const box = {
      x: Math.min(left, right), y: Math.min(top, bottom),
      w: Math.abs(right - left), h: Math.abs(bottom - top),
    };
    const clipX = [Math.min(...x.px), Math.max(...x.px)];
    const clipY = [Math.min(...y.px), Math.max(...y.px)];
    const plot = el(cartesian, "g", { class: "plot" });
    if (!backed.has(x.name + y.name)) {  // once a subplot: a heatmap over another shows it
      backed.add(x.name + y.name);
      el(plot, "rect", {
        x: clipX[0], y: clipY[0], width: clipX[1] - clipX[0], height: clipY[1] - clipY[0],
        fill: plotBg,
      });
    }
    const clipId = `gb-clip-${Math.random().toString(36).slice(2)}`;
    const clip = el(el(svg, "defs"), "clipPath", { id: clipId });
    el(clip, "rect", {
      x: clipX[0], y: clipY[0], width: clipX[1] - clipX[0], height: clipY[1] - clipY[0],
    });
    const cells = el(plot, "g", { "clip-path": `url(#${clipId})` });
    el(cells, "image", {
      href: canvas.toDataURL(), x: box.x, y: box.y, width: box.w, height: box.h,
      preserveAspectRatio: "none", style: "image-rendering: pixelated",
    });
    const cw = box.w / cols, ch = box.h / rows;
    // Gaps between cells (the causal mask): lines in the paper's colour.
    const gaps = [];
    if (trace.xgap) for (let c = 1; c < cols; c++) gaps.push(`M${box.x + c * cw} ${box.y}v${box.h}`);
    if (trace.ygap) for (let r = 1; r < rows; r++) gaps.push(`M${box.x} ${box.y + r * ch}h${box.w}`);
    if (gaps.length) {
      el(cells, "path", {
        d: gaps.join(""), stroke: paper, "stroke-width": trace.xgap || trace.ygap,
      });
    }
    // Numbers in the cells, in black or white against the cell's colour.
    if (trace.text && trace.texttemplate) {
      const size = (trace.textfont || {}).size || font;
      const texts = el(cells, "g", { class: "textpoint", "font-size": size,
                                     "text-anchor": "middle", "dominant-baseline": "central" });
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const word = (trace.text[r] || [])[c];
          if (word === null || word === undefined || word === "") continue;
          const v = trace.z[r][c];
          const [cr, cg, cb] = typeof v === "number"
            ? colour(max > min ? (v - min) / (max - min) : 0.5) : parseColour(plotBg);
          const light = 0.299 * cr + 0.587 * cg + 0.114 * cb > 140;
          el(texts, "text", {
            x: x.toPx(x0 + c), y: y.toPx(y0 + r), fill: light ? "#444" : "white",
          }, plainLines(word).join(" "));
        }
      }
    }
    panels.push({ trace, x, y, colouring: colourings[i] });
  });
  drawShapes(cartesian, axes, shapes.filter((shape) => shape.layer !== "below"));  // above

  // The axes: tick labels and titles, in Plotly's classes.
  for (const axis of Object.values(axes)) {
    const layer = el(svg, "g", { class: `${axis.letter}axislayer-above` });
    const along = axis.letter === "x"
      ? Math.max(...axes[axisName(axis.given.anchor || "y")]?.px || [margin.t + ph])
      : Math.min(...(axes[axisName(axis.given.anchor || "x")]?.px || [margin.l]));
    axis.ticks.vals.forEach((v, i) => {
      const tick = el(layer, "g", { class: `${axis.letter}tick` });
      const p = axis.toPx(v);
      if (axis.letter === "x") {
        const y = along + TICK_PAD;
        const attrs = { x: p, y, "font-size": axis.font, fill: "#444" };
        if (axis.angle) {
          Object.assign(attrs, { "text-anchor": "end", "dominant-baseline": "central",
                                 transform: `rotate(${axis.angle},${p},${y})` });
        } else Object.assign(attrs, { "text-anchor": "middle", "dominant-baseline": "hanging" });
        el(tick, "text", attrs, axis.ticks.text[i]);
      } else {
        el(tick, "text", { x: along - TICK_PAD, y: p, "font-size": axis.font, fill: "#444",
                           "text-anchor": "end", "dominant-baseline": "central" },
           axis.ticks.text[i]);
      }
    });
    const title = (axis.given.title || {}).text;
    if (!title) continue;
    const group = el(svg, "g", { class: `g-${axis.letter}title` });
    const mid = (axis.px[0] + axis.px[1]) / 2;
    if (axis.letter === "x") {
      el(group, "text", { x: mid, y: along + axis.reach + STANDOFF, "font-size": font,
                          fill: "#444", "text-anchor": "middle", "dominant-baseline": "hanging" },
         plainLines(title).join(" "));
    } else {
      const x = along - axis.reach - STANDOFF;
      el(group, "text", { x, y: mid, "font-size": font, fill: "#444", "text-anchor": "middle",
                          transform: `rotate(-90,${x},${mid})` }, plainLines(title).join(" "));
    }
  }

  // The colour bars, right of the plot, as tall as it (less Plotly's 10 px pads).
  bars.forEach(({ bar, scale, min, max }, i) => {
    const thick = bar.thickness || 30;
    const left = margin.l + pw * 1.02 + 10 + i * 60;
    const top = margin.t + 10, tall = Math.max(ph - 20, 10);
    const group = el(svg, "g", { class: "colorbar" });
    const id = `gb-bar-${Math.random().toString(36).slice(2)}`;
    const gradient = el(el(group, "defs"), "linearGradient",
                        { id, x1: 0, y1: 1, x2: 0, y2: 0 });
    for (const [t, c] of scale) el(gradient, "stop", { offset: t, "stop-color": c });
    el(group, "rect", { x: left, y: top, width: thick, height: tall, fill: `url(#${id})` });
    const size = (bar.tickfont || {}).size || font;
    const ticks = autoTicks(min, max, tall, 50);
    ticks.vals.forEach((v, k) => {
      const y = top + tall - ((v - min) / (max - min || 1)) * tall;
      el(group, "text", { x: left + thick + 3, y, "font-size": size, fill: "#444",
                          "dominant-baseline": "central", class: "cbaxis" }, ticks.text[k]);
    });
    const title = (bar.title || {}).text;
    if (title) {
      el(group, "text", { x: left, y: top - 6, "font-size": font, fill: "#444",
                          class: "cbtitle" }, plainLines(title).join(" "));
    }
  });

  // The chart's title and the panels' titles (annotations in paper coordinates).
  const t = layout.title || {};
  if (t.text) {
    const size = (t.font || {}).size || font * 1.25;
    const text = el(svg, "text", {
      class: "gtitle", x: width * (t.x ?? 0.5), y: margin.t / 2, "font-size": size,
      fill: "#444", "text-anchor": t.xanchor === "left" ? "start" : "middle",
      "dominant-baseline": "central",
    });
    plainLines(t.text).forEach((line, k) => el(text, "tspan", {
      x: width * (t.x ?? 0.5), dy: k ? "1.2em" : 0,
    }, line));
  }
  for (const a of layout.annotations || []) {
    const anchor = { left: "start", right: "end" }[a.xanchor] || "middle";
    const baseline = { bottom: "text-after-edge", top: "hanging" }[a.yanchor] || "central";
    const paper = a.xref === "paper";
    el(svg, "text", {
      class: "annotation-text",
      x: paper ? margin.l + a.x * pw : axes.xaxis.toPx(a.x),
      y: paper ? margin.t + (1 - a.y) * ph : axes.yaxis.toPx(a.y),
      "font-size": (a.font || {}).size || font, fill: (a.font || {}).color || "#444",
      "text-anchor": anchor, "dominant-baseline": baseline,
    }, plainLines(a.text).join(" "));
  }

  gd.glassboxPanels = panels;
  gd.layout = { ...layout, width: full ? width : layout.width, height };
  gd.data = data;
  gd._fullLayout = {
    width, height, _size: { l: margin.l, r: margin.r, t: margin.t, b: margin.b, w: pw, h: ph },
  };
  return svg;
}

// Grid lines at the ticks of a number axis, and its zero line, in the template's colours.
function drawGridLines(parent, axes, layout) {
  const template = (layout.template || {}).layout || {};
  for (const axis of Object.values(axes)) {
    const given = axis.given;
    if (given.visible === false || axis.cells) continue;
    const look = { ...(template[axis.letter + "axis"] || {}), ...given };
    const other = axes[axisName(given.anchor || (axis.letter === "x" ? "y" : "x"))];
    if (!other) continue;
    const [a, b] = other.px;
    const line = (v, colour, width) => {
      const p = axis.toPx(v);
      const d = axis.letter === "x" ? `M${p} ${a}V${b}` : `M${a} ${p}H${b}`;
      el(parent, "path", { d, stroke: colour, "stroke-width": width, class: "gridline" });
    };
    if (look.showgrid !== false) {
      for (const v of axis.ticks.vals) line(v, look.gridcolor || "#eee", 1);
    }
    const [lo, hi] = [Math.min(...axis.range), Math.max(...axis.range)];
    if (look.zeroline !== false && lo <= 0 && hi >= 0) {
      line(0, look.zerolinecolor || "#444", look.zerolinewidth || 1);
    }
  }
}

// Shapes in data coordinates: paths (the token chips' boxes, below the traces), lines and
// rectangles (a patch grid, above them).
function drawShapes(parent, axes, shapes) {
  const x = axes.xaxis, y = axes.yaxis;
  for (const shape of shapes) {
    if (!x || !y) return;
    const line = shape.line || {};
    el(parent, "path", {
      d: shapePath(shape, x, y), fill: shape.fillcolor || "none",
      stroke: line.color || (shape.type === "path" ? "none" : "#444"),  // as before: paths none
      "stroke-width": line.width ?? 2, class: "shape",
    });
  }
}

// A shape's SVG path in pixels: a path's own numbers (x, y, x, y, ...), or a line's or a
// rectangle's corners.
function shapePath(shape, x, y) {
  if (shape.type === "path") {
    let n = 0;
    return shape.path.replace(/-?[\d.]+(?:e[-+]?\d+)?/gi, (number) => {
      n += 1;
      return String(n % 2 ? x.toPx(Number(number)) : y.toPx(Number(number)));
    });
  }
  const [x0, x1, y0, y1] = [x.toPx(shape.x0), x.toPx(shape.x1), y.toPx(shape.y0),
                            y.toPx(shape.y1)];
  return shape.type === "line" ? `M${x0} ${y0}L${x1} ${y1}` : `M${x0} ${y0}H${x1}V${y1}H${x0}Z`;
}

// Bars from 0 on integer positions, their text just beyond their ends.
function drawBars(parent, trace, x, y, layout, font) {
  const flat = trace.orientation === "h";
  const [along, value] = flat ? [y, x] : [x, y];
  const spots = flat ? trace.y : trace.x, values = flat ? trace.x : trace.y;
  const half = (1 - (layout.bargap ?? 0.2)) / 2;
  const colour = (trace.marker || {}).color || "#636efa";
  const group = el(parent, "g", { class: "bars" });
  spots.forEach((spot, i) => {
    const v = values[i];
    if (typeof v !== "number") return;
    const a0 = along.toPx(spot - half), a1 = along.toPx(spot + half);
    const v0 = value.toPx(0), v1 = value.toPx(v);
    const fill = Array.isArray(colour) ? colour[i] : colour;
    const [rx, ry, rw, rh] = flat
      ? [Math.min(v0, v1), Math.min(a0, a1), Math.abs(v1 - v0), Math.abs(a1 - a0)]
      : [Math.min(a0, a1), Math.min(v0, v1), Math.abs(a1 - a0), Math.abs(v1 - v0)];
    el(group, "rect", { x: rx, y: ry, width: rw, height: rh, fill, class: "point" });
    const word = (trace.text || [])[i];
    if (word === undefined || word === null || word === "") return;
    const mid = (a0 + a1) / 2, out = v >= 0 ? 1 : -1;
    const attrs = flat
      ? { x: v1 + 4 * out, y: mid, "text-anchor": out > 0 ? "start" : "end",
          "dominant-baseline": "central" }
      : { x: mid, y: v1 - 4 * out, "text-anchor": "middle",
          "dominant-baseline": out > 0 ? "text-after-edge" : "hanging" };
    el(group, "text", { ...attrs, "font-size": font, fill: "#444", class: "bartext" },
       plainLines(word).join(" "));
  });
}

// Text placed at points (a scatter trace in "text" mode).
function drawTexts(parent, trace, x, y, font) {
  const style = trace.textfont || {};
  const group = el(parent, "g", { class: "textpoint", "text-anchor": "middle",
                                  "dominant-baseline": "central" });
  trace.x.forEach((px, i) => {
    el(group, "text", {
      x: x.toPx(px), y: y.toPx(trace.y[i]), "font-size": style.size || font,
      fill: style.color || "#444",
    }, plainLines(trace.text[i]).join(" "));
  });
}

// What the pointer is over in a bar chart or among placed texts (null: nothing).
function pointHover(trace, xa, ya, x, y) {
  const template = trace.hovertemplate || "%{x}, %{y}";
  const cell = (i) => fillTemplate(template, {
    x: trace.x[i], y: trace.y[i], text: (trace.text || [])[i],
    customdata: (trace.customdata || [])[i],
  });
  if (trace.kind === "bar") {
    const flat = trace.orientation === "h";
    const spot = Math.round((flat ? ya : xa).fromPx(flat ? y : x));
    const i = (flat ? trace.y : trace.x).indexOf(spot);
    return i < 0 ? null : cell(i);
  }
  let best = -1, nearest = 40 * 40;  // px², as Plotly's hover distance
  trace.x.forEach((px, i) => {
    const d = (xa.toPx(px) - x) ** 2 + (ya.toPx(trace.y[i]) - y) ** 2;
    if (d < nearest) [best, nearest] = [i, d];
  });
  return best < 0 ? null : cell(best);
}

// The hover box: the cell under the pointer, said as the figure's hover template says it.
function hoverText(gd, x, y) {
  // The last trace first: a heatmap drawn over another (attention over an image) answers.
  for (const { trace, x: xa, y: ya } of [...(gd.glassboxPanels || [])].reverse()) {
    if (trace.kind !== "heatmap") {
      const said = pointHover(trace, xa, ya, x, y);
      if (said !== null) return said;
      continue;
    }
    const inX = x >= Math.min(...xa.px) && x <= Math.max(...xa.px);
    const inY = y >= Math.min(...ya.px) && y <= Math.max(...ya.px);
    if (!inX || !inY) continue;
    const col = Math.round(xa.fromPx(x)), row = Math.round(ya.fromPx(y));
    const c = col - (trace.x || [0])[0], r = row - (trace.y || [0])[0];
    if (r < 0 || r >= trace.z.length || c < 0 || c >= trace.z[0].length) return null;
    const z = trace.z[r][c];
    if (typeof z !== "number" && trace.hoverongaps === false) return null;
    const cell = {
      x: col, y: row, z, text: (trace.text || [])[r]?.[c],
      customdata: (trace.customdata || [])[r]?.[c],
    };
    const template = trace.hovertemplate || "x: %{x}<br>y: %{y}<br>z: %{z}";
    return fillTemplate(template, cell);
  }
  return null;
}

function hoverBox(gd) {
  let box = gd.querySelector(".gb-hover");
  if (!box) {
    box = document.createElement("div");
    box.className = "gb-hover hovertext";
    box.setAttribute("role", "tooltip");
    const font = ((gd.layout || {}).hoverlabel || {}).font || (gd.layout || {}).font || {};
    box.style.fontFamily = font.family || "";
    gd.appendChild(box);
  }
  return box;
}

function onPointer(event) {
  const gd = event.currentTarget;
  const svg = gd.querySelector(".main-svg");
  if (!svg) return;
  const rect = svg.getBoundingClientRect();
  const x = event.clientX - rect.left, y = event.clientY - rect.top;
  const text = hoverText(gd, x, y);
  const box = hoverBox(gd);
  if (text === null) { box.style.display = "none"; return; }
  box.textContent = text;
  box.style.display = "block";
  const right = x + 14 + box.offsetWidth > rect.width;
  box.style.left = `${right ? x - 14 - box.offsetWidth : x + 14}px`;
  box.style.top = `${Math.max(0, y - box.offsetHeight - 8)}px`;
}

function onLeave(event) {
  const box = event.currentTarget.querySelector(".gb-hover");
  if (box) box.style.display = "none";
}

// ---- the toolbar: a PNG of the chart (at the config's scale) and full screen.
const CAMERA = "M4 7h3l2-3h6l2 3h3v12H4z M12 9a4 4 0 1 0 0.01 0z";
const CORNERS = "M2 2h7v2H4v5H2z M22 2v7h-2V4h-5V2z M2 22v-7h2v5h5v2z M22 22h-7v-2h5v-5h2z";

function savePng(gd, config) {
  const svg = gd.querySelector(".main-svg");
  const scale = (config.toImageButtonOptions || {}).scale || 1;
  const url = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(svg)],
                                           { type: "image/svg+xml" }));
  const image = new Image();
  image.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = svg.width.baseVal.value * scale;
    canvas.height = svg.height.baseVal.value * scale;
    const ctx = canvas.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.scale(scale, scale);
    ctx.drawImage(image, 0, 0);
    URL.revokeObjectURL(url);
    canvas.toBlob((blob) => {
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = pngName(config);
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    });
  };
  image.src = url;
}

function toolbar(gd, config, fullScreenTitle) {
  const words = ((config.locales || {})[config.locale] || {}).dictionary || {};
  const bar = document.createElement("div");
  bar.className = "gb-modebar";
  const buttons = [
    ["Download plot as a PNG", CAMERA, () => savePng(gd, config)],
    [fullScreenTitle || "Full screen", CORNERS, () => {
      if (document.fullscreenElement) document.exitFullscreen();
      else gd.requestFullscreen();
    }],
  ];
  for (const [title, path, click] of buttons) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "modebar-btn";
    button.dataset.title = words[title] || title;
    button.title = button.dataset.title;
    button.setAttribute("aria-label", button.dataset.title);
    const icon = el(button, "svg", { viewBox: "0 0 24 24", width: 16, height: 16 });
    el(icon, "path", { d: path, fill: "currentColor", "fill-rule": "evenodd" });
    button.addEventListener("click", click);
    bar.appendChild(button);
  }
  return bar;
}

// Draw (or draw again) `figure` in `gd`: the SVG and the toolbar replace the old ones.
function renderGrid(gd, figure, config, fullScreenTitle) {
  gd.glassboxGrid = { figure, config, fullScreenTitle };
  gd.classList.add("js-plotly-plot");  // read as a Plotly chart (gd.layout, gd._fullLayout)
  const svg = drawGrid(gd, figure, config);
  const old = gd.querySelector(".main-svg");
  if (old) old.replaceWith(svg);
  else gd.appendChild(svg);
  gd.querySelector(".gb-modebar")?.remove();
  gd.appendChild(toolbar(gd, config, fullScreenTitle));
  if (!gd.glassboxPointer) {
    gd.glassboxPointer = true;
    gd.addEventListener("mousemove", onPointer);
    gd.addEventListener("mouseleave", onLeave);
    gd.addEventListener("fullscreenchange", () => {
      const drawn = gd.glassboxGrid;
      if (drawn) renderGrid(gd, drawn.figure, drawn.config, drawn.fullScreenTitle);
    });
  }
}

// Leave grid mode (the same element now gets a figure Plotly draws).
function clearGrid(gd) {
  if (!gd.glassboxGrid) return;
  gd.glassboxGrid = null;
  gd.glassboxPanels = null;
  for (const node of gd.querySelectorAll(".main-svg, .gb-modebar, .gb-hover")) node.remove();
  gd.classList.remove("js-plotly-plot");
  delete gd.layout;
  delete gd.data;
  delete gd._fullLayout;
}

// The hover box and the toolbar's look: here, once a page (CSS given to the chart element
// travels with every chart's message).
const STYLE = `
.gb-chart .gb-hover { position: absolute; display: none; pointer-events: none; z-index: 2;
  white-space: pre; padding: 4px 8px; background: #fff; color: #222; border: 1px solid #888;
  border-radius: 3px; font-size: 14px; }
.gb-chart .gb-modebar { position: absolute; top: 2px; right: 2px; display: flex; gap: 2px;
  opacity: 0; transition: opacity 0.2s; }
.gb-chart:hover .gb-modebar, .gb-chart .gb-modebar:focus-within { opacity: 1; }
.gb-chart .gb-modebar .modebar-btn { border: 0; background: transparent; color: #999;
  padding: 4px; cursor: pointer; line-height: 0; }
.gb-chart .gb-modebar .modebar-btn:hover { color: #444; }
`;
const style = document.createElement("style");
style.textContent = STYLE;
document.head.appendChild(style);

window.glassboxSvgChart = { gridFigure, renderGrid, clearGrid };
})();
