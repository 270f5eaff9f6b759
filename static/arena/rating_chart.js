// A registered bot's page and a person's page (templates/arena/_identity_sections.html): draws
// the rating after each rated match with Chart.js (served from our own static files,
// vendor/chartjs/chart.umd.js).
// Data: the JSON in <script id="rating-data">, a list of {match, mu, sigma, ordinal, finished}
// oldest first.  The same numbers are in the table under the chart.
// With a pairing open, also the distribution of its score differences as bars: the JSON in
// <script id="pairing-data">, a list of {label, count} lowest difference first (the matches
// are listed under it).
(function () {
  "use strict";
  if (typeof Chart === "undefined") return;
  var style = getComputedStyle(document.documentElement);
  var accent = style.getPropertyValue("--accent").trim() || "#1f6f5c";
  var muted = style.getPropertyValue("--muted").trim() || "#5d6673";

  var bars = document.getElementById("pairing-chart");
  var barData = document.getElementById("pairing-data");
  if (bars && barData) {
    var counts = JSON.parse(barData.textContent);
    new Chart(bars, {
      type: "bar",
      data: {labels: counts.map(function (b) { return b.label; }),
             datasets: [{label: "matches", data: counts.map(function (b) { return b.count; }),
                         backgroundColor: accent}]},
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        scales: {x: {title: {display: true, text: "score difference"}, ticks: {maxRotation: 0, autoSkip: true}},
                 y: {title: {display: true, text: "matches"}, beginAtZero: true, ticks: {precision: 0}}},
        plugins: {legend: {display: false}}
      }
    });
  }

  var canvas = document.getElementById("rating-chart");
  var source = document.getElementById("rating-data");
  if (!canvas || !source) return;
  var points = JSON.parse(source.textContent);
  if (!points.length) return;
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
