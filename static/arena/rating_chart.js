// A registered bot's page and a person's page (templates/arena/_identity_sections.html): draws
// the rating after each rated match with Chart.js (served from our own static files,
// vendor/chartjs/chart.umd.js).
// Data: the JSON in <script id="rating-data">, a list of {match, mu, sigma, ordinal, finished}
// oldest first.  The same numbers are in the table under the chart.
(function () {
  "use strict";
  var canvas = document.getElementById("rating-chart");
  var source = document.getElementById("rating-data");
  if (!canvas || !source || typeof Chart === "undefined") return;
  var points = JSON.parse(source.textContent);
  if (!points.length) return;
  var style = getComputedStyle(document.documentElement);
  var accent = style.getPropertyValue("--accent").trim() || "#1f6f5c";
  var muted = style.getPropertyValue("--muted").trim() || "#5d6673";
  var labels = points.map(function (p) { return "#" + p.match; });
  new Chart(canvas, {
    type: "line",
    data: {
      labels: labels,
      datasets: [
        {label: "μ", data: points.map(function (p) { return p.mu; }), borderColor: accent,
         backgroundColor: accent, pointRadius: points.length > 60 ? 0 : 3, tension: 0},
        {label: "μ − 3σ", data: points.map(function (p) { return p.ordinal; }), borderColor: muted,
         backgroundColor: muted, borderDash: [6, 4], pointRadius: points.length > 60 ? 0 : 2, tension: 0}
      ]
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: {mode: "index", intersect: false},
      scales: {
        x: {title: {display: true, text: "rated match (its number)"}, ticks: {autoSkip: true, maxRotation: 0}},
        y: {title: {display: true, text: "rating"}}
      },
      plugins: {
        legend: {labels: {usePointStyle: true, pointStyle: "line"}},
        tooltip: {callbacks: {
          title: function (items) { return "match " + labels[items[0].dataIndex]; },
          afterBody: function (items) { return "σ " + points[items[0].dataIndex].sigma.toFixed(2); }
        }}
      }
    }
  });
})();
