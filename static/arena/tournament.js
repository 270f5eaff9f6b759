// A tournament's live page (templates/arena/tournament.html): draws the progress bar, the
// standings, the chart of points over games done, the cross-table and the matches from the
// JSON in <script id="tournament-data"> (games/arena/web/tournaments.py, snapshot()), then
// keeps them current from /ws/tournaments/<id>/ (TournamentConsumer): each
// {"type": "tournament.standings", "tournament": ..., "you": [...]} is drawn (``you``: the
// person's own tables of it, for "Your match is ready"), then acknowledged with
// {"type": "ack"} (the server sends the next one only then).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tournament-data").textContent);
  var OVER = {finished: true, cancelled: true};
  var STATUS = {scheduled: "scheduled", running: "running", finished: "finished", cancelled: "cancelled"};
  var PALETTE = ["#1f6f5c", "#b3261e", "#2c5fa8", "#c88a12", "#7a3e9d", "#3d8b37", "#d2691e", "#5d6673",
                 "#008b8b", "#a0522d", "#6b8e23", "#c71585"];
  var chart = null;
  var MOVEMENTS = {mitchell: true, howell: true};  // bridge pair events, scored across the field
  var defaultHead = null;

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function num(x, digits) { return x === null || x === undefined ? "–" : x.toFixed(digits); }
  function points(x) { return String(Math.round(x * 100) / 100); }
  function duration(s) {
    if (s < 90) return Math.max(1, Math.round(s)) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }

  function drawProgress(t) {
    var p = t.progress, total = Math.max(p.planned, 1);
    var bar = $("t-bar");
    bar.setAttribute("aria-valuemax", String(p.planned));
    bar.setAttribute("aria-valuenow", String(p.done));
    bar.querySelector(".done").style.width = (100 * p.done / total) + "%";
    bar.querySelector(".running").style.width = (100 * Math.min(p.running, p.planned - p.done) / total) + "%";
    var words = p.done + " of " + p.planned + " games done · " + p.running + " running · " + p.left + " left";
    if (t.status === "scheduled") {
      words = "Not started yet · " + t.standings.length + " entrant" + (t.standings.length === 1 ? "" : "s") +
        (t.entry_open ? " so far" : "");
    }
    if (t.status === "running" && p.eta_s !== null) {
      var at = new Date(Date.now() + p.eta_s * 1000);
      words += " · finishes in about " + duration(p.eta_s) + " (" + at.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}) + ")";
    }
    if (t.format === "swiss" && t.rounds) words += " · round " + t.round + " of " + t.rounds;
    $("t-progress").textContent = words;
    bar.dataset.done = String(p.done);
  }

  // A bridge pair event (Mitchell, Howell): its own columns; a Mitchell's N-S and E-W fields
  // one after the other, each under its heading, each with its winner.
  function drawPairStandings(t) {
    var mp = t.scoring === "matchpoints", digits = mp ? 1 : 2;
    $("t-statistic").textContent = "Each board is scored against every other table that played it: " +
      (mp ? "2 matchpoints for each score beaten, 1 for each equal one, as a percentage of the top (Law 78A)."
          : "the difference to each other table's score in IMPs, averaged over the comparisons (Law 78B).") +
      " Sorted by the " + t.statistic + "; the interval: where it lies with 95% confidence (Student t over " +
      "the pair's boards). A forfeited board: " + (mp ? "60% to the pair that came, 40% to the absent one."
                                                       : "+3 IMPs to the pair that came, -3 to the absent one.") +
      (t.format === "mitchell" ? " A Mitchell has two fields, N-S and E-W: each has its winner." : "");
    var head = el("tr");
    // Short headings (their words in the title): on a phone the statistic shows beside the name.
    [["#", "num"], ["Pair", ""], [mp ? "MP" : "IMPs", "num", mp ? "matchpoints in all" : "IMPs in all"],
     [mp ? "% per board" : "IMPs per board", "num"], ["95% interval", "num interval"], ["Rounds", "num"], ["Boards", "num"],
     ["Forfeits", "num"], ["Forced", "num", "moves the server made for it: no valid answer in time"]]
      .forEach(function (c) { var th = el("th", c[0], c[1]); if (c[2]) th.title = c[2]; head.appendChild(th); });
    $("t-standings-head").replaceChildren(head);
    var body = $("t-standings"), field = null;
    body.replaceChildren();
    t.standings.forEach(function (r) {
      if (r.field && r.field !== field) {
        field = r.field;
        var group = el("tr", null, "field-head"), th = el("th", field + " field");
        th.colSpan = 9;
        th.scope = "colgroup";
        group.appendChild(th);
        body.appendChild(group);
      }
      var tr = standingRow(r, digits);
      tr.appendChild(el("td", r.games, "num"));
      tr.appendChild(el("td", r.boards, "num"));
      tr.appendChild(el("td", r.forfeits, "num"));
      tr.appendChild(el("td", r.forced, "num"));
      body.appendChild(tr);
    });
  }

  // A standings row's first cells: rank, name (linked to the bot's page), points, then the
  // statistic and its interval next to the points (on a phone they show first).
  function standingRow(r, digits) {
    var tr = el("tr");
    tr.appendChild(el("td", r.rank, "num"));
    var name = el("td", null, "name");
    if (r.bot_url) { var a = el("a", r.name); a.href = r.bot_url; name.appendChild(a); } else name.textContent = r.name;
    tr.appendChild(name);
    tr.appendChild(el("td", points(r.points), "num"));
    tr.appendChild(el("td", num(r.stat, digits), "num"));
    tr.appendChild(interval(r, digits));
    return tr;
  }

  // "low to high", which on a phone breaks before "to" (arena.css), so that the interval
  // fits beside the name instead of being cut at the screen's edge.
  function interval(r, digits) {
    var td = el("td", null, "num interval");
    if (r.low === null) { td.textContent = "–"; return td; }
    td.append(el("span", num(r.low, digits)), " ", el("span", "to " + num(r.high, digits)));
    return td;
  }

  function drawStandings(t) {
    if (defaultHead === null) defaultHead = $("t-standings-head").cloneNode(true).firstElementChild;
    if (MOVEMENTS[t.format]) { drawPairStandings(t); return; }
    $("t-standings-head").replaceChildren(defaultHead.cloneNode(true));
    $("t-stat-head").textContent = t.statistic.charAt(0).toUpperCase() + t.statistic.slice(1);
    $("t-statistic").textContent = "Sorted by " + (t.format === "duplicate" ? t.statistic : "points") +
      ". The interval: where the " + t.statistic + " lies with 95% confidence" +
      (t.format === "duplicate" ? " (Student t over the deals)." : " (Wilson).");
    var body = $("t-standings");
    body.replaceChildren();
    var digits = t.format === "duplicate" ? 2 : 3;
    t.standings.forEach(function (r) {
      var tr = standingRow(r, digits);
      tr.appendChild(el("td", r.games, "num"));
      tr.appendChild(el("td", r.wins + "-" + r.draws + "-" + r.losses, "num"));
      tr.appendChild(el("td", r.forfeits, "num"));
      tr.appendChild(el("td", r.forced, "num"));
      body.appendChild(tr);
    });
  }

  function drawCross(t) {
    var order = t.standings;  // rows and columns in the standings' order
    var pairs = MOVEMENTS[t.format], mp = t.scoring === "matchpoints";
    $("t-cross-hint").textContent = pairs
      ? "The row's " + (mp ? "percentage" : "IMPs") + " per board against the column's pair, over their boards."
      : "The row's points against the column's, over their games.";
    var rows = {};
    t.cross.forEach(function (c) { rows[c.entrant] = c.against; });
    var head = el("tr");
    head.appendChild(el("th", ""));
    order.forEach(function (r, i) { var th = el("th", String(i + 1), "num"); th.title = r.name; head.appendChild(th); });
    $("t-cross-head").replaceChildren(head);
    var body = $("t-cross");
    body.replaceChildren();
    order.forEach(function (r, i) {
      var tr = el("tr");
      tr.appendChild(el("th", (i + 1) + ". " + r.name, "name"));
      order.forEach(function (o) {
        var cell = (rows[r.entrant] || {})[String(o.entrant)];
        var shown = !cell ? "·" : pairs ? num(cell.points, mp ? 0 : 1) + " (" + cell.games + ")"
                                        : points(cell.points) + "/" + cell.games;
        var td = el("td", o.entrant === r.entrant ? "" : shown, "num");
        if (o.entrant === r.entrant) td.className += " self";
        else if (cell) td.dataset.games = String(cell.games);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function drawChart(t) {
    var empty = !t.history.length;
    $("t-chart-empty").hidden = !empty;
    $("t-chart").parentNode.hidden = empty;
    if (empty || typeof Chart === "undefined") return;
    var labels = t.history.map(function (h) { return h.done; });
    var byEntrant = t.standings.slice().sort(function (a, b) { return a.entrant - b.entrant; });
    var datasets = byEntrant.map(function (r) {
      var color = PALETTE[r.entrant % PALETTE.length];
      return {label: r.name, data: t.history.map(function (h) { return h.points[String(r.entrant)] || 0; }),
              borderColor: color, backgroundColor: color, pointRadius: labels.length > 40 ? 0 : 2, tension: 0};
    });
    if (chart) {
      chart.data.labels = labels;
      chart.data.datasets = datasets;
      chart.update("none");
      return;
    }
    chart = new Chart($("t-chart"), {
      type: "line", data: {labels: labels, datasets: datasets},
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        interaction: {mode: "index", intersect: false},
        scales: {x: {title: {display: true, text: "games done"}, ticks: {autoSkip: true, maxRotation: 0}},
                 y: {title: {display: true, text: MOVEMENTS[t.format] ? (t.scoring === "matchpoints" ? "matchpoints" : "IMPs") : "points"},
                     beginAtZero: !MOVEMENTS[t.format] || t.scoring === "matchpoints"}},
        plugins: {legend: {labels: {usePointStyle: true, pointStyle: "line", boxWidth: 24}}}
      }
    });
  }

  function drawMatches(t) {
    $("t-matches-count").textContent = t.matches_count === 0 ? "None yet." :
      t.matches_count > t.matches.length ? "The newest " + t.matches.length + " of " + t.matches_count + ", newest first." :
      t.matches_count + " match" + (t.matches_count === 1 ? "" : "es") + ", newest first.";
    var body = $("t-matches");
    body.replaceChildren();
    t.matches.forEach(function (m) {
      var tr = el("tr");
      var cell = el("td"), a = el("a", "#" + m.id);
      a.href = m.url;
      cell.appendChild(a);
      tr.appendChild(cell);
      tr.appendChild(el("td", m.round, "num"));
      tr.appendChild(el("td", m.entrants.join(" vs "), "name"));
      tr.appendChild(el("td", m.result, "result-" + m.status));
      body.appendChild(tr);
    });
  }

  // "Your match is ready — play": the person's own tables (tournaments.your_tables), with
  // the time their seat is forfeited if they do not come.
  var you = data.you || [];
  function drawYou() {
    var box = $("t-you");
    if (!box) return;
    box.replaceChildren();
    you.forEach(function (m) {
      var p = el("p"), a = el("a", m.waiting ? "Play" : "Back to your table", "button");
      a.href = m.url;
      if (m.waiting) {
        p.appendChild(el("b", "Your match is ready (round " + m.round + ")"));
        p.appendChild(a);
        var at = new Date(m.forfeit_at);
        p.appendChild(el("span", "Take your seat by " + at.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"}) +
                         ", or the match is forfeited.", "hint"));
      } else {
        p.appendChild(el("b", m.running ? "Your match is on (round " + m.round + ")" : "You are seated (round " + m.round + "): waiting for the others"));
        p.appendChild(a);
      }
      box.appendChild(p);
    });
    box.hidden = !you.length;
    // A tab in the background says so in its title too.
    var waiting = you.some(function (m) { return m.waiting; });
    document.title = (waiting ? "▶ Your match is ready · " : "") + baseTitle;
  }
  var baseTitle = document.title;

  function draw(t) {
    data = t;
    if ($("t-entry-forms")) {
      $("t-entry-forms").hidden = !t.entry_open;
      // Entry closed (the start): the "Take part" card goes with its forms; an entrant's stays.
      var card = $("t-entry");
      if (card.dataset.entrant !== "yes") card.hidden = !t.entry_open && !card.querySelector("[role=alert]");
    }
    if ($("t-starts")) $("t-starts").hidden = t.status !== "scheduled";
    var status = $("t-status");
    status.textContent = STATUS[t.status] || t.status;
    status.className = "status status-" + t.status;
    status.dataset.status = t.status;
    $("t-note").textContent = t.note;
    $("t-note").hidden = !t.note;
    if (OVER[t.status] && $("t-cancel")) $("t-cancel").hidden = true;
    drawProgress(t);
    drawStandings(t);
    drawCross(t);
    drawChart(t);
    drawMatches(t);
  }

  // --- live ------------------------------------------------------------------------------
  var retry = 1000;
  function connect() {
    if (OVER[data.status]) { $("t-live").textContent = ""; return; }
    var ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host +
                           "/ws/tournaments/" + data.id + "/");
    ws.onopen = function () { retry = 1000; $("t-live").textContent = "Live: the page follows the tournament."; };
    ws.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type !== "tournament.standings") return;
      draw(message.tournament);
      you = message.you || [];
      drawYou();
      ws.send(JSON.stringify({type: "ack"}));
      if (OVER[data.status]) { $("t-live").textContent = ""; ws.close(); }
    };
    ws.onclose = function () {
      if (OVER[data.status]) return;
      $("t-live").textContent = "Connection lost: trying again…";
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 30000);
    };
  }
  draw(data);
  drawYou();
  connect();
})();
