// One promise per page: the first element that needs Plotly adds its <script>; a failed
// load is forgotten, so the next chart tries again. chart.py fills in the address.
function loadPlotly() {
  if (!window.__glassboxPlotly) {
    window.__glassboxPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "PLOTLY_URL";
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__glassboxPlotly = null;
        reject(new Error("the chart library did not load"));
      };
      document.head.appendChild(script);
    });
  }
  return window.__glassboxPlotly;
}
