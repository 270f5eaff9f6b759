// The match page client, the same for every game: the WebSocket with versioned views and
// resync, the countdown, and the step-through replay of a finished match.  The game's own
// script registers `Arena.games[slug] = {render(view, ctx)}` to draw the table.
'use strict';

const Arena = {
  games: {},
  viewHooks: [],  // functions called with every live view message (e.g. static/arena/away.js)

  start(data) {
    this.data = data;
    this.version = 0;
    this.board = document.getElementById('board');
    this.actions = document.getElementById('actions');
    this.logEl = document.getElementById('log');
    this.deadline = null;
    this.request = null;
    this.lastMsg = null;
    this.answered = null;  // {version, action}: sent, waiting for the next view
    this.forced = {};      // "game/round" -> forced answers that ended that round
    this.retry = 500;
    if (data.status === 'finished' || data.status === 'aborted') {
      this.startReplay();
    }
    this.connect();
    setInterval(() => this.tick(), 250);
  },

  game() { return this.games[this.data.game]; },

  connect() {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${proto}://${location.host}/ws/matches/${this.data.match}/`);
    this.ws = ws;
    ws.onopen = () => { this.retry = 500; this.setConn(true); };
    ws.onmessage = (e) => this.onMessage(JSON.parse(e.data));
    ws.onclose = () => {
      this.setConn(false);
      if (this.data.status === 'running') {  // reconnect; the server resends the newest view
        setTimeout(() => this.connect(), this.retry);
        this.retry = Math.min(this.retry * 2, 8000);
      }
    };
  },

  setConn(ok) {
    document.body.classList.toggle('disconnected', !ok && this.data.status === 'running');
  },

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  },

  onMessage(msg) {
    if (msg.type === 'match.view') {
      // Each view is the whole table.  A gap in versions is the server skipping views this tab
      // had no time for (it sends only a few ahead of the last ack): the newest is enough.
      if (msg.version > this.version) {  // else a duplicate or an older view
        this.version = msg.version;
        this.showView(msg);
      }
    } else if (msg.type === 'match.final') {
      if (this.data.status === 'running') { location.reload(); return; }
      this.finalMsg = msg;
      if (!this.replay) this.showView({view: msg.view, happenings: [], answers: null, final: true});
    } else if (msg.type === 'match.error') {
      this.flash(msg.message);
      if (this.answered) {  // the move was refused: offer the controls again
        this.answered = null;
        this.rerender();
      }
    } else if (msg.type === 'table.update') {
      if (this.data.status === 'running' && this.lastMsg && this.lastMsg.view && this.lastMsg.view.terminal) {
        setTimeout(() => location.reload(), 1500);
      } else if (this.data.status !== 'running') {
        location.reload();
      }
      return;
    }
    // Rendered (synchronously, above): acknowledge it, or the server stops sending views.
    this.ackSoon();
  },

  // The server sends at most a few views (ARENA_WS_UNACKED_VIEWS, 32 by default) ahead of the
  // last ack.  Acknowledging every ACK_EVERY-th view, and anything else ACK_DELAY_MS after it
  // came, keeps it sending without a wait, at an eighth of the messages: with 500 spectators
  // an ack per view each took the server's whole core (benchmarks/spectator_fanout.py).
  ackSoon() {
    const ACK_EVERY = 8, ACK_DELAY_MS = 250;
    clearTimeout(this.ackTimer);
    if (this.version - (this.acked || 0) >= ACK_EVERY) this.sendAck();
    else this.ackTimer = setTimeout(() => this.sendAck(), ACK_DELAY_MS);
  },

  sendAck() {
    clearTimeout(this.ackTimer);
    this.acked = this.version;
    this.send({type: 'ack', version: this.version});
  },

  showView(msg) {
    this.lastMsg = msg;
    (msg.names || []).forEach((name, i) => { if (this.data.seats[i] && name) this.data.seats[i].name = name; });
    this.away = msg.away || [];  // people whose seat is played for them (left, or away)
    this.viewHooks.forEach((hook) => hook(msg));
    this.request = msg.request || null;
    if (!this.request || !this.answered || this.answered.version !== this.request.version) this.answered = null;
    this.remember(msg);
    if (this.request && msg.ts) {
      // Server clock to local clock: what was left when the server sent it.
      const left = this.request.deadline - msg.ts;
      this.deadline = performance.now() + left * 1000;
    } else {
      this.deadline = null;
    }
    // Other people's deadlines, for the countdown next to whoever is thinking.
    this.deadlines = {};
    for (const [seat, deadline] of Object.entries(msg.deadlines || {})) {
      if (msg.ts) this.deadlines[seat] = performance.now() + (deadline - msg.ts) * 1000;
    }
    this.rerender();
    if (msg.view && msg.view.terminal && this.data.status === 'running') {
      this.flash('The match is over. Opening the replay…');
    }
    this.tick();
  },

  rerender() {
    const msg = this.lastMsg;
    if (!msg || this.replay) return;
    this.game().render(msg.view, this.context(msg));
    this.tick();
  },

  // Forced answers (timeouts, malformed replies) end a round; keep them with that round so
  // the round's outcome can say why, for as long as it is shown.
  remember(msg) {
    const forced = (msg.answers || []).filter((a) => a.forced);
    if (!forced.length) return;
    for (const h of msg.happenings || []) {
      if (h.game_number !== undefined && h.round_number !== undefined) this.forced[`${h.game_number}/${h.round_number}`] = forced;
    }
  },

  context(msg) {
    return {
      seats: this.data.seats,
      mySeat: this.data.my_seat,
      request: this.request,
      happenings: msg.happenings || [],
      answers: msg.answers || [],
      board: this.board,
      actions: this.actions,
      log: this.logEl,
      replay: !!this.replay,
      result: this.data.result,
      answered: this.answered,
      act: (action) => {
        if (!this.request || this.answered) return;
        if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
          this.flash('Not connected: your move was not sent. Reconnecting…');
          return;
        }
        this.send({type: 'act', version: this.request.version, action});
        this.answered = {version: this.request.version, action};
        this.rerender();
      },
      forcedFor: (gameNumber, roundNumber) => this.forced[`${gameNumber}/${roundNumber}`] || [],
      // A countdown for another seat's person, or null when they have no open request.
      othersCountdown: (seat) => (!this.replay && this.deadlines && this.deadlines[seat] !== undefined
        ? el('span', {class: 'countdown', 'data-seat': String(seat), title: 'seconds left'}) : null),
      name: (seat) => ((this.data.seats[seat] && this.data.seats[seat].name) || `Seat ${seat + 1}`)
        + (!this.replay && (this.away || []).includes(seat) ? ' (away)' : ''),
    };
  },

  // Every element with class "countdown" shows the seconds left on the open request; one
  // with data-seat shows that person's (a spectator watching someone think).
  tick() {
    const now = performance.now();
    document.querySelectorAll('.countdown').forEach((el) => {
      const seat = el.dataset.seat;
      const deadline = seat === undefined ? (this.answered ? null : this.deadline) : (this.deadlines || {})[seat];
      if (deadline === null || deadline === undefined) { el.textContent = ''; return; }
      const left = Math.max(0, (deadline - now) / 1000);
      el.textContent = `${Math.ceil(left)} s`;
      el.classList.toggle('urgent', left < 5);
    });
  },

  flash(text) {
    let el = document.getElementById('flash');
    if (!el) {
      el = document.createElement('div');
      el.id = 'flash';
      el.className = 'flash';
      document.body.appendChild(el);
    }
    el.textContent = text;
    el.hidden = false;
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => { el.hidden = true; }, 4000);
  },

  // --- replay -------------------------------------------------------------------------------
  async startReplay() {
    this.replay = {frames: [], pos: 0, total: null, timer: null};
    const bar = document.getElementById('replay');
    bar.hidden = false;
    bar.addEventListener('click', (e) => {
      const button = e.target.closest('button');
      if (button) this.replayStep(button.dataset.step);
    });
    document.addEventListener('keydown', (e) => {
      if (e.target.closest && e.target.closest('input, select, textarea')) return;
      const what = {ArrowRight: 'next', ArrowLeft: 'prev', Home: 'first', End: 'last'}[e.key];
      if (what) { e.preventDefault(); this.replayStep(what); }
    });
    await this.loadFrames(0);
    if (!this.replay.frames.length) {
      document.getElementById('replay-pos').textContent = 'Replay not available';
      return;
    }
    this.replayShow(this.replay.total ? this.replay.total - 1 : 0);
  },

  async loadFrames(start) {
    const r = this.replay;
    const resp = await fetch(`/api/matches/${this.data.match}/replay/?start=${start}&count=500`);
    if (!resp.ok) return;
    const body = await resp.json();
    body.frames.forEach((f, i) => { r.frames[start + i] = f; this.remember(f); });
    if (body.total !== null) r.total = body.total;
  },

  async replayShow(pos) {
    const r = this.replay;
    const last = r.total !== null ? r.total - 1 : r.frames.length;
    pos = Math.max(0, Math.min(pos, last));
    if (!r.frames[pos]) await this.loadFrames(Math.floor(pos / 500) * 500);
    if (!r.frames[pos]) return;
    r.pos = pos;
    const frame = r.frames[pos];
    document.getElementById('replay-pos').textContent =
      `Step ${pos} of ${r.total !== null ? r.total - 1 : '…'}`;
    const bar = document.getElementById('replay');
    bar.querySelectorAll('[data-step=first], [data-step=prev]').forEach((b) => { b.disabled = pos === 0; });
    bar.querySelectorAll('[data-step=next], [data-step=last]').forEach((b) => { b.disabled = r.total !== null && pos >= r.total - 1; });
    this.request = null;
    this.deadline = null;
    this.game().render(frame.view, {...this.context({happenings: frame.happenings, answers: frame.answers}),
                                    replay: true, request: null, step: pos,
                                    previous: pos > 0 ? (r.frames[pos - 1] || null) : null});
  },

  replayStep(what) {
    const r = this.replay;
    const playButton = document.querySelector('#replay [data-step=play]');
    const stop = () => { clearInterval(r.timer); r.timer = null; playButton.textContent = 'Play'; };
    if (what === 'play') {
      if (r.timer) { stop(); return; }
      if (r.total !== null && r.pos >= r.total - 1) this.replayShow(0);
      playButton.textContent = 'Pause';
      r.timer = setInterval(() => {
        if (r.total !== null && r.pos >= r.total - 1) { stop(); return; }
        this.replayShow(r.pos + 1);
      }, 900);
      return;
    }
    if (r.timer) stop();
    const to = {first: 0, prev: r.pos - 1, next: r.pos + 1, last: r.total !== null ? r.total - 1 : r.pos + 500}[what];
    this.replayShow(to);
  },
};

// Small helpers for the game scripts.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return node;
}
