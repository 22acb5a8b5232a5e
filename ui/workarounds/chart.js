// The chart element (chart.py): one figure, updated in place, following its column's
// width. A figure svg_chart.js can draw (heatmaps, bars, the token chips) is drawn by it; any
// other with the cartesian bundle that load_plotly.js loads.
// Four corner brackets, in a 1000 x 1000 box (y down).
const FULL_SCREEN_ICON = {
  width: 1000, height: 1000,
  path: "M80 80h320v110H190v210H80z M920 80v320H810V190H600V80z " +
        "M80 920V600h110v210h210v110z M920 920H600V810h210V600h110z",
};

function fullScreenButton(Plotly, title) {
  return {
    name: "fullscreen", title: title || "Full screen", icon: FULL_SCREEN_ICON,
    click: (gd) => {
      if (document.fullscreenElement) { document.exitFullscreen(); return; }
      const height = gd.layout.height;
      const resize = () => {
        if (document.fullscreenElement === gd) {
          Plotly.relayout(gd, { width: window.innerWidth, height: window.innerHeight });
        } else {
          gd.removeEventListener("fullscreenchange", resize);
          Plotly.relayout(gd, { width: null, height: height });
        }
      };
      gd.addEventListener("fullscreenchange", resize);
      gd.requestFullscreen();
    },
  };
}

// Charts that arrive together are drawn together, in one animation frame, on a page that
// has settled: not one at a time between the renders of the page's other elements. A
// chart given new data before its turn is drawn once, with the newest data.
const pending = new Map();
const DRAW_FAILED = "This chart could not be drawn ({error}): reload the page.";
function forget(gd) {  // the element left the page
  gd.glassboxResize?.disconnect();
  gd.glassboxResize = null;
  gd.glassboxText = null;
  if (window.Plotly && !gd.glassboxGrid) window.Plotly.purge(gd);
}
function failed(gd, error) {
  gd.glassboxText = null;  // drawn again when sent again
  const said = gd.glassboxDrawFailed || DRAW_FAILED;  // in the page's language (ui/figures.py)
  gd.textContent = said.replace("{error}", error.message);
}
function drawSoon(gd, draw) {
  pending.set(gd, draw);
  if (pending.size > 1) return;
  requestAnimationFrame(() => {
    const jobs = [...pending.entries()];
    pending.clear();
    for (const [target, job] of jobs) {
      try { Promise.resolve(job()).catch((error) => failed(target, error)); }
      catch (error) { failed(target, error); }
    }
  });
}

export default function ({ data, parentElement }) {
  if (!data) { loadSvgChart(); loadPlotly(); return; }
  const text = new TextDecoder().decode(data);
  const drawn = parentElement.querySelector(".gb-chart");
  // The same figure sent again (a rerun that changed another chart): nothing to draw.
  if (drawn && drawn.glassboxText === text) return () => forget(drawn);
  const { figure, config } = JSON.parse(text);
  // The element's own words, in the page's language; the rest is Plotly's config.
  const { fullScreenTitle, drawFailed, ...plotlyConfig } = config;
  let gd = parentElement.querySelector(".gb-chart");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "gb-chart";
    parentElement.appendChild(gd);
  }
  gd.glassboxDrawFailed = drawFailed;
  gd.glassboxText = text;
  gd.style.minHeight = (figure.layout.height || 450) + "px";
  if (!gd.glassboxResize) {
    // The chart follows its column's width (the sidebar opened or closed, the window
    // resized): a new width only, not the height the first draw settles.
    // Off the page (React moving or replacing the element) it has no width: left alone
    // until it is back (Plotly refuses to resize a chart that is not displayed).
    gd.glassboxResize = new ResizeObserver(() => {
      const drawn = gd._fullLayout;
      const moved = drawn && Math.abs(gd.clientWidth - drawn.width) > 1;
      if (!moved || !gd.isConnected || !gd.clientWidth) return;
      if (document.fullscreenElement === gd) return;
      const grid = gd.glassboxGrid;
      if (grid) window.glassboxSvgChart.renderGrid(gd, grid.figure, grid.config, grid.fullScreenTitle);
      else if (window.Plotly) window.Plotly.Plots.resize(gd).catch(() => {});  // gone meanwhile
    });
    gd.glassboxResize.observe(gd);
  }
  loadSvgChart()
    .then((svgChart) => {
      const grid = svgChart.gridFigure(figure);
      if (grid) {
        // Heatmaps, bars or chips: drawn by svg_chart.js, without waiting for Plotly.
        drawSoon(gd, () => {
          if (!gd.glassboxGrid && window.Plotly) window.Plotly.purge(gd);
          svgChart.renderGrid(gd, grid, plotlyConfig, fullScreenTitle);
        });
        return null;
      }
      return loadPlotly().then((Plotly) => drawSoon(gd, () => {
        svgChart.clearGrid(gd);
        return Plotly.react(gd, figure.data, figure.layout, {
          ...plotlyConfig, showSendToCloud: false,  // offline: no upload button
          modeBarButtonsToAdd: [fullScreenButton(Plotly, fullScreenTitle)],
        });
      }));
    })
    .catch((error) => failed(gd, error));
  return () => forget(gd);
}
