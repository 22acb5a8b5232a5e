// One promise per script and page: the first element that needs Plotly (or svg_chart.js) adds
// its <script>. A load that fails (a replica that died or hung, nginx restarting, a network
// blip) is tried again, 5 more times over about 15 s, before the charts say so; a failed
// load is then forgotten, so the next chart tries again. chart.py fills in the addresses.
function loadScript(url, name) {
  const loads = (window.__glassboxScripts = window.__glassboxScripts || {});
  if (!loads[url]) {
    loads[url] = new Promise((resolve, reject) => {
      let tries = 0;
      const attempt = () => {
        const script = document.createElement("script");
        script.src = url;
        script.onload = () => resolve(window[name]);
        script.onerror = () => {
          script.remove();
          tries += 1;
          if (tries < 6) {
            setTimeout(attempt, 500 * 2 ** (tries - 1));  // 0.5, 1, 2, 4, 8 s
            return;
          }
          loads[url] = null;
          reject(new Error("the chart library did not load"));
        };
        document.head.appendChild(script);
      };
      attempt();
    });
  }
  return loads[url];
}
const loadPlotly = () => loadScript("PLOTLY_URL", "Plotly");
const loadSvgChart = () => loadScript("SVG_CHART_URL", "glassboxSvgChart");
